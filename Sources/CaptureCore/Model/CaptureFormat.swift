/// Properties a driver reports for a pixel format (`struct v4l2_fmtdesc.flags`).
public struct PixelFormatFlags: OptionSet, Sendable, Hashable, Codable {
    /// The `V4L2_FMT_FLAG_*` bits.
    public var rawValue: UInt32
    /// Creates flags from `V4L2_FMT_FLAG_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Compressed (for example MJPEG). The corresponding V4L2 constant is `V4L2_FMT_FLAG_COMPRESSED`.
    public static let compressed = PixelFormatFlags(rawValue: 0x0001)
    /// Emulated by libv4l2, not native. The corresponding V4L2 constant is `V4L2_FMT_FLAG_EMULATED`.
    public static let emulated = PixelFormatFlags(rawValue: 0x0002)
    /// `V4L2_FMT_FLAG_CONTINUOUS_BYTESTREAM`.
    public static let continuousBytestream = PixelFormatFlags(rawValue: 0x0004)
    /// `V4L2_FMT_FLAG_DYN_RESOLUTION`.
    public static let dynamicResolution = PixelFormatFlags(rawValue: 0x0008)
    /// `V4L2_FMT_FLAG_ENC_CAP_FRAME_INTERVAL`.
    public static let encoderCapFrameInterval = PixelFormatFlags(rawValue: 0x0010)
    /// `V4L2_FMT_FLAG_CSC_COLORSPACE`.
    public static let cscColorspace = PixelFormatFlags(rawValue: 0x0020)
    /// `V4L2_FMT_FLAG_CSC_YCBCR_ENC` (also `V4L2_FMT_FLAG_CSC_HSV_ENC`).
    public static let cscYCbCr = PixelFormatFlags(rawValue: 0x0080)
    /// `V4L2_FMT_FLAG_CSC_QUANTIZATION`.
    public static let cscQuantization = PixelFormatFlags(rawValue: 0x0100)
    /// `V4L2_FMT_FLAG_CSC_XFER_FUNC`.
    public static let cscTransferFunction = PixelFormatFlags(rawValue: 0x0040)
    /// `V4L2_FMT_FLAG_META_LINE_BASED`.
    public static let metaLineBased = PixelFormatFlags(rawValue: 0x0200)
}

/// One entry of a device's pixel-format list (`VIDIOC_ENUM_FMT`): the code, the driver's description and flags.
public struct PixelFormatDescription: Sendable, Hashable, Codable {
    /// The pixel format.
    public var pixelFormat: PixelFormat
    /// The driver's description, for example `"YUYV 4:2:2"` or `"Motion-JPEG"`.
    public var description: String
    /// The driver's flags.
    public var flags: PixelFormatFlags

    /// Creates a pixel-format entry.
    public init(pixelFormat: PixelFormat, description: String, flags: PixelFormatFlags = []) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.flags = flags
    }
}

/// A way a camera can capture: a pixel format, a size (or a range of sizes) and the frame rates offered for it.
public struct CaptureFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The pixel format.
    public var pixelFormat: PixelFormat
    /// A discrete size, or a stepwise or continuous range of sizes.
    public var size: FrameSize
    /// The frame rates offered for this pixel format and size.
    public var frameRates: FrameRates

    /// Creates a capture format.
    public init(pixelFormat: PixelFormat, size: FrameSize, frameRates: FrameRates) {
        self.pixelFormat = pixelFormat
        self.size = size
        self.frameRates = frameRates
    }

    /// A discrete format offering whole-number rates, for example `CaptureFormat(.yuyv, 640, 480, fps: [30, 15])`.
    public init(_ pixelFormat: PixelFormat, _ width: Int, _ height: Int, fps: [UInt32]) {
        self.init(
            pixelFormat: pixelFormat, size: .discrete(Dimensions(width: width, height: height)),
            frameRates: .discrete(fps.map { FrameInterval(fps: $0) }))
    }

    /// `"YUYV 640x480"`.
    public var description: String { "\(pixelFormat) \(size)" }
}
