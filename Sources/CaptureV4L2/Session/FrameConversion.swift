import CaptureConversion
import CaptureCore

/// How the backend turns a raw driver buffer into an output frame: ``libyuv`` (``FrameConverter``) in production;
/// unit tests substitute their own so they do not depend on which formats the converter supports.
struct FrameConversion: Sendable {
    /// Whether frames in a pixel format can be converted.
    var canConvert: @Sendable (PixelFormat) -> Bool
    /// The bytes a complete raw frame needs (pixel format, width, height, bytes per line), or `nil` for
    /// compressed formats.
    var minimumFrameBytes: @Sendable (PixelFormat, Int, Int, Int) -> Int?
    /// Converts one frame (source, pixel format, width, height, bytes per line) into a buffer, decoding MJPEG with
    /// the stream's decoder (owned by the capture loop, used on its thread only).
    var convert:
        @Sendable (UnsafeRawBufferPointer, PixelFormat, Int, Int, Int, VideoFrameBuffer, JPEGDecoder)
            throws(CaptureError) -> Void

    /// ``FrameConverter`` (libyuv; TurboJPEG for MJPEG).
    static let libyuv = FrameConversion(
        canConvert: { FrameConverter.canConvert($0) },
        minimumFrameBytes: { format, width, height, bytesPerLine in
            FrameConverter.minimumFrameBytes(
                pixelFormat: format, width: width, height: height, bytesPerLine: bytesPerLine)
        },
        convert: { (source, format, width, height, bytesPerLine, destination, jpegDecoder) throws(CaptureError) in
            try FrameConverter.convert(
                source, pixelFormat: format, width: width, height: height, bytesPerLine: bytesPerLine,
                into: destination, jpegDecoder: jpegDecoder)
        })
}
