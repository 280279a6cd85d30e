import CaptureCore
import Foundation

/// Frames, PSNR and external tools for the VP8 tests.
package enum TestMedia {
    /// A frame of a moving test pattern (gradients plus a moving bright square), in `format`.
    package static func frame(
        _ format: OutputPixelFormat, _ dimensions: Dimensions, index: Int, timestampNs: UInt64,
        rotation: VideoRotation = .degrees0
    ) -> VideoFrame {
        let i420 = patternI420(dimensions, index: index)
        let buffer = VideoFrameBuffer(format: format, width: dimensions.width, height: dimensions.height)
        fill(buffer, fromI420: i420)
        return VideoFrame(buffer: buffer, rotation: rotation, timestampNs: timestampNs, sequenceNumber: UInt64(index))
    }

    /// An I420 frame of deterministic noise, 30 fps apart: hard to compress, so a tiny bit rate makes libvpx drop frames.
    package static func noiseFrame(_ dimensions: Dimensions, index: Int) -> VideoFrame {
        let buffer = VideoFrameBuffer(format: .i420, width: dimensions.width, height: dimensions.height)
        var state = UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ 1)
        for plane in 0..<3 {
            let layout = buffer.planes[plane]
            let base = buffer.mutablePlane(plane)
            for row in 0..<layout.rows {
                for col in 0..<layout.rowBytes {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    base[row * layout.stride + col] = UInt8(truncatingIfNeeded: state >> 24)
                }
            }
        }
        return VideoFrame(buffer: buffer, rotation: .degrees270, timestampNs: UInt64(index + 1) * 33_333_333)
    }

    /// The pattern as packed I420 planes (Y, U, V).
    package static func patternI420(_ d: Dimensions, index: Int) -> [[UInt8]] {
        let cw = (d.width + 1) / 2, ch = (d.height + 1) / 2
        var y = [UInt8](repeating: 0, count: d.width * d.height)
        let square = (x: (index * 7) % max(1, d.width - 64), y: (index * 5) % max(1, d.height - 64))
        for row in 0..<d.height {
            for col in 0..<d.width {
                var v = (col + 2 * row + 3 * index) & 0xFF
                if col >= square.x && col < square.x + 64 && row >= square.y && row < square.y + 64 { v = 235 }
                y[row * d.width + col] = UInt8(v)
            }
        }
        var u = [UInt8](repeating: 0, count: cw * ch), v = u
        for row in 0..<ch {
            for col in 0..<cw {
                u[row * cw + col] = UInt8(64 + (col * 128 / max(1, cw)))
                v[row * cw + col] = UInt8(64 + (row * 128 / max(1, ch)))
            }
        }
        return [y, u, v]
    }

    /// Writes packed I420 planes into a buffer of either layout.
    package static func fill(_ buffer: VideoFrameBuffer, fromI420 planes: [[UInt8]]) {
        let w = buffer.width, h = buffer.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let yp = buffer.mutablePlane(0)
        for row in 0..<h { for col in 0..<w { yp[row * buffer.stride(0) + col] = planes[0][row * w + col] } }
        switch buffer.format {
        case .nv12:
            let uv = buffer.mutablePlane(1)
            for row in 0..<ch {
                for col in 0..<cw {
                    uv[row * buffer.stride(1) + 2 * col] = planes[1][row * cw + col]
                    uv[row * buffer.stride(1) + 2 * col + 1] = planes[2][row * cw + col]
                }
            }
        case .i420:
            for p in 1...2 {
                let dst = buffer.mutablePlane(p)
                for row in 0..<ch {
                    for col in 0..<cw { dst[row * buffer.stride(p) + col] = planes[p][row * cw + col] }
                }
            }
        }
    }

    /// PSNR in dB of `a` against `b` over the first `lumaBytes` bytes (Y) and over everything (Y, U and V); 99 dB
    /// for identical samples, as libvpx reports.
    package static func psnr(_ a: [UInt8], _ b: [UInt8], lumaBytes: Int) -> (y: Double, all: Double) {
        func value(_ range: Range<Int>) -> Double {
            let psnr = FrameQuality.psnr(squaredError: FrameQuality.squaredError(a, b, in: range), samples: range.count)
            return psnr == .infinity ? 99 : psnr
        }
        return (value(0..<lumaBytes), value(0..<min(a.count, b.count)))
    }

    /// The mean PSNR over equally long sequences of packed I420 frames.
    package static func meanPSNR(
        _ decoded: [[UInt8]], _ source: [[UInt8]], dimensions: Dimensions
    ) -> (y: Double, all: Double) {
        let pairs = zip(decoded, source).map { psnr($0, $1, lumaBytes: dimensions.area) }
        let n = Double(max(1, pairs.count))
        return (pairs.map(\.y).reduce(0, +) / n, pairs.map(\.all).reduce(0, +) / n)
    }

    /// A fresh temporary directory.
    package static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vp8-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The path of `tool` on `PATH`, or `nil`.
    package static func which(_ tool: String) -> String? { ExternalProcess.which(tool) }

    /// Whether vpxdec and ffmpeg are both installed.
    package static let haveDecoders = which("vpxdec") != nil && which("ffmpeg") != nil
    /// The reason tests needing vpxdec and ffmpeg are skipped.
    package static let decodersMissing = "vpxdec and/or ffmpeg not installed (Scripts/install-deps --test): skipping"

    /// Prints a loud skip note when vpxdec or ffmpeg is absent (call from a skipped suite's sibling test).
    package static func noteIfDecodersMissing(_ test: String) {
        if !haveDecoders { print("SKIPPED \(test): \(decodersMissing)") }
    }

    /// Runs a tool (off the cooperative pool), returning its exit status and standard error.
    @discardableResult
    package static func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, stderr: String) {
        let result = try await ExternalProcess.run(tool, arguments)
        return (result.status, result.stderrText)
    }

    /// Decodes an IVF file with vpxdec and with ffmpeg into raw I420, returning both outputs.
    /// ffmpeg's output is capped at `maxFrames` (a wrong time base must not fill the disk); `passthrough` adds
    /// `-fps_mode passthrough` (one output frame per input frame whatever the timestamps).
    package static func externalDecodes(
        of ivf: URL, in dir: URL, maxFrames: Int, passthrough: Bool = false
    ) async throws -> (vpxdec: Data, ffmpeg: Data) {
        let vpxOut = dir.appendingPathComponent("vpxdec.yuv")
        let ffOut = dir.appendingPathComponent("ffmpeg.yuv")
        let vpx = try await run("vpxdec", ["--i420", "-o", vpxOut.path, ivf.path])
        guard vpx.status == 0 else { throw ToolFailure(tool: "vpxdec", stderr: vpx.stderr) }
        let ff = try await run(
            "ffmpeg",
            ["-v", "error", "-y", "-i", ivf.path] + (passthrough ? ["-fps_mode", "passthrough"] : [])
                + ["-frames:v", "\(maxFrames)", "-f", "rawvideo", "-pix_fmt", "yuv420p", ffOut.path])
        guard ff.status == 0 else { throw ToolFailure(tool: "ffmpeg", stderr: ff.stderr) }
        return (try Data(contentsOf: vpxOut), try Data(contentsOf: ffOut))
    }

    /// Where two raw I420 streams first differ: sizes and the first differing frame, for failure messages.
    package static func firstDifference(_ a: Data, _ b: Data, _ frameBytes: Int) -> String {
        guard a != b else { return "identical" }
        let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        return "\(a.count / frameBytes) vs \(b.count / frameBytes) frames (\(a.count) vs \(b.count) bytes); "
            + "first difference in frame \(index / frameBytes) at byte \(index % frameBytes)"
    }

    /// A tool exited with a failure.
    package struct ToolFailure: Error, CustomStringConvertible {
        package var tool: String
        package var stderr: String
        package var description: String { "\(tool) failed: \(stderr)" }
    }
}
