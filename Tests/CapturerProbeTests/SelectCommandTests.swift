import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe select", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct SelectCommandTests {
    @Test("select on a recorded C920 dump: MJPG 1280x720 at 30 fps, decided by frame rate")
    func recordedC920() async throws {
        let path = Probe.fixture("devices/uvc-c920.txt")
        let json = try await Probe.run(["select", "--formats", path, "--target", "1280x720", "--json"]).json()
        #expect(json["schemaVersion"] as? Int == 1)
        #expect(json["pixelFormat"] as? String == "MJPG")
        #expect(json["width"] as? Int == 1280)
        #expect(json["height"] as? Int == 720)
        #expect(json["fps"] as? Double == 30)
        #expect(json["decidingRule"] as? String == "frameRate")
        let device = try #require(json["device"] as? [String: Any])
        #expect(device["id"] as? String == "recorded:uvc-c920.txt")
        let explanation = try #require(json["explanation"] as? [String])
        #expect(explanation.contains { $0.hasPrefix("frame rate: 30 > ") })
    }

    @Test("--fps-limit and --prefer change the pick and the rule that decided it")
    func limitAndPreference() async throws {
        let path = Probe.fixture("devices/uvc-c920.txt")
        let limited = try await Probe.run(
            ["select", "--formats", path, "--target", "1280x720", "--fps-limit", "10", "--json"]).json()
        #expect(limited["fps"] as? Double == 10)
        #expect(limited["decidingRule"] as? String == "preference")
        #expect(limited["pixelFormat"] as? String == "YUYV")
        let preferred = try await Probe.run(
            [
                "select", "--formats", path, "--target", "1280x720", "--fps-limit", "10", "--prefer", "MJPG,YUYV",
                "--json",
            ]).json()
        #expect(preferred["pixelFormat"] as? String == "MJPG")
    }

    @Test("select on the synthetic camera agrees with CaptureRules", arguments: ["640x480", "1000x600", "4000x3000"])
    func synthetic(target: String) async throws {
        let json = try await Probe.run(["select", "--device", "synthetic", "--target", target, "--json"]).json()
        let dimensions = try #require(Dimensions(parsing: target))
        let expected = try #require(
            CaptureRules.selectFormat(
                from: SyntheticCamera.device().formats, for: FormatRequest(target: dimensions)
            ) { _ in true })
        #expect(json["pixelFormat"] as? String == expected.pixelFormat.fourCC)
        #expect(json["width"] as? Int == expected.dimensions.width)
        #expect(json["height"] as? Int == expected.dimensions.height)
        #expect(json["fps"] as? Double == expected.fps)
        #expect(json["decidingRule"] as? String == expected.decidingRule.rawValue)
        #expect(json["explanation"] as? [String] == expected.explanation)
    }

    @Test("select text output names the device, the pick and each rule")
    func text() async throws {
        let path = Probe.fixture("devices/vivid.txt")
        let result = try await Probe.run(["select", "--formats", path, "--target", "640x480"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("device:        recorded:vivid.txt (vivid)"))
        #expect(result.stdout.contains("selected:      NV12 640x480 at 25 fps"))
        #expect(result.stdout.contains("deciding rule: preference"))
        #expect(result.stdout.contains("  - preference: NV12 ranks before YU12"))
    }

    @Test("select reads a dump from standard input")
    func standardInput() async throws {
        let text = try Fixtures.text("devices/stepwise-bcm2835.txt")
        let result = try await Probe.run(
            ["select", "--formats", "-", "--target", "1000x700", "--json"], input: Data(text.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        let device = try Fixtures.device("stepwise-bcm2835.txt")
        #expect(json["width"] as? Int != nil)
        let width = try #require(json["width"] as? Int), height = try #require(json["height"] as? Int)
        let pixelFormat = try #require((json["pixelFormat"] as? String).flatMap { PixelFormat(fourCC: $0) })
        #expect(
            device.formats.contains {
                $0.pixelFormat == pixelFormat
                    && $0.size.contains(Dimensions(width: width, height: height))
            })
    }
}
