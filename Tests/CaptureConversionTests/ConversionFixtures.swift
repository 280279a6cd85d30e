import CaptureConversion
import CaptureCore
import CaptureTestSupport
import CYUV
import Foundation
import Testing

/// Deterministic pseudo-random bytes (xorshift64*), so failures reproduce.
func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    // Loops over raw buffers throughout these fixtures: debug builds of closure-heavy code take minutes on 1080p.
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            buffer[index] = UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
        }
        initialized = count
    }
}

/// `bytes` with 8 bytes overwritten at pseudo-random places (the same places and values for the same `seed`).
func corrupted(_ bytes: [UInt8], seed: UInt64) -> [UInt8] {
    var corrupt = bytes
    let noise = pseudoRandomBytes(16, seed: seed)
    for index in stride(from: 0, to: noise.count, by: 2) {
        corrupt[Int(noise[index]) * corrupt.count / 256] = noise[index + 1]
    }
    return corrupt
}

/// One frame of the lavfi `source` (`testsrc2`, `smptebars`…) at `size`, written by FFmpeg to `url` (its extension
/// picks the format: `.ppm`, `.jpg`…), in `pixelFormat` if given. The crop happens in RGB: testsrc2, and a crop in YUV,
/// round odd sizes down to even.
func ffmpegStill(_ source: String, _ size: Dimensions, pixelFormat: String? = nil, to url: URL) async throws {
    let even = Dimensions(width: (size.width + 1) & ~1, height: (size.height + 1) & ~1)
    try await ExternalTools.run(
        try #require(ExternalTools.ffmpeg),
        [
            "-v", "error", "-y", "-f", "lavfi", "-i", "\(source)=size=\(even)",
            "-vf", "format=rgb24,crop=\(size.width):\(size.height):0:0", "-frames:v", "1",
        ] + (pixelFormat.map { ["-pix_fmt", $0] } ?? []) + [url.path])
}

/// Three tightly packed planes of an I420 image (CaptureCore's ``I420Picture``), with the tests' helpers.
typealias I420Image = I420Picture

extension I420Picture {
    /// The planes of `buffer` (I420), or of its NV12 planes split (so both layouts compare alike).
    init(_ buffer: VideoFrameBuffer) { self.init(copying: buffer) }

    /// The interleaved UV plane of the NV12 form of this image, computed by libyuv's `I420ToNV12`.
    func nv12UV() -> [UInt8] {
        var dstY = [UInt8](repeating: 0, count: width * height)
        var dstUV = [UInt8](repeating: 0, count: 2 * chromaWidth * chromaHeight)
        let result = I420ToNV12(
            y, Int32(width), u, Int32(chromaWidth), v, Int32(chromaWidth),
            &dstY, Int32(width), &dstUV, Int32(2 * chromaWidth), Int32(width), Int32(height))
        precondition(result == 0)
        return dstUV
    }

    /// `nil` when equal to `other`, else where the first difference is (cheap: `#expect(a == b)` on large arrays makes
    /// Swift Testing compute a collection diff, which takes minutes).
    func mismatch(_ other: I420Image) -> String? {
        guard width == other.width, height == other.height else {
            return "size \(width)x\(height) vs \(other.width)x\(other.height)"
        }
        for (name, a, b) in [("Y", y, other.y), ("U", u, other.u), ("V", v, other.v)] {
            if let message = firstDifference(a, b) { return "\(name): \(message)" }
        }
        return nil
    }
}

/// libyuv's own conversion of a tightly packed frame (`ConvertToI420` with a libyuv FourCC), the test reference.
func libyuvReference(_ packed: [UInt8], fourcc: UInt32, width: Int, height: Int) -> I420Image? {
    let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
    var y = [UInt8](repeating: 0, count: width * height)
    var u = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var v = u
    let result = ConvertToI420(
        packed, packed.count, &y, Int32(width), &u, Int32(chromaWidth), &v, Int32(chromaWidth),
        0, 0, Int32(width), Int32(height), Int32(width), Int32(height), kRotate0, fourcc)
    guard result == 0 else { return nil }
    return I420Image(width: width, height: height, y: y, u: u, v: v)
}

