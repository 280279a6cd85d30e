import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

/// The default configuration is WebRTC's real-time one: vpxenc given the same settings as flags must produce the very
/// same IVF file from the same frames (same libvpx, same bitstream).
@Suite("VP8Encoder matches vpxenc with WebRTC's real-time flags", .tags(.interop), .selectedByTags)
struct VpxencParityTests {
    static let haveTools = TestMedia.which("vpxenc") != nil && TestMedia.which("ffmpeg") != nil

    @Test(
        "same IVF bytes as vpxenc --rt --cpu-used=… --end-usage=cbr …",
        .enabled(if: haveTools, "vpxenc/ffmpeg missing"),
        arguments: [
            (Dimensions(width: 640, height: 480), OutputPixelFormat.i420, 800),
            (Dimensions(width: 640, height: 480), .nv12, 2000),
            (Dimensions(width: 320, height: 240), .nv12, 300),
        ])
    func parity(size: Dimensions, layout: OutputPixelFormat, kbps: Int) async throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = 30
        let clip = dir.appendingPathComponent("clip.yuv")
        let made = try await TestMedia.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30,noise=alls=6:allf=t",
                "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-f", "rawvideo", clip.path,
            ])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        let raw = [UInt8](try Data(contentsOf: clip))
        let frameBytes = size.area * 3 / 2
        try #require(raw.count == frames * frameBytes)

        let configuration = VP8EncoderConfiguration(targetBitrateKbps: kbps, framerate: 30)
        let encoder = try VP8Encoder(configuration: configuration)
        let ours = dir.appendingPathComponent("ours.ivf")
        let writer = try IVFWriter(path: ours.path, dimensions: size, timebase: .frameIndex(fps: 30))
        for index in 0..<frames {
            let buffer = VideoFrameBuffer(format: layout, width: size.width, height: size.height)
            let start = index * frameBytes
            let planes = [
                Array(raw[start..<start + size.area]),
                Array(raw[start + size.area..<start + size.area * 5 / 4]),
                Array(raw[start + size.area * 5 / 4..<start + frameBytes]),
            ]
            TestMedia.fill(buffer, fromI420: planes)
            let frame = VideoFrame(buffer: buffer, rotation: .degrees0, timestampNs: UInt64(index) * 33_333_333)
            if let out = try encoder.encode(frame) { try writer.write(out) }
        }
        try writer.close()

        let theirs = dir.appendingPathComponent("vpxenc.ivf")
        let vpxenc = try await TestMedia.run(
            "vpxenc",
            [
                "--codec=vp8", "--rt", "--cpu-used=\(configuration.resolvedCpuUsed(for: size))", "--threads=1",
                "--end-usage=cbr", "--lag-in-frames=0", "--static-thresh=1", "--min-q=2", "--max-q=56",
                "--undershoot-pct=100", "--overshoot-pct=15", "--buf-sz=1000", "--buf-initial-sz=500",
                "--buf-optimal-sz=600", "--target-bitrate=\(kbps)", "--noise-sensitivity=4", "--token-parts=0",
                "--drop-frame=30", "--resize-allowed=0", "--kf-max-dist=3000", "--max-intra-rate=900",
                "--timebase=1/30", "--fps=30/1", "--i420", "-w", "\(size.width)", "-h", "\(size.height)", "--ivf",
                "-o", theirs.path, clip.path,
            ])
        try #require(vpxenc.status == 0, "vpxenc: \(vpxenc.stderr)")
        let same = try Data(contentsOf: ours) == Data(contentsOf: theirs)
        #expect(same, "our IVF differs from vpxenc's at \(size) \(layout) \(kbps) kbit/s")
        #expect(try IVFReader(path: ours.path).readAll().count == frames)
    }

    @Test("vpxenc present (or skipped loudly)")
    func toolsNote() {
        if !Self.haveTools {
            print("SKIPPED vpxenc parity tests: vpxenc and/or ffmpeg not installed (Scripts/install-deps --test)")
        }
    }
}
