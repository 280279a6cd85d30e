public import CaptureCore
internal import CYUV

/// Converts camera frames (YUYV, UYVY, NV12, I420, MJPEG, RGB…) into NV12 or I420 frame buffers with libyuv, and
/// MJPEG with TurboJPEG (``JPEGDecoder``).
///
/// Every raw conversion writes straight into the destination's planes: formats for which libyuv has no NV12 writer
/// are converted to I420 planes inside the NV12 buffer's UV plane and interleaved in place, so no conversion
/// allocates a frame-sized scratch buffer. 4:2:0 MJPEG decodes straight into the destination too; other JPEG
/// samplings go through the stream's ``JPEGDecoder``'s reused scratch planes. See <doc:CaptureConversion> for the
/// format table.
public enum FrameConverter {
    /// The camera pixel formats ``convert(_:pixelFormat:width:height:bytesPerLine:into:jpegDecoder:)`` accepts.
    public static let supportedPixelFormats: Set<PixelFormat> = Set(SourceLayout.table.keys)

    /// Whether frames in `pixelFormat` can be converted.
    public static func canConvert(_ pixelFormat: PixelFormat) -> Bool {
        supportedPixelFormats.contains(pixelFormat)
    }

    /// The bytes a complete raw frame needs (for detecting short buffers), or `nil` for compressed formats.
    ///
    /// This is the offset of the last byte the converter reads, plus one: the last row's padding is not required.
    /// Also `nil` for an unsupported format or a size or `bytesPerLine` the converter would reject.
    public static func minimumFrameBytes(
        pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int
    ) -> Int? {
        guard let layout = SourceLayout(pixelFormat), layout != .jpeg else { return nil }
        return try? SourceGeometry.make(layout, width: width, height: height, bytesPerLine: bytesPerLine).get()
            .byteCount
    }

    /// Converts one frame of `pixelFormat`, `width` × `height`, whose rows are `bytesPerLine` apart (0 = tightly
    /// packed), into `destination`, which must have the same width and height.
    ///
    /// For JPEG formats `bytesPerLine` is ignored and `source` is the compressed image (V4L2's `bytesused`); it is
    /// decoded with `jpegDecoder`, which a stream passes for every frame so that TurboJPEG's decompressor and the
    /// scratch planes are made once (without one, a temporary decoder is made for this frame). Raw formats ignore it.
    ///
    /// - Throws: ``CaptureError/Code-swift.struct/conversionFailed`` for a truncated or corrupt frame (including a bad
    ///   JPEG), or an unsupported format; ``CaptureError/Code-swift.struct/invalidArgument`` when the size,
    ///   `bytesPerLine` or destination does not fit. Never crashes on bad input.
    public static func convert(
        _ source: UnsafeRawBufferPointer, pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int,
        into destination: VideoFrameBuffer, jpegDecoder: JPEGDecoder? = nil
    ) throws(CaptureError) {
        guard let layout = SourceLayout(pixelFormat) else {
            throw CaptureError(.conversionFailed, "cannot convert frames in pixel format \(pixelFormat)")
        }
        guard destination.width == width, destination.height == height else {
            throw CaptureError(
                .invalidArgument,
                "destination is \(destination.dimensions), the \(pixelFormat) frame is \(width)x\(height)")
        }
        guard let base = source.baseAddress?.assumingMemoryBound(to: UInt8.self), !source.isEmpty else {
            throw CaptureError(.conversionFailed, "empty \(pixelFormat) frame")
        }
        if layout == .jpeg {
            try (jpegDecoder ?? JPEGDecoder()).decode(
                UnsafeBufferPointer(start: base, count: source.count), width: width, height: height,
                into: destination)
            return
        }
        let geometry = try SourceGeometry.make(layout, width: width, height: height, bytesPerLine: bytesPerLine).get()
        guard source.count >= geometry.byteCount else {
            throw CaptureError(
                .conversionFailed,
                "short \(pixelFormat) frame: \(source.count) bytes, \(width)x\(height) needs \(geometry.byteCount)")
        }
        let result = convertRaw(base, layout: layout, geometry: geometry, into: destination)
        guard result == 0 else {
            throw CaptureError(.conversionFailed, "libyuv failed to convert \(pixelFormat) (\(result))")
        }
    }

