import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe snapshot", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct SnapshotCommandTests {
    /// A Y4M file of `frames` frames in BT.601 limited-range red (Y 81, Cb 90, Cr 240).
    static func redY4M(in directory: URL, width: Int = 64, height: Int = 48, frames: Int = 2) throws -> String {
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 C420jpeg\n".utf8)
        for _ in 0..<frames {
            bytes += Array("FRAME\n".utf8)
            bytes += [UInt8](repeating: 81, count: width * height)
            bytes += [UInt8](repeating: 90, count: width * height / 4)
            bytes += [UInt8](repeating: 240, count: width * height / 4)
        }
        let path = directory.appendingPathComponent("red.y4m").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("PPM: P6 RGB, BT.601 limited-range red becomes (255, 0, 0)")
    func ppmRed() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.redY4M(in: directory)
        let output = directory.appendingPathComponent("red.ppm").path
        let result = try await Probe.run(["snapshot", "-d", source, "--target", "64x48", "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let header = Array("P6\n64 48\n255\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        let pixels = bytes.dropFirst(header.count)
        #expect(pixels.count == 64 * 48 * 3)
        #expect(Array(pixels) == [UInt8](repeating: 0, count: 64 * 48).flatMap { _ in [255, 0, 0] as [UInt8] })
    }

    @Test("PNG decodes (ffmpeg) to exactly the PPM's pixels")
    func pngMatchesPPM() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("snap.png").path
        let ppm = directory.appendingPathComponent("snap.ppm").path
        let json = try await Probe.run(["snapshot", "-d", "synthetic", "--target", "320x240", "-o", png, "--json"])
            .json()
        #expect(json["schemaVersion"] as? Int == 1)
        #expect(json["fileFormat"] as? String == "png")
        #expect(json["width"] as? Int == 320)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        // Deflated by zlib, not stored: the test pattern compresses far below its raw RGB size.
        #expect(bytes.count < 320 * 240 * 3 / 10)
        guard let ffmpeg = ExternalProcess.which("ffmpeg") else {
            print("SKIPPED: ffmpeg not installed; the PNG was checked by its signature only")
            return
        }
        let decoded = try await ExternalProcess.run(
            ffmpeg, ["-v", "error", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        #expect(decoded.status == 0)
        #expect(decoded.stdout.count == 320 * 240 * 3)
        // The same content from a Y4M source, written both ways, must agree pixel for pixel.
        let source = try SnapshotCommandTests.redY4M(in: directory)
        let redPNG = directory.appendingPathComponent("red.png").path
        #expect(try await Probe.run(["snapshot", "-d", source, "--target", "64x48", "-o", redPNG]).status == 0)
        #expect(try await Probe.run(["snapshot", "-d", source, "--target", "64x48", "-o", ppm]).status == 0)
        let redDecoded = try await ExternalProcess.run(
            ffmpeg, ["-v", "error", "-i", redPNG, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let ppmBytes = try Data(contentsOf: URL(fileURLWithPath: ppm))
        #expect(redDecoded.stdout == ppmBytes.suffix(64 * 48 * 3))
    }

    @Test("Y4M: one C420jpeg frame with the captured planes")
    func y4m() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.redY4M(in: directory)
        let output = directory.appendingPathComponent("one.y4m").path
        let result = try await Probe.run(["snapshot", "-d", source, "--target", "64x48", "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let header = Array("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        let planes = Array(bytes.dropFirst(header.count))
        #expect(
            planes == [UInt8](repeating: 81, count: 64 * 48) + [UInt8](repeating: 90, count: 64 * 12)
                + [UInt8](repeating: 240, count: 64 * 12))
    }
}