/// One plane of a source frame, in the test's own description of V4L2 layouts (independent of the converter).
struct SourcePlane {
    var rowBytes: Int
    var rows: Int
    var stride: Int
}

/// A V4L2 source format as the tests see it: its planes for a given `bytesperline`, and how to get libyuv's
/// reference result.
struct SourceFormat: Sendable, CustomTestStringConvertible {
    var pixelFormat: PixelFormat
    /// Returns the planes for width, height and first-plane stride (V4L2 single-plane rules).
    var planes: @Sendable (_ width: Int, _ height: Int, _ stride: Int) -> [SourcePlane]
    /// Turns a tightly packed frame into the I420 reference.
    var reference: @Sendable (_ packed: [UInt8], _ width: Int, _ height: Int) -> I420Image?

    var testDescription: String { pixelFormat.fourCC }

    /// Bytes per row of the first plane when tightly packed.
    func rowBytes(width: Int) -> Int { planes(width, 1, 0)[0].rowBytes }

    /// Lays out `packed` (tightly packed planes) with first-plane stride `stride`, filling padding with 0xEE.
    func padded(_ packed: [UInt8], width: Int, height: Int, stride: Int) -> [UInt8] {
        let tight = planes(width, height, rowBytes(width: width))
        let wide = planes(width, height, stride)
        var out: [UInt8] = []
        var offset = 0
        for (plane, layout) in zip(tight, wide) {
            for row in 0..<plane.rows {
                let start = offset + row * plane.rowBytes
                out += packed[start..<start + plane.rowBytes]
                out += [UInt8](repeating: 0xEE, count: layout.stride - plane.rowBytes)
            }
            offset += plane.rowBytes * plane.rows
        }
        return out
    }

    static func packed(_ format: PixelFormat, bytesPerPixel: Int, fourcc: FourCC) -> SourceFormat {
        SourceFormat(
            pixelFormat: format,
            planes: { w, h, s in [SourcePlane(rowBytes: w * bytesPerPixel, rows: h, stride: max(s, w * bytesPerPixel))]
            },
            reference: { libyuvReference($0, fourcc: UInt32(bitPattern: fourcc.rawValue), width: $1, height: $2) })
    }

    /// Packed 4:2:2: a row is `ceil(w/2)` four-byte groups. `swap` exchanges two byte positions of each group to get a
    /// byte order libyuv knows (YVYU→YUYV, VYUY→UYVY), the reference then being libyuv's result for that.
    static func packed422(_ format: PixelFormat, fourcc: FourCC, swap: (Int, Int)? = nil) -> SourceFormat {
        SourceFormat(
            pixelFormat: format,
            planes: { w, h, s in
                let row = (w + 1) / 2 * 4
                return [SourcePlane(rowBytes: row, rows: h, stride: max(s, row))]
            },
            reference: { packed, w, h in
                guard let (a, b) = swap else {
                    return libyuvReference(packed, fourcc: UInt32(bitPattern: fourcc.rawValue), width: w, height: h)
                }
                var swapped = packed
                for group in stride(from: 0, to: swapped.count, by: 4) { swapped.swapAt(group + a, group + b) }
                return libyuvReference(swapped, fourcc: UInt32(bitPattern: fourcc.rawValue), width: w, height: h)
            })
    }

    static func semiPlanar(_ format: PixelFormat, fourcc: FourCC) -> SourceFormat {
        SourceFormat(
            pixelFormat: format,
            planes: { w, h, s in
                let stride = max(s, w)
                return [
                    SourcePlane(rowBytes: w, rows: h, stride: stride),
                    SourcePlane(rowBytes: (w + 1) / 2 * 2, rows: (h + 1) / 2, stride: (stride + 1) / 2 * 2),
                ]
            },
            reference: { libyuvReference($0, fourcc: UInt32(bitPattern: fourcc.rawValue), width: $1, height: $2) })
    }

    static func planar(_ format: PixelFormat, fourcc: FourCC) -> SourceFormat {
        SourceFormat(
            pixelFormat: format,
            planes: { w, h, s in
                let stride = max(s, w)
                let chroma = SourcePlane(rowBytes: (w + 1) / 2, rows: (h + 1) / 2, stride: (stride + 1) / 2)
                return [SourcePlane(rowBytes: w, rows: h, stride: stride), chroma, chroma]
            },
            reference: { libyuvReference($0, fourcc: UInt32(bitPattern: fourcc.rawValue), width: $1, height: $2) })
    }

