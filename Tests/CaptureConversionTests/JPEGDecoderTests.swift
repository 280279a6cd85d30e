import CYUV
import CaptureConversion
import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// TurboJPEG decoding: every chroma sampling against FFmpeg, one ``JPEGDecoder`` reused across a stream's frames, and
/// bad frames in the middle of a stream.
@Suite("FrameConverter: MJPEG samplings and decoder reuse")
struct JPEGDecoderTests {
    /// A JPEG chroma sampling: how a test image is compressed to it and how FFmpeg decodes it.
    struct Sampling: Sendable, CustomTestStringConvertible {
        /// What makes the JPEG from an RGB picture.
        enum Encoder: Sendable {
            /// FFmpeg's MJPEG encoder with this `-pix_fmt` (its 4:2:2 samples Y 2x2, chroma 1x2).
            case ffmpeg(String)
            /// cjpeg with these options (`-sample HxV` gives luma's factors, chroma is 1x1).
            case cjpeg([String])
        }

        /// What FFmpeg's decoding is compared in.
        enum Reference: Sendable {
            /// The pixel format FFmpeg decodes the JPEG to without conversion, and the pixels one chroma sample
            /// covers across and down (`nil`: greyscale); brought to 4:2:0 by averaging.
            case planes(String, factors: (x: Int, y: Int)?)
            /// RGB converted by libyuv's `RAWToJ420`, as the decoder converts what it decodes to BGRX: FFmpeg's RGB,
            /// or for 4:4:0 and 4:1:1 libjpeg's own (`djpeg`), since FFmpeg upsamples their chroma differently (its
            /// RGB is 25–35 dB from libjpeg's on testsrc2's sharp colour edges).
            case rgb(fromLibjpeg: Bool)
        }

        let name: String
        let encoder: Encoder
        let reference: Reference

        var testDescription: String { name }

        static let all: [Sampling] = [
            Sampling(name: "4:2:0", encoder: .ffmpeg("yuvj420p"), reference: .planes("yuvj420p", factors: (2, 2))),
            Sampling(
                name: "FFmpeg's 4:2:2 (Y 2x2, chroma 1x2)", encoder: .ffmpeg("yuvj422p"),
                reference: .planes("yuvj422p", factors: (2, 1))),
            Sampling(
                name: "UVC 4:2:2 (Y 2x1, chroma 1x1)", encoder: .cjpeg(["-sample", "2x1"]),
                reference: .planes("yuvj422p", factors: (2, 1))),
            Sampling(name: "4:4:4", encoder: .ffmpeg("yuvj444p"), reference: .planes("yuvj444p", factors: (1, 1))),
            Sampling(name: "greyscale", encoder: .cjpeg(["-grayscale"]), reference: .planes("gray", factors: nil)),
            Sampling(name: "4:4:0", encoder: .cjpeg(["-sample", "1x2"]), reference: .rgb(fromLibjpeg: true)),
            Sampling(name: "4:1:1", encoder: .cjpeg(["-sample", "4x1"]), reference: .rgb(fromLibjpeg: true)),
            Sampling(
                name: "RGB (no colour transform)", encoder: .cjpeg(["-rgb"]), reference: .rgb(fromLibjpeg: false)),
        ]
    }

    static let sizes = [
        Dimensions(width: 640, height: 480), Dimensions(width: 641, height: 479), Dimensions(width: 33, height: 17),
    ]

    static let toolsPresent = ExternalTools.ffmpeg != nil && ExternalTools.cjpeg != nil && ExternalTools.djpeg != nil

    /// A PPM of the lavfi `source` at `size` (cropped in RGB, so odd sizes work).
    private static func picture(_ source: String, _ size: Dimensions, in directory: URL) async throws -> URL {
        let url = directory.appendingPathComponent("\(source)-\(size).ppm")
        try await ffmpegStill(source, size, to: url)
        return url
    }

