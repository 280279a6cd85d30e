public import CaptureCore
internal import CYUV

/// Converts camera frames (YUYV, UYVY, NV12, I420, MJPEG, RGB…) into NV12 or I420 frame buffers with libyuv.
public enum FrameConverter {
    /// The camera pixel formats ``convert(_:pixelFormat:width:height:bytesPerLine:into:)`` accepts.
    public static let supportedPixelFormats: Set<PixelFormat> = []

    /// Whether frames in `pixelFormat` can be converted.
    public static func canConvert(_ pixelFormat: PixelFormat) -> Bool {
        supportedPixelFormats.contains(pixelFormat)
    }

    /// The bytes a complete raw frame needs (for detecting short buffers), or `nil` for compressed formats.
    public static func minimumFrameBytes(
        pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int
    ) -> Int? {
        nil
    }

    /// Converts one frame of `pixelFormat`, `width` × `height`, whose rows are `bytesPerLine` apart (0 = tightly
    /// packed), into `destination`, which must have the same width and height.
    ///
    /// - Throws: ``CaptureError/Code-swift.struct/conversionFailed`` for a truncated or corrupt frame (including a bad
    ///   JPEG), or an unsupported format. Never crashes on bad input.
    public static func convert(
        _ source: UnsafeRawBufferPointer, pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int,
        into destination: VideoFrameBuffer
    ) throws(CaptureError) {
        throw CaptureError(.conversionFailed, "conversion from \(pixelFormat) is not implemented yet")
    }
}
