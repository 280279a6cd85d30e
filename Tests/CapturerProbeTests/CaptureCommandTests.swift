import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe capture", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct CaptureCommandTests {
    @Test("capture --json on the synthetic camera: counts, rate, rotation, bit rate and loopback PSNR")
    func syntheticJSON() async throws {
        let result = try await Probe.run(
            ["capture", "-d", "synthetic", "--target", "320x240", "--frames", "12", "--unpaced", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["schemaVersion"] as? Int == 1)
        let captured = try #require(json["framesCaptured"] as? Int)
        let encoded = try #require(json["framesEncoded"] as? Int)
        #expect(captured >= 12)
        #expect(encoded + (json["framesDroppedByEncoder"] as? Int ?? -1) == 12)
        #expect(encoded >= 1)
        #expect(json["framesDecoded"] as? Int == encoded)
        #expect(json["psnrFrames"] as? Int == encoded)
        #expect(try #require(json["psnr"] as? Double) > 30)
        #expect(try #require(json["fps"] as? Double) > 0)
        #expect(json["rotation"] as? Int == 0)
        #expect(json["pixelFormat"] as? String == "NV12")
        #expect(json["width"] as? Int == 320)
        #expect(json["keyFrames"] as? Int ?? 0 >= 1)
        #expect(try #require(json["bitrateKbps"] as? Double) > 0)
        for field in ["latencyMs", "deliveryLatencyMs"] {
            let latency = try #require(json[field] as? [String: Any])
            let values = ["p50", "p90", "p99", "p999", "max"].compactMap { latency[$0] as? Double }
            #expect(values.count == 5 && values == values.sorted(), "\(field): \(latency)")
            #expect(latency["count"] as? Int == (field == "latencyMs" ? encoded : 12), "\(field): \(latency)")
        }
        #expect(try #require(json["peakRSSKiB"] as? Int) > 0)
        #expect(json["jitterMs"] is Double)
    }

    @Test(
        "--orientation and --position set the rotation carried on the frames (WebRTC's table)",
        arguments: [
            ("synthetic", "portrait", 90), ("synthetic", "portraitUpsideDown", 270),
            ("synthetic", "landscapeLeft", 180), ("synthetic:back", "landscapeLeft", 0),
            ("synthetic:back", "landscapeRight", 180), ("synthetic", "faceUp", 0),
        ])
    func rotation(device: String, orientation: String, degrees: Int) async throws {
        let json = try await Probe.run(
            [
                "capture", "-d", device, "--target", "320x240", "--frames", "3", "--unpaced", "--orientation",
                orientation, "--json",
            ]).json()
        #expect(json["rotation"] as? Int == degrees)
        #expect(json["orientation"] as? String == orientation)
    }

    @Test("--output writes an IVF file that vpxdec decodes to as many frames as were encoded")
    func ivfOutput() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ivf = directory.appendingPathComponent("out.ivf").path
        let json = try await Probe.run(
            [
                "capture", "-d", "synthetic", "--target", "320x240", "--frames", "8", "--unpaced", "--output", ivf,
                "--bitrate", "500", "--json",
            ]).json()
        let encoded = try #require(json["framesEncoded"] as? Int)
        #expect(json["targetBitrateKbps"] as? Int == 500)
        #expect(json["output"] as? String == ivf)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: ivf)))
        #expect(Array(bytes.prefix(4)) == Array("DKIF".utf8))
        #expect(Array(bytes[8..<12]) == Array("VP80".utf8))
        let frameCount = Int(bytes[24]) | Int(bytes[25]) << 8 | Int(bytes[26]) << 16 | Int(bytes[27]) << 24
        #expect(frameCount == encoded)
        guard let vpxdec = ExternalProcess.which("vpxdec") else {
            print("SKIPPED: vpxdec not installed; the IVF file was checked by its header only")
            return
        }
        let yuv = directory.appendingPathComponent("out.yuv").path
        let decoded = try await ExternalProcess.run(vpxdec, ["--i420", "-o", yuv, ivf])
        #expect(decoded.status == 0)
        let size = try FileManager.default.attributesOfItem(atPath: yuv)[.size] as? Int
        #expect(size == encoded * 320 * 240 * 3 / 2)
    }

    @Test("capture on a recorded dump streams in the format the capturer selects")
    func recorded() async throws {
        let path = Probe.fixture("devices/uvc-c920.txt")
        let json = try await Probe.run(
            ["capture", "--formats", path, "--target", "640x480", "--frames", "4", "--unpaced", "--json"]).json()
        let device = try #require(json["device"] as? [String: Any])
        #expect(device["kind"] as? String == "recorded")
        #expect(json["width"] as? Int == 640)
        #expect(json["height"] as? Int == 480)
        #expect(json["framesEncoded"] as? Int ?? 0 >= 1)
    }

    @Test("capture --seconds stops by time; text output has every figure")
    func secondsAndText() async throws {
        let result = try await Probe.run(["capture", "-d", "synthetic", "--target", "320x240", "--seconds", "0.5"])
        #expect(result.status == 0, "\(result.stderr)")
        for label in ["device:", "format:", "frames:", "timing:", "rotation:", "VP8:", "latency:", "loopback:"] {
            #expect(result.stdout.contains(label))
        }
        #expect(result.stdout.contains("PSNR"))
        // No progress line when standard error is not a terminal.
        #expect(result.stderr.isEmpty)
    }
}
