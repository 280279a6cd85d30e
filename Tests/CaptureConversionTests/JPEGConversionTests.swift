import CaptureConversion
import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// MJPEG decoding against FFmpeg's decoder, and bad JPEGs as clean errors.
@Suite("FrameConverter: MJPEG")
struct JPEGConversionTests {
    /// Makes a `testsrc2` JPEG with FFmpeg in `pixelFormat` (`yuvj420p`, `yuvj422p`) and returns its bytes.
    private static func ffmpegJPEG(
        _ size: Dimensions, pixelFormat: String, in directory: URL
    ) async throws -> (URL, [UInt8]) {
        let url = directory.appendingPathComponent("testsrc2-\(size)-\(pixelFormat).jpg")
        try await ffmpegStill("testsrc2", size, pixelFormat: pixelFormat, to: url)
        return (url, Array(try Data(contentsOf: url)))
    }

    /// FFmpeg's decoding of `jpeg` as raw planes in `pixelFormat` (no range conversion for `yuvj*`).
    static func ffmpegDecode(_ jpeg: URL, pixelFormat: String) async throws -> [UInt8] {
        let ffmpeg = try #require(ExternalTools.ffmpeg)
        let raw = jpeg.deletingPathExtension().appendingPathExtension("\(pixelFormat).yuv")
        try await ExternalTools.run(
            ffmpeg, ["-v", "error", "-y", "-i", jpeg.path, "-f", "rawvideo", "-pix_fmt", pixelFormat, raw.path])
        return Array(try Data(contentsOf: raw))
    }

    /// Expects PSNR ≥ `minimum` dB for each plane of `image` against `reference`.
    static func expectClose(_ image: I420Image, _ reference: I420Image, minimum: Double, _ label: String) {
        for (name, a, b) in [("Y", image.y, reference.y), ("U", image.u, reference.u), ("V", image.v, reference.v)] {
            precondition(a.count == b.count && !a.isEmpty)
            let value = FrameQuality.psnr(a, b)
            print("\(label) \(name) PSNR \(value) dB")
            #expect(value >= minimum, "\(label) plane \(name): \(value) dB")
        }
    }

