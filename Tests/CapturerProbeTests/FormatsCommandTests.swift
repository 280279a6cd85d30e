import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe list and formats", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct FormatsCommandTests {
    @Test("list (also the default) shows the synthetic camera and marks the default")
    func list() async throws {
        for arguments in [[], ["list"]] {
            let result = try await Probe.run(arguments)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty)
            #expect(result.stdout.contains("ID"))
            #expect(result.stdout.contains("synthetic"))
            #expect(result.stdout.contains("Synthetic camera (front)"))
        }
    }

    @Test("list --json: schemaVersion, devices with id, name, driver, position and one default")
    func listJSON() async throws {
        let json = try await Probe.run(["list", "--json"]).json()
        #expect(json["schemaVersion"] as? Int == 1)
        let devices = try #require(json["devices"] as? [[String: Any]])
        let synthetic = try #require(devices.first { $0["id"] as? String == "synthetic" })
        #expect(synthetic["name"] as? String == "Synthetic camera (front)")
        #expect(synthetic["driver"] as? String == "synthetic")
        #expect(synthetic["position"] as? String == "front")
        #expect(devices.filter { $0["isDefault"] as? Bool == true }.count == 1)
        let defaultID = try #require(json["defaultDevice"] as? String)
        #expect(devices.contains { $0["id"] as? String == defaultID })
        let realCameras = devices.filter { $0["kind"] as? String == "v4l2" }
        if realCameras.isEmpty { #expect(defaultID == "synthetic") }
    }

    @Test("formats --formats reproduces every recorded dump byte for byte", arguments: try Fixtures.deviceFiles())
    func recordedDumpRoundTrip(file: String) async throws {
        let path = Probe.fixture("devices/" + file)
        let result = try await Probe.run(["formats", "--formats", path])
        #expect(result.status == 0, "\(result.stderr)")
        // The old `Index/Pixel Format/Name` layout is printed in the current layout, as today's v4l2-ctl does.
        let expected =
            file == "uvc-c920-old-layout.txt"
            ? try Fixtures.text("devices/uvc-c920.txt") : try Fixtures.text("devices/" + file)
        #expect(result.stdout == expected)
    }

    @Test("formats --formats - reads the dump from standard input")
    func standardInput() async throws {
        let text = try Fixtures.text("devices/vivid.txt")
        let result = try await Probe.run(["formats", "--formats", "-"], input: Data(text.utf8))
        #expect(result.status == 0)
        #expect(result.stdout == text)
    }

    @Test("formats --json carries the same entries as the dump")
    func formatsJSON() async throws {
        let path = Probe.fixture("devices/uvc-c920.txt")
        let json = try await Probe.run(["formats", "--formats", path, "--json"]).json()
        #expect(json["schemaVersion"] as? Int == 1)
        #expect(json["bufferType"] as? String == "Video Capture")
        let entries = try #require(json["pixelFormats"] as? [[String: Any]])
        let text = try Fixtures.text("devices/uvc-c920.txt")
        #expect(entries.count == text.components(separatedBy: "]: '").count - 1)
        #expect(entries.map { $0["pixelFormat"] as? String } == ["YUYV", "MJPG"])
        #expect((entries[1]["flags"] as? [String]) == ["compressed"])
        let sizes = try #require(entries[0]["sizes"] as? [[String: Any]])
        let sizeLines = text.split(separator: "\n").prefix { !$0.contains("[1]:") }.filter { $0.contains("Size:") }
        #expect(sizes.count == sizeLines.count)
        #expect(sizes.first?["width"] as? Int == 640)
        let rates = try #require(sizes.first?["frameRates"] as? [String: Any])
        let intervals = try #require(rates["intervals"] as? [[String: Any]])
        #expect(intervals.first?["fps"] as? Double == 30)
    }

    @Test("formats on the synthetic camera uses the v4l2-ctl layout for its formats")
    func synthetic() async throws {
        let result = try await Probe.run(["formats", "--device", "synthetic"])
        #expect(result.status == 0)
        let device = SyntheticCamera.device()
        #expect(result.stdout == V4L2FormatList(device).render())
        #expect(
            result.stdout.hasPrefix("ioctl: VIDIOC_ENUM_FMT\n\tType: Video Capture\n\n\t[0]: 'NV12' (Y/UV 4:2:0)\n"))
    }
}
