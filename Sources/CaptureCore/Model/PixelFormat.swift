/// A pixel format, identified by its FourCC as V4L2 spells it (`NV12`, `YU12`, `YUYV`, `MJPG`, …).
///
/// The raw value is the little-endian FourCC code, exactly as in `struct v4l2_pix_format.pixelformat`.
public struct PixelFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The FourCC code (`v4l2_fourcc(a, b, c, d)`).
    public var rawValue: UInt32

    /// Creates a pixel format from its FourCC code.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Creates a pixel format from four ASCII characters, for example `"YUYV"`.
    /// Shorter strings are padded with spaces (`"Y16"` is `'Y16 '`). Returns `nil` for longer or non-ASCII text.
    public init?(fourCC text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard (1...4).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let padded = bytes + Array(repeating: UInt8(ascii: " "), count: 4 - bytes.count)
        self.rawValue = padded.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// The four characters of the code, as `v4l2-ctl` prints them: each byte masked to 7 bits, and `-BE`
    /// appended when bit 31 (big-endian variant) is set.
    public var fourCC: String {
        var chars = ""
        for shift in stride(from: 0, to: 32, by: 8) {
            let byte = UInt8((rawValue >> UInt32(shift)) & 0x7F)
            chars.unicodeScalars.append(Unicode.Scalar(byte))
        }
        if rawValue & (1 << 31) != 0 { chars += "-BE" }
        return chars
    }

    /// The FourCC, for example `YUYV`.
    public var description: String { fourCC }

    /// Decodes a pixel format from its FourCC string (`"YUYV"`, `"Y16 -BE"`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let format = PixelFormat(fourCC: text.hasSuffix("-BE") ? String(text.dropLast(3)) : text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a FourCC: \(text)")
        }
        self = text.hasSuffix("-BE") ? PixelFormat(rawValue: format.rawValue | (1 << 31)) : format
    }

    /// Encodes the pixel format as its FourCC string, as `v4l2-ctl` prints it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fourCC)
    }

    private static func code(_ a: Character, _ b: Character, _ c: Character, _ d: Character) -> PixelFormat {
        let bytes = [a, b, c, d].map { UInt32($0.asciiValue ?? 0x20) }
        return PixelFormat(rawValue: bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24)
    }

    /// Y plane then interleaved UV, 4:2:0. The corresponding V4L2 constant is `V4L2_PIX_FMT_NV12`.
    public static let nv12 = code("N", "V", "1", "2")
    /// Y plane then interleaved VU, 4:2:0. The corresponding V4L2 constant is `V4L2_PIX_FMT_NV21`.
    public static let nv21 = code("N", "V", "2", "1")
    /// Planar Y, U, V 4:2:0 (I420). The corresponding V4L2 constant is `V4L2_PIX_FMT_YUV420`.
    public static let yu12 = code("Y", "U", "1", "2")
    /// Planar Y, V, U 4:2:0. The corresponding V4L2 constant is `V4L2_PIX_FMT_YVU420`.
    public static let yv12 = code("Y", "V", "1", "2")
    /// Packed Y0 U Y1 V 4:2:2. The corresponding V4L2 constant is `V4L2_PIX_FMT_YUYV`.
    public static let yuyv = code("Y", "U", "Y", "V")
    /// Packed U Y0 V Y1 4:2:2. The corresponding V4L2 constant is `V4L2_PIX_FMT_UYVY`.
    public static let uyvy = code("U", "Y", "V", "Y")
    /// Packed Y0 V Y1 U 4:2:2. The corresponding V4L2 constant is `V4L2_PIX_FMT_YVYU`.
    public static let yvyu = code("Y", "V", "Y", "U")
    /// Packed V Y0 U Y1 4:2:2. The corresponding V4L2 constant is `V4L2_PIX_FMT_VYUY`.
    public static let vyuy = code("V", "Y", "U", "Y")
    /// Motion-JPEG. The corresponding V4L2 constant is `V4L2_PIX_FMT_MJPEG`.
    public static let mjpg = code("M", "J", "P", "G")
    /// JFIF JPEG. The corresponding V4L2 constant is `V4L2_PIX_FMT_JPEG`.
    public static let jpeg = code("J", "P", "E", "G")
    /// 24-bit R, G, B. The corresponding V4L2 constant is `V4L2_PIX_FMT_RGB24`.
    public static let rgb3 = code("R", "G", "B", "3")
    /// 24-bit B, G, R. The corresponding V4L2 constant is `V4L2_PIX_FMT_BGR24`.
    public static let bgr3 = code("B", "G", "R", "3")
    /// 32-bit A/X, R, G, B (deprecated ambiguous alpha). The corresponding V4L2 constant is `V4L2_PIX_FMT_RGB32`.
    public static let rgb4 = code("R", "G", "B", "4")
    /// 32-bit B, G, R, A/X (deprecated ambiguous alpha). The corresponding V4L2 constant is `V4L2_PIX_FMT_BGR32`.
    public static let bgr4 = code("B", "G", "R", "4")
    /// 32-bit B, G, R, X in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_XBGR32`.
    public static let xr24 = code("X", "R", "2", "4")
    /// 32-bit B, G, R, A in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_ABGR32`.
    public static let ar24 = code("A", "R", "2", "4")
    /// 32-bit X, R, G, B in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_XRGB32`.
    public static let bx24 = code("B", "X", "2", "4")
    /// 32-bit A, R, G, B in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_ARGB32`.
    public static let ba24 = code("B", "A", "2", "4")
    /// 32-bit R, G, B, X in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_RGBX32`.
    public static let xb24 = code("X", "B", "2", "4")
    /// 32-bit R, G, B, A in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_RGBA32`.
    public static let ab24 = code("A", "B", "2", "4")
    /// 32-bit X, B, G, R in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_BGRX32`.
    public static let rx24 = code("R", "X", "2", "4")
    /// 32-bit A, B, G, R in memory. The corresponding V4L2 constant is `V4L2_PIX_FMT_BGRA32`.
    public static let ra24 = code("R", "A", "2", "4")
    /// 8-bit greyscale. The corresponding V4L2 constant is `V4L2_PIX_FMT_GREY`.
    public static let grey = code("G", "R", "E", "Y")
    /// H.264 elementary stream. The corresponding V4L2 constant is `V4L2_PIX_FMT_H264`.
    public static let h264 = code("H", "2", "6", "4")

    /// The default preference list used for format selection: NV12, YU12, YUYV, UYVY, MJPG.
    public static let defaultPreference: [PixelFormat] = [.nv12, .yu12, .yuyv, .uyvy, .mjpg]

    /// Whether frames of this format are JPEG images (`MJPG`, `JPEG`).
    public var isJPEG: Bool { self == .mjpg || self == .jpeg }

    /// Whether frames of this format have a variable size (compressed).
    public var isCompressed: Bool { isJPEG || self == .h264 }
}