    @Test(
        "4:2:0 JPEG decodes like FFmpeg (PSNR ≥ 40 dB), NV12 and I420",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"),
        arguments: [
            Dimensions(width: 640, height: 480), Dimensions(width: 641, height: 479), Dimensions(width: 33, height: 17),
        ])
    func decodes420(_ size: Dimensions) async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, jpeg) = try await Self.ffmpegJPEG(size, pixelFormat: "yuvj420p", in: directory)
        let raw = try await Self.ffmpegDecode(url, pixelFormat: "yuvj420p")
        let (w, h) = (size.width, size.height)
        let (cw, ch) = ((w + 1) / 2, (h + 1) / 2)
        try #require(raw.count == w * h + 2 * cw * ch)
        let reference = I420Image(
            width: w, height: h, y: Array(raw[0..<w * h]), u: Array(raw[w * h..<w * h + cw * ch]),
            v: Array(raw[(w * h + cw * ch)...]))
        for format in [PixelFormat.mjpg, .jpeg] {
            for output in OutputPixelFormat.allCases {
                let image = I420Image(try convert(jpeg, format, width: w, height: h, output: output))
                Self.expectClose(image, reference, minimum: 40, "\(format) \(size) → \(output)")
            }
        }
    }

    @Test(
        "UVC-style 4:2:2 JPEG (Y 2x1, chroma 1x1) decodes like FFmpeg with chroma rows averaged",
        .enabled(if: ExternalTools.ffmpeg != nil && ExternalTools.cjpeg != nil, "ffmpeg or cjpeg is not installed"))
    func decodes422() async throws {
        let ffmpeg = try #require(ExternalTools.ffmpeg), cjpeg = try #require(ExternalTools.cjpeg)
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (w, h) = (640, 480)
        let ppm = directory.appendingPathComponent("testsrc2.ppm")
        try await ExternalTools.run(
            ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(w)x\(h)", "-frames:v", "1", ppm.path])
        let url = directory.appendingPathComponent("uvc422.jpg")
        try await ExternalTools.run(cjpeg, ["-sample", "2x1", "-quality", "90", ppm.path], output: url)
        let jpeg = Array(try Data(contentsOf: url))
        let raw = try await Self.ffmpegDecode(url, pixelFormat: "yuvj422p")
        let cw = w / 2
        try #require(raw.count == w * h + 2 * cw * h)
        // 4:2:2 → 4:2:0 by averaging each pair of chroma rows (what libyuv's I422ToI420 does).
        func halveRows(_ plane: ArraySlice<UInt8>) -> [UInt8] {
            let rows = Array(plane)
            var out: [UInt8] = []
            for row in 0..<h / 2 {
                for x in 0..<cw {
                    let top = Int(rows[2 * row * cw + x]), bottom = Int(rows[(2 * row + 1) * cw + x])
                    out.append(UInt8((top + bottom + 1) / 2))
                }
            }
            return out
        }
        let reference = I420Image(
            width: w, height: h, y: Array(raw[0..<w * h]), u: halveRows(raw[w * h..<w * h + cw * h]),
            v: halveRows(raw[(w * h + cw * h)...]))
        for output in OutputPixelFormat.allCases {
            let image = I420Image(try convert(jpeg, .mjpg, width: w, height: h, output: output))
            Self.expectClose(image, reference, minimum: 40, "4:2:2 2x1 → \(output)")
        }
    }

    @Test(
        "truncated, corrupted and mis-sized JPEGs are errors or decode, never a crash",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"))
    func badJPEGs() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (w, h) = (320, 240)
        let (_, jpeg) = try await Self.ffmpegJPEG(
            Dimensions(width: w, height: h), pixelFormat: "yuvj420p", in: directory)
        let buffer = VideoFrameBuffer(format: .i420, width: w, height: h)
        // Truncated anywhere (no EOI): always an error.
        for cut in [1, 2, 3, 4, 20, 100, 600, jpeg.count / 2, jpeg.count - 3, jpeg.count - 1] {
            let error = #expect(throws: CaptureError.self, "cut at \(cut)") {
                try convert(Array(jpeg[0..<cut]), .mjpg, width: w, height: h, into: buffer)
            }
            #expect(error?.code == .conversionFailed)
        }
        // Wrong size for the stream: an error before decoding.
        let other = VideoFrameBuffer(format: .nv12, width: 160, height: 120)
        let mismatch = #expect(throws: CaptureError.self) {
            try convert(jpeg, .mjpg, width: 160, height: 120, into: other)
        }
        #expect(mismatch?.code == .conversionFailed)
        // Random bytes overwritten anywhere (headers included): decodes with artefacts or fails, never crashes.
        var failures = 0
        for seed in 0..<300 {
            do throws(CaptureError) {
                try convert(corrupted(jpeg, seed: UInt64(seed)), .mjpg, width: w, height: h, into: buffer)
            } catch {
                #expect(error.code == .conversionFailed)
                failures += 1
            }
        }
        print("corrupted JPEGs: \(failures) of 300 refused, the rest decoded with artefacts")
        // Garbage between SOI and EOI markers.
        for seed in 0..<100 {
            var garbage = pseudoRandomBytes(jpeg.count, seed: 1000 + UInt64(seed))
            garbage[0] = 0xFF
            garbage[1] = 0xD8
            garbage[garbage.count - 2] = 0xFF
            garbage[garbage.count - 1] = 0xD9
            let error = #expect(throws: CaptureError.self) {
                try convert(garbage, .mjpg, width: w, height: h, into: buffer)
            }
            #expect(error?.code == .conversionFailed)
        }
    }

    /// The JPEG without its DHT (Huffman table) segments, as many UVC cameras send MJPEG.
    private static func strippingHuffmanTables(_ jpeg: [UInt8]) throws -> [UInt8] {
        var out = Array(jpeg[0..<2])
        var index = 2
        while index + 4 <= jpeg.count {
            try #require(jpeg[index] == 0xFF, "marker expected at \(index)")
            let marker = jpeg[index + 1]
            if marker == 0xDA { return out + jpeg[index...] }  // Start of scan: the rest is entropy-coded data.
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker != 0xC4 { out += jpeg[index..<index + 2 + length] }
            index += 2 + length
        }
        Issue.record("no start-of-scan marker")
        return out
    }

    @Test(
        "MJPEG without Huffman tables (as UVC cameras send it) decodes with the standard tables",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"))
    func missingHuffmanTables() async throws {
        let ffmpeg = try #require(ExternalTools.ffmpeg)
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("standard-huffman.jpg")
        try await ExternalTools.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x480", "-frames:v", "1", "-pix_fmt",
                "yuvj420p",
                "-huffman", "default", url.path,
            ])
        let jpeg = Array(try Data(contentsOf: url))
        let stripped = try Self.strippingHuffmanTables(jpeg)
        #expect(stripped.count < jpeg.count)
        for output in OutputPixelFormat.allCases {
            let full = I420Image(try convert(jpeg, .mjpg, width: 640, height: 480, output: output))
            let bare = I420Image(try convert(stripped, .mjpg, width: 640, height: 480, output: output))
            #expect(bare.mismatch(full) == nil, "\(output)")
        }
    }

    @Test("bytes that are not a JPEG are an error")
    func notJPEG() {
        for bytes in [
            [UInt8](repeating: 0, count: 1000), [0xFF, 0xD8], [0xFF, 0xD8, 0xFF, 0xD9],
            pseudoRandomBytes(5000, seed: 3),
        ] {
            let error = #expect(throws: CaptureError.self) {
                try convert(bytes, .mjpg, width: 64, height: 48, output: .nv12)
            }
            #expect(error?.code == .conversionFailed)
        }
    }
}
