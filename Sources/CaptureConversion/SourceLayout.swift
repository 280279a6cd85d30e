internal import CaptureCore

/// How the bytes of one camera pixel format are laid out, and which libyuv family reads them.
///
/// libyuv names 32-bit RGB formats after the little-endian word, V4L2 after the bytes in memory, so the names are
/// inverted: libyuv `ARGB` is the bytes B, G, R, A (V4L2 `AR24`/`XR24`/`BGR4`), libyuv `BGRA` is A, R, G, B (`BA24`,
/// `BX24`, `RGB4`), libyuv `ABGR` is R, G, B, A (`AB24`, `XB24`) and libyuv `RGBA` is A, B, G, R (`RA24`, `RX24`).
/// 24-bit likewise: V4L2 `RGB3` (R, G, B) is libyuv `RAW`, V4L2 `BGR3` (B, G, R) is libyuv `RGB24`.
enum SourceLayout: Sendable, Hashable {
    /// Packed 4:2:2, two pixels in four bytes.
    case packed422(Packed422Order)
    /// A Y plane then one interleaved chroma plane, 4:2:0 (`NV12`, or `NV21` when `vuOrder`).
    case semiPlanar(vuOrder: Bool)
    /// Three planes, 4:2:0 (`YU12`, or `YV12` when `vFirst`).
    case planar(vFirst: Bool)
    /// Packed 24-bit or 32-bit RGB.
    case rgb(RGBOrder)
    /// 8-bit luma only.
    case grey
    /// A JPEG image (`MJPG`, `JPEG`).
    case jpeg

    /// Byte orders of packed 4:2:2.
    enum Packed422Order: Sendable, Hashable {
        /// Y0 U Y1 V (V4L2 `YUYV`, libyuv `YUY2`).
        case yuyv
        /// U Y0 V Y1 (`UYVY`).
        case uyvy
        /// Y0 V Y1 U (`YVYU`; libyuv `YUY2` with U and V swapped).
        case yvyu
        /// V Y0 U Y1 (`VYUY`; libyuv `UYVY` with U and V swapped).
        case vyuy
    }

    /// RGB byte orders, named after libyuv's functions.
    enum RGBOrder: Sendable, Hashable {
        /// Bytes R, G, B (V4L2 `RGB3`).
        case raw
        /// Bytes B, G, R (V4L2 `BGR3`).
        case rgb24
        /// Bytes B, G, R, A/X.
        case argb
        /// Bytes A/X, R, G, B.
        case bgra
        /// Bytes R, G, B, A/X.
        case abgr
        /// Bytes A/X, B, G, R.
        case rgba

        /// Bytes per pixel.
        var bytesPerPixel: Int {
            switch self {
            case .raw, .rgb24: 3
            case .argb, .bgra, .abgr, .rgba: 4
            }
        }
    }

    /// The layout of `pixelFormat`, or `nil` if it cannot be converted.
    init?(_ pixelFormat: PixelFormat) {
        guard let layout = Self.table[pixelFormat] else { return nil }
        self = layout
    }

    /// Every convertible V4L2 format and its layout.
    static let table: [PixelFormat: SourceLayout] = [
        .yuyv: .packed422(.yuyv), .uyvy: .packed422(.uyvy), .yvyu: .packed422(.yvyu), .vyuy: .packed422(.vyuy),
        .nv12: .semiPlanar(vuOrder: false), .nv21: .semiPlanar(vuOrder: true),
        .yu12: .planar(vFirst: false), .yv12: .planar(vFirst: true),
        .mjpg: .jpeg, .jpeg: .jpeg,
        .rgb3: .rgb(.raw), .bgr3: .rgb(.rgb24),
        .ar24: .rgb(.argb), .xr24: .rgb(.argb), .bgr4: .rgb(.argb),
        .ba24: .rgb(.bgra), .bx24: .rgb(.bgra), .rgb4: .rgb(.bgra),
        .ab24: .rgb(.abgr), .xb24: .rgb(.abgr),
        .ra24: .rgb(.rgba), .rx24: .rgb(.rgba),
        .grey: .grey,
    ]

    /// Bytes of pixel data in one row of the first plane.
    func rowBytes(width: Int) -> Int {
        switch self {
        case .packed422: (width + 1) / 2 * 4
        case .semiPlanar, .planar, .grey, .jpeg: width
        case .rgb(let order): width * order.bytesPerPixel
        }
    }
}

/// The planes of one raw source frame: where each starts, its stride, and the bytes a converter reads.
struct SourceGeometry: Sendable, Hashable {
    /// One chroma plane of a planar or semi-planar frame.
    struct Plane: Sendable, Hashable {
        /// Byte offset from the start of the frame.
        var offset: Int
        /// Bytes from one row to the next.
        var stride: Int
    }

    /// Stride of the first (or only) plane.
    var stride: Int
    /// The first chroma plane in memory: UV/VU for NV12/NV21, U/V for YU12/YV12 (`nil` for packed formats).
    var firstChroma: Plane?
    /// The second chroma plane in memory (YU12/YV12 only). Two fields rather than an array: no allocation per frame.
    var secondChroma: Plane?
    /// The bytes from the start of the frame to the last byte a converter reads.
    var byteCount: Int

    /// The largest width or height accepted (libyuv takes `int` sizes; this keeps every product in range).
    static let maximumDimension = 1 << 15

    /// The geometry of a raw frame, or why the arguments are invalid.
    ///
    /// `bytesPerLine` is V4L2's: the stride of the first plane, 0 meaning tightly packed. Chroma strides follow the
    /// V4L2 single-plane convention: the same as luma for `NV12`/`NV21` (rounded up to even), half of it (rounded up)
    /// for `YU12`/`YV12`.
    static func make(
        _ layout: SourceLayout, width: Int, height: Int, bytesPerLine: Int
    ) -> Result<SourceGeometry, CaptureError> {
        guard (1...maximumDimension).contains(width), (1...maximumDimension).contains(height) else {
            return .failure(CaptureError(.invalidArgument, "frame size \(width)x\(height) is out of range"))
        }
        let rowBytes = layout.rowBytes(width: width)
        let stride = bytesPerLine == 0 ? rowBytes : bytesPerLine
        guard stride >= rowBytes, stride <= 8 * maximumDimension else {
            return .failure(
                CaptureError(
                    .invalidArgument,
                    "bytes per line \(bytesPerLine) does not fit a \(width)-pixel row of \(rowBytes) bytes"))
        }
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        switch layout {
        case .packed422, .rgb, .grey, .jpeg:
            return .success(SourceGeometry(stride: stride, byteCount: stride * (height - 1) + rowBytes))
        case .semiPlanar:
            let uv = Plane(offset: stride * height, stride: (stride + 1) / 2 * 2)
            return .success(
                SourceGeometry(
                    stride: stride, firstChroma: uv,
                    byteCount: uv.offset + uv.stride * (chromaHeight - 1) + 2 * chromaWidth))
        case .planar:
            let first = Plane(offset: stride * height, stride: (stride + 1) / 2)
            let second = Plane(offset: first.offset + first.stride * chromaHeight, stride: first.stride)
            return .success(
                SourceGeometry(
                    stride: stride, firstChroma: first, secondChroma: second,
                    byteCount: second.offset + second.stride * (chromaHeight - 1) + chromaWidth))
        }
    }
}
