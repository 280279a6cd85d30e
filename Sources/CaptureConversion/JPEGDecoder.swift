internal import CaptureCore
internal import CYUV

/// Decodes MJPEG/JPEG frames with libyuv (libjpeg underneath), after checking the size the JPEG declares.
///
/// libyuv validates the SOI and EOI markers itself (a truncated frame has no EOI and is refused) and turns libjpeg
/// errors into a failed return through `setjmp`/`longjmp`, so corrupt data does not abort. It accepts 4:2:0 and 4:2:2
/// with the usual UVC sampling (Y 2x1, chroma 1x1), 4:4:4 and greyscale; other samplings (for example the Y 2x2,
/// chroma 1x2 4:2:2 that FFmpeg writes) fail cleanly.
enum JPEGDecoder {
    /// Decodes `jpeg` into `destination`, whose size must be the JPEG's.
    static func decode(
        _ jpeg: UnsafeBufferPointer<UInt8>, width: Int, height: Int, into dst: VideoFrameBuffer
    ) throws(CaptureError) {
        guard let base = jpeg.baseAddress, jpeg.count >= 4, base[0] == 0xFF, base[1] == 0xD8 else {
            throw CaptureError(.conversionFailed, "not a JPEG frame (no SOI marker)")
        }
        var jpegWidth: Int32 = 0
        var jpegHeight: Int32 = 0
        guard MJPGSize(base, jpeg.count, &jpegWidth, &jpegHeight) == 0 else {
            throw CaptureError(.conversionFailed, "corrupt or truncated JPEG frame of \(jpeg.count) bytes")
        }
        guard Int(jpegWidth) == width, Int(jpegHeight) == height else {
            throw CaptureError(
                .conversionFailed, "JPEG frame is \(jpegWidth)x\(jpegHeight), the stream is \(width)x\(height)")
        }
        let y = dst.mutablePlane(0), yStride = Int32(truncatingIfNeeded: dst.stride(0))
        let result: Int32
        switch dst.format {
        case .nv12:
            result = MJPGToNV12(
                base, jpeg.count, y, yStride, dst.mutablePlane(1), Int32(truncatingIfNeeded: dst.stride(1)),
                jpegWidth, jpegHeight, jpegWidth, jpegHeight)
        case .i420:
            result = MJPGToI420(
                base, jpeg.count, y, yStride, dst.mutablePlane(1), Int32(truncatingIfNeeded: dst.stride(1)),
                dst.mutablePlane(2), Int32(truncatingIfNeeded: dst.stride(2)),
                jpegWidth, jpegHeight, jpegWidth, jpegHeight)
        }
        guard result == 0 else {
            throw CaptureError(
                .conversionFailed,
                "could not decode the \(width)x\(height) JPEG frame (corrupt data or unsupported chroma sampling)")
        }
    }
}