    /// Every format the converter supports, each with its reference.
    static let all: [SourceFormat] = [
        .packed422(.yuyv, fourcc: FOURCC_YUY2),
        .packed422(.uyvy, fourcc: FOURCC_UYVY),
        .packed422(.yvyu, fourcc: FOURCC_YUY2, swap: (1, 3)),
        .packed422(.vyuy, fourcc: FOURCC_UYVY, swap: (0, 2)),
        .semiPlanar(.nv12, fourcc: FOURCC_NV12),
        .semiPlanar(.nv21, fourcc: FOURCC_NV21),
        .planar(.yu12, fourcc: FOURCC_I420),
        .planar(.yv12, fourcc: FOURCC_YV12),
        .packed(.rgb3, bytesPerPixel: 3, fourcc: FOURCC_RAW),
        .packed(.bgr3, bytesPerPixel: 3, fourcc: FOURCC_24BG),
        .packed(.ar24, bytesPerPixel: 4, fourcc: FOURCC_ARGB),
        .packed(.xr24, bytesPerPixel: 4, fourcc: FOURCC_ARGB),
        .packed(.bgr4, bytesPerPixel: 4, fourcc: FOURCC_ARGB),
        .packed(.ba24, bytesPerPixel: 4, fourcc: FOURCC_BGRA),
        .packed(.bx24, bytesPerPixel: 4, fourcc: FOURCC_BGRA),
        .packed(.rgb4, bytesPerPixel: 4, fourcc: FOURCC_BGRA),
        .packed(.ab24, bytesPerPixel: 4, fourcc: FOURCC_ABGR),
        .packed(.xb24, bytesPerPixel: 4, fourcc: FOURCC_ABGR),
        .packed(.ra24, bytesPerPixel: 4, fourcc: FOURCC_RGBA),
        .packed(.rx24, bytesPerPixel: 4, fourcc: FOURCC_RGBA),
        .packed(.grey, bytesPerPixel: 1, fourcc: FOURCC_I400),
    ]
}

/// Runs the converter on `bytes` into a fresh buffer of `output` layout (JPEG with `jpegDecoder`, if given).
func convert(
    _ bytes: [UInt8], _ format: PixelFormat, width: Int, height: Int, bytesPerLine: Int = 0,
    output: OutputPixelFormat, jpegDecoder: JPEGDecoder? = nil
) throws(CaptureError) -> VideoFrameBuffer {
    let buffer = VideoFrameBuffer(format: output, width: width, height: height)
    try convert(
        bytes, format, width: width, height: height, bytesPerLine: bytesPerLine, into: buffer, jpegDecoder: jpegDecoder)
    return buffer
}

/// Runs the converter on `bytes` into `buffer` (JPEG with `jpegDecoder`, if given).
func convert(
    _ bytes: [UInt8], _ format: PixelFormat, width: Int, height: Int, bytesPerLine: Int = 0,
    into buffer: VideoFrameBuffer, jpegDecoder: JPEGDecoder? = nil
) throws(CaptureError) {
    // Errors leave the closure as a value: typed throws through withUnsafeBytes crashes the 6.3 compiler here.
    let failure: CaptureError? = bytes.withUnsafeBytes { raw in
        do throws(CaptureError) {
            try FrameConverter.convert(
                raw, pixelFormat: format, width: width, height: height, bytesPerLine: bytesPerLine, into: buffer,
                jpegDecoder: jpegDecoder)
            return nil
        } catch {
            return error
        }
    }
    if let failure { throw failure }
}

/// `nil` when the arrays are equal, else the first differing index, the values there and the largest difference.
func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String? {
    guard a.count == b.count else { return "\(a.count) bytes vs \(b.count)" }
    guard a != b, let index = a.indices.first(where: { a[$0] != b[$0] }) else { return nil }
    let largest = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    return "first difference at \(index): \(a[index]) vs \(b[index]), largest \(largest)"
}