    /// `picture` compressed by `encoder`.
    private static func jpeg(_ picture: URL, _ encoder: Sampling.Encoder) async throws -> (URL, [UInt8]) {
        let url: URL
        switch encoder {
        case .ffmpeg(let pixelFormat):
            url = picture.deletingPathExtension().appendingPathExtension("\(pixelFormat).jpg")
            try await ExternalTools.run(
                try #require(ExternalTools.ffmpeg),
                ["-v", "error", "-y", "-i", picture.path, "-pix_fmt", pixelFormat, url.path])
        case .cjpeg(let options):
            url = picture.deletingPathExtension().appendingPathExtension("\(options.joined()).jpg")
            try await ExternalTools.run(
                try #require(ExternalTools.cjpeg), options + ["-quality", "90", picture.path], output: url)
        }
        return (url, Array(try Data(contentsOf: url)))
    }

    /// A JPEG of the lavfi `source` at `size` made by `encoder`.
    private static func jpeg(
        _ source: String, _ size: Dimensions, _ encoder: Sampling.Encoder, in directory: URL
    ) async throws -> [UInt8] {
        try await jpeg(try await picture(source, size, in: directory), encoder).1
    }

    /// The RGB pixels (R, G, B) of a binary PPM's bytes.
    private static func ppmPixels(_ ppm: [UInt8]) throws -> [UInt8] {
        // "P6", width, height, maximum value, each followed by one whitespace byte (no comments from djpeg).
        var fields = 0
        var index = 0
        while fields < 4, index < ppm.count {
            while index < ppm.count, ppm[index] > 0x20 { index += 1 }
            index += 1
            fields += 1
        }
        return Array(ppm[min(index, ppm.count)...])
    }

    /// A decoding of `jpeg` as `reference` says: FFmpeg's native planes brought to 4:2:0 by averaging the chroma
    /// samples under each 2x2 block of pixels (rounded as libyuv rounds; neutral chroma for greyscale), or RGB
    /// converted by libyuv's `RAWToJ420`.
    private static func reference(
        _ jpeg: URL, _ reference: Sampling.Reference, _ size: Dimensions
    ) async throws -> I420Image {
        let (w, h) = (size.width, size.height)
        let (cw, ch) = ((w + 1) / 2, (h + 1) / 2)
        guard case .planes(let native, let factors) = reference else {
            let rgb: [UInt8]
            if case .rgb(fromLibjpeg: true) = reference {
                let ppm = jpeg.deletingPathExtension().appendingPathExtension("djpeg.ppm")
                try await ExternalTools.run(try #require(ExternalTools.djpeg), ["-pnm", jpeg.path], output: ppm)
                rgb = try Self.ppmPixels(Array(try Data(contentsOf: ppm)))
            } else {
                rgb = try await JPEGConversionTests.ffmpegDecode(jpeg, pixelFormat: "rgb24")
            }
            try #require(rgb.count == 3 * w * h)
            var y = [UInt8](repeating: 0, count: w * h)
            var u = [UInt8](repeating: 0, count: cw * ch)
            var v = u
            let result = RAWToJ420(
                rgb, Int32(3 * w), &y, Int32(w), &u, Int32(cw), &v, Int32(cw), Int32(w), Int32(h))
            try #require(result == 0)
            return I420Image(width: w, height: h, y: y, u: u, v: v)
        }
        let raw = try await JPEGConversionTests.ffmpegDecode(jpeg, pixelFormat: native)
        guard let (fx, fy) = factors else {
            try #require(raw.count == w * h)
            let neutral = [UInt8](repeating: 128, count: cw * ch)
            return I420Image(width: w, height: h, y: raw, u: neutral, v: neutral)
        }
        let (nw, nh) = ((w + fx - 1) / fx, (h + fy - 1) / fy)
        try #require(raw.count == w * h + 2 * nw * nh)
        func downsample(_ plane: ArraySlice<UInt8>) -> [UInt8] {
            let plane = Array(plane)
            var out = [UInt8](repeating: 0, count: cw * ch)
            for row in 0..<ch {
                for column in 0..<cw {
                    var sum = 0
                    var count = 0
                    for py in 2 * row..<min(2 * row + 2, h) {
                        for px in 2 * column..<min(2 * column + 2, w) {
                            sum += Int(plane[(py / fy) * nw + px / fx])
                            count += 1
                        }
                    }
                    out[row * cw + column] = UInt8((sum + count / 2) / count)
                }
            }
            return out
        }
        return I420Image(
            width: w, height: h, y: Array(raw[0..<w * h]), u: downsample(raw[w * h..<w * h + nw * nh]),
            v: downsample(raw[(w * h + nw * nh)...]))
    }

    @Test(
        "every chroma sampling and RGB decode like FFmpeg (4:4:0, 4:1:1: like djpeg) at PSNR ≥ 40 dB, NV12 and I420",
        .enabled(if: toolsPresent, "ffmpeg or cjpeg is not installed"),
        arguments: Sampling.all, sizes)
    func samplings(_ sampling: Sampling, _ size: Dimensions) async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (url, jpeg) = try await Self.jpeg(try await Self.picture("testsrc2", size, in: directory), sampling.encoder)
        let reference = try await Self.reference(url, sampling.reference, size)
        for output in OutputPixelFormat.allCases {
            let image = I420Image(try convert(jpeg, .mjpg, width: size.width, height: size.height, output: output))
            JPEGConversionTests.expectClose(image, reference, minimum: 40, "\(sampling.name) \(size) → \(output)")
        }
    }

    @Test(
        "one decoder across frames of other content, sizes and samplings decodes each as a fresh decoder does",
        .enabled(if: toolsPresent, "ffmpeg or cjpeg is not installed"))
    func reusedDecoder() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vga = Dimensions(width: 320, height: 240)
        // Scratch needs grow, shrink and grow again: 4:2:0 (none), 4:4:4, odd 4:2:2, grey, 4:4:0 (BGRX, the largest).
        let plan: [(String, Dimensions, Sampling.Encoder)] = [
            ("testsrc2", vga, .ffmpeg("yuvj420p")),
            ("smptebars", vga, .ffmpeg("yuvj420p")),
            ("mandelbrot", vga, .ffmpeg("yuvj420p")),
            ("testsrc", Dimensions(width: 640, height: 480), .ffmpeg("yuvj444p")),
            ("rgbtestsrc", Dimensions(width: 161, height: 97), .cjpeg(["-sample", "2x1"])),
            ("testsrc2", vga, .cjpeg(["-grayscale"])),
            ("smptebars", Dimensions(width: 641, height: 479), .cjpeg(["-sample", "1x2"])),
            ("testsrc2", vga, .ffmpeg("yuvj444p")),
            ("mandelbrot", Dimensions(width: 33, height: 17), .ffmpeg("yuvj422p")),
        ]
        var frames: [(label: String, size: Dimensions, bytes: [UInt8])] = []
        for (source, size, encoder) in plan {
            frames.append(
                ("\(source) \(size) \(encoder)", size, try await Self.jpeg(source, size, encoder, in: directory)))
        }
        for output in OutputPixelFormat.allCases {
            let decoder = JPEGDecoder()
            // Destinations are reused too, as pooled buffers are: every pixel must be written each time.
            var buffers: [Dimensions: VideoFrameBuffer] = [:]
            for round in 0..<2 {
                for frame in frames {
                    let buffer =
                        buffers[frame.size]
                        ?? VideoFrameBuffer(format: output, width: frame.size.width, height: frame.size.height)
                    buffers[frame.size] = buffer
                    try convert(
                        frame.bytes, .mjpg, width: frame.size.width, height: frame.size.height, into: buffer,
                        jpegDecoder: decoder)
                    let fresh = try convert(
                        frame.bytes, .mjpg, width: frame.size.width, height: frame.size.height, output: output)
                    let mismatch = I420Image(buffer).mismatch(I420Image(fresh))
                    #expect(mismatch == nil, "\(frame.label) → \(output), round \(round): \(mismatch ?? "")")
                }
            }
        }
    }