    /// Dispatches a validated raw frame to libyuv; returns libyuv's result (0 = success).
    private static func convertRaw(
        _ src: UnsafePointer<UInt8>, layout: SourceLayout, geometry: SourceGeometry, into dst: VideoFrameBuffer
    ) -> Int32 {
        let stride = Int32(truncatingIfNeeded: geometry.stride)
        let width = Int32(truncatingIfNeeded: dst.width)
        let height = Int32(truncatingIfNeeded: dst.height)
        // Chroma planes in memory order (unused for packed formats).
        let c0 = geometry.firstChroma.map { (src + $0.offset, Int32(truncatingIfNeeded: $0.stride)) } ?? (src, stride)
        let c1 = geometry.secondChroma.map { (src + $0.offset, Int32(truncatingIfNeeded: $0.stride)) } ?? (src, stride)
        let nv12 = dst.format == .nv12
        // Direct NV12 writers where libyuv has them and they allocate nothing per call (measured with a counting
        // malloc: UYVYToNV12, ARGBToNV12 and ABGRToNV12 allocate a row buffer per call in this libyuv, so those
        // formats take the in-place interleave below instead).
        if nv12 {
            let y = dst.mutablePlane(0), yStride = Int32(truncatingIfNeeded: dst.stride(0))
            let uv = dst.mutablePlane(1), uvStride = Int32(truncatingIfNeeded: dst.stride(1))
            switch layout {
            case .packed422(.yuyv):
                return YUY2ToNV12(src, stride, y, yStride, uv, uvStride, width, height)
            case .semiPlanar(vuOrder: false):
                return NV12Copy(src, stride, c0.0, c0.1, y, yStride, uv, uvStride, width, height)
            case .semiPlanar(vuOrder: true):
                return NV21ToNV12(src, stride, c0.0, c0.1, y, yStride, uv, uvStride, width, height)
            case .planar(let vFirst):
                let (u, v) = vFirst ? (c1, c0) : (c0, c1)
                return I420ToNV12(src, stride, u.0, u.1, v.0, v.1, y, yStride, uv, uvStride, width, height)
            case .grey:
                CopyPlane(src, stride, y, yStride, width, height)
                SetPlane(uv, uvStride, Int32(2 * ((dst.width + 1) / 2)), Int32((dst.height + 1) / 2), 128)
                return 0
            default:
                break
            }
        }
        // Everything else writes I420 planes (for NV12: interleaved afterwards, see PlanarTarget).
        return PlanarTarget.write(into: dst) { t in
            switch layout {
            case .packed422(.yuyv):
                YUY2ToI420(src, stride, t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, width, height)
            case .packed422(.yvyu):
                YUY2ToI420(src, stride, t.y, t.yStride, t.v, t.vStride, t.u, t.uStride, width, height)
            case .packed422(.uyvy):
                UYVYToI420(src, stride, t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, width, height)
            case .packed422(.vyuy):
                UYVYToI420(src, stride, t.y, t.yStride, t.v, t.vStride, t.u, t.uStride, width, height)
            case .semiPlanar(let vuOrder):
                (vuOrder ? NV21ToI420 : NV12ToI420)(
                    src, stride, c0.0, c0.1, t.y, t.yStride, t.u, t.uStride, t.v, t.vStride,
                    width, height)
            case .planar(let vFirst):
                I420Copy(
                    src, stride, (vFirst ? c1 : c0).0, c0.1, (vFirst ? c0 : c1).0, c1.1,
                    t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, width, height)
            case .rgb(let order):
                rgbToI420(order)(src, stride, t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, width, height)
            case .grey:
                I400ToI420(src, stride, t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, width, height)
            case .jpeg:
                -1  // Handled by JPEGDecoder before this point.
            }
        }
    }

    /// The libyuv function converting `order` to I420.
    private static func rgbToI420(
        _ order: SourceLayout.RGBOrder
    )
        -> @convention(c) (
            UnsafePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32,
            UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32
        ) -> Int32
    {
        switch order {
        case .raw: RAWToI420
        case .rgb24: RGB24ToI420
        case .argb: ARGBToI420
        case .bgra: BGRAToI420
        case .abgr: ABGRToI420
        case .rgba: RGBAToI420
        }
    }
}