    @Test(
        "4:2:0 decodes to libyuv's MJPGToI420 output bit for bit (both use libjpeg's fast DCT), one decoder reused",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"),
        arguments: [Dimensions(width: 640, height: 480), Dimensions(width: 1280, height: 720)])
    func matchesLibyuv(_ size: Dimensions) async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let decoder = JPEGDecoder()
        for source in ["testsrc2", "smptebars"] {
            let jpeg = try await Self.jpeg(source, size, .ffmpeg("yuvj420p"), in: directory)
            let expected = try #require(
                libyuvReference(
                    jpeg, fourcc: UInt32(bitPattern: FOURCC_MJPG.rawValue), width: size.width, height: size.height))
            let ours = I420Image(
                try convert(jpeg, .mjpg, width: size.width, height: size.height, output: .i420, jpegDecoder: decoder))
            let mismatch = ours.mismatch(expected)
            #expect(mismatch == nil, "\(source) \(size): \(mismatch ?? "")")
        }
    }

    @Test(
        "truncated, corrupt and mis-sized frames between good ones are errors, and the next good frame decodes",
        .enabled(if: toolsPresent, "ffmpeg or cjpeg is not installed"))
    func badFramesInAStream() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (w, h) = (320, 240)
        let size = Dimensions(width: w, height: h)
        let good = [
            try await Self.jpeg("testsrc2", size, .ffmpeg("yuvj420p"), in: directory),
            try await Self.jpeg("smptebars", size, .ffmpeg("yuvj444p"), in: directory),
        ]
        let first = good[0]
        // The SOF0 segment's component count (FF C0, length, precision, height, width, count).
        let sof = try #require(first.indices.dropLast().first { first[$0] == 0xFF && first[$0 + 1] == 0xC0 })
        var noComponents = first
        noComponents[sof + 9] = 0
        var twelveBit = first
        twelveBit[sof + 4] = 12
        let otherSize = try await Self.jpeg(
            "testsrc2", Dimensions(width: 160, height: 120), .ffmpeg("yuvj420p"), in: directory)
        let bad: [(String, [UInt8])] = [
            ("truncated in the entropy-coded data", Array(first[0..<first.count / 2])),
            ("truncated in the header", Array(first[0..<20])),
            // TurboJPEG 2.1 cannot read another header with a decompressor whose header read failed.
            ("garbage after the SOI marker", [0xFF, 0xD8] + pseudoRandomBytes(first.count - 2, seed: 7)),
            ("a frame with no components", noComponents),
            ("a 12-bit frame", twelveBit),
            ("SOI and EOI only", [0xFF, 0xD8, 0xFF, 0xD9]),
            ("not a JPEG", [UInt8](repeating: 0, count: 1000)),
            ("another size", otherSize),
        ]
        for output in OutputPixelFormat.allCases {
            let fresh = try good.map { I420Image(try convert($0, .mjpg, width: w, height: h, output: output)) }
            let decoder = JPEGDecoder()
            let buffer = VideoFrameBuffer(format: output, width: w, height: h)
            for (index, (label, bytes)) in bad.enumerated() {
                let error = #expect(throws: CaptureError.self, "\(label) → \(output)") {
                    try convert(bytes, .mjpg, width: w, height: h, into: buffer, jpegDecoder: decoder)
                }
                #expect(error?.code == .conversionFailed)
                let next = index % good.count
                try convert(good[next], .mjpg, width: w, height: h, into: buffer, jpegDecoder: decoder)
                #expect(I420Image(buffer).mismatch(fresh[next]) == nil, "good frame after \(label) → \(output)")
            }
            // Random bytes overwritten anywhere: decodes or fails, and the good frame after it decodes.
            var failures = 0
            for seed in 0..<100 {
                do throws(CaptureError) {
                    try convert(
                        corrupted(first, seed: UInt64(seed)), .mjpg, width: w, height: h, into: buffer,
                        jpegDecoder: decoder)
                } catch {
                    #expect(error.code == .conversionFailed)
                    failures += 1
                }
                try convert(good[1], .mjpg, width: w, height: h, into: buffer, jpegDecoder: decoder)
                #expect(I420Image(buffer).mismatch(fresh[1]) == nil, "good frame after corruption \(seed) → \(output)")
            }
            print("\(output): \(failures) of 100 corrupted frames refused, the rest decoded")
        }
    }
}
