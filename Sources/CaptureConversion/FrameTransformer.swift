public import CaptureCore
internal import CYUV

/// A rectangle of a frame, in pixels from its top-left corner.
public struct CropRect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The whole of a frame of `dimensions`.
    public init(_ dimensions: Dimensions) {
        self.init(x: 0, y: 0, width: dimensions.width, height: dimensions.height)
    }

    /// The size of the rectangle.
    public var dimensions: Dimensions { Dimensions(width: width, height: height) }

    /// `"WxH+X+Y"`.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// How pixels are resampled when a frame is scaled (libyuv's `FilterMode`).
public enum ScalingFilter: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nearest neighbour; fastest.
    case none
    /// Horizontal filtering only.
    case linear
    /// Bilinear: fast, good for modest ratios (WebRTC's default for capture adaptation).
    case bilinear
    /// Box filter: best quality when scaling down by large ratios.
    case box

    var libyuv: FilterMode {
        switch self {
        case .none: kFilterNone
        case .linear: kFilterLinear
        case .bilinear: kFilterBilinear
        case .box: kFilterBox
        }
    }
}

/// Rotates, crops, scales and re-lays-out NV12/I420 frame buffers with libyuv.
///
/// All operations write straight into the destination (typically from a ``FrameBufferPool``) and allocate nothing:
/// where the destination is NV12 and libyuv only writes I420, the chroma is written into the NV12 UV plane and
/// interleaved in place. Rotation normally stays a tag on ``VideoFrame``; ``rotate(_:by:into:)`` is for sinks that
/// need upright pixels.
public enum FrameTransformer {
    /// Writes `source` rotated clockwise by `rotation` into `destination`, whose dimensions must be the source's
    /// with width and height swapped for 90° and 270°. Either layout may be converted to the other on the way.
    ///
    /// - Throws: ``CaptureError/Code-swift.struct/invalidArgument`` when the destination size does not match, or the
    ///   destination is the source.
    public static func rotate(
        _ source: VideoFrameBuffer, by rotation: VideoRotation, into destination: VideoFrameBuffer
    ) throws(CaptureError) {
        let expected = source.dimensions.applying(rotation)
        guard source !== destination else {
            throw CaptureError(.invalidArgument, "cannot rotate a frame buffer into itself")
        }
        guard destination.dimensions == expected else {
            throw CaptureError(
                .invalidArgument,
                "rotating \(source.dimensions) by \(rotation) needs \(expected), not \(destination.dimensions)")
        }
        let mode = RotationMode(rawValue: UInt32(rotation.degrees))
        let (w, h) = (Int32(source.width), Int32(source.height))
        let result = PlanarTarget.write(into: destination) { t in
            switch source.format {
            case .i420:
                I420Rotate(
                    source.plane(0), source.int32Stride(0), source.plane(1), source.int32Stride(1),
                    source.plane(2), source.int32Stride(2), t.y, t.yStride, t.u, t.uStride, t.v, t.vStride,
                    w, h, mode)
            case .nv12:
                NV12ToI420Rotate(
                    source.plane(0), source.int32Stride(0), source.plane(1), source.int32Stride(1),
                    t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, w, h, mode)
            }
        }
        guard result == 0 else { throw CaptureError(.conversionFailed, "libyuv rotation failed (\(result))") }
    }

    /// Scales the whole of `source` to the size of `destination`.
    ///
    /// - Throws: ``CaptureError/Code-swift.struct/invalidArgument`` for an NV12 source scaled into an I420
    ///   destination of another size (scale into NV12, or convert first).
    public static func scale(
        _ source: VideoFrameBuffer, into destination: VideoFrameBuffer, filter: ScalingFilter = .bilinear
    ) throws(CaptureError) {
        try cropAndScale(source, crop: CropRect(source.dimensions), into: destination, filter: filter)
    }

    /// Copies `source` into `destination` of the same size, converting NV12 ↔ I420 as needed.
    public static func copy(_ source: VideoFrameBuffer, into destination: VideoFrameBuffer) throws(CaptureError) {
        guard source.dimensions == destination.dimensions else {
            throw CaptureError(
                .invalidArgument, "cannot copy a \(source.dimensions) frame into \(destination.dimensions)")
        }
        try scale(source, into: destination, filter: .none)
    }

    /// Crops `crop` out of `source` and scales it to the size of `destination` (which may be either layout).
    ///
    /// The crop origin is rounded down to even coordinates so that chroma stays aligned (4:2:0); the crop size is
    /// kept. Cropping to the centre is ``centeredCrop(of:aspectRatio:)``.
    ///
    /// - Throws: ``CaptureError/Code-swift.struct/invalidArgument`` when `crop` is empty or not inside the source,
    ///   the destination is the source, or for an NV12 source scaled into an I420 destination of another size.
    public static func cropAndScale(
        _ source: VideoFrameBuffer, crop: CropRect, into destination: VideoFrameBuffer,
        filter: ScalingFilter = .bilinear
    ) throws(CaptureError) {
        guard source !== destination else {
            throw CaptureError(.invalidArgument, "cannot scale a frame buffer into itself")
        }
        let x = crop.x & ~1, y = crop.y & ~1
        guard crop.width > 0, crop.height > 0, x >= 0, y >= 0, x + crop.width <= source.width,
            y + crop.height <= source.height
        else {
            throw CaptureError(.invalidArgument, "crop \(crop) is not inside a \(source.dimensions) frame")
        }
        let sameSize = crop.dimensions == destination.dimensions
        let (cw, ch) = (Int32(crop.width), Int32(crop.height))
        let (dw, dh) = (Int32(destination.width), Int32(destination.height))
        let srcY = source.plane(0) + y * source.stride(0) + x
        let result: Int32
        switch (source.format, destination.format) {
        case (.nv12, .nv12):
            let srcUV = source.plane(1) + y / 2 * source.stride(1) + x
            result = NV12Scale(
                srcY, source.int32Stride(0), srcUV, source.int32Stride(1), cw, ch,
                destination.mutablePlane(0), destination.int32Stride(0),
                destination.mutablePlane(1), destination.int32Stride(1), dw, dh, filter.libyuv)
        case (.nv12, .i420):
            guard sameSize else {
                throw CaptureError(
                    .invalidArgument, "scaling NV12 into I420 is not supported; scale into an NV12 buffer")
            }
            let srcUV = source.plane(1) + y / 2 * source.stride(1) + x
            result = NV12ToI420(
                srcY, source.int32Stride(0), srcUV, source.int32Stride(1),
                destination.mutablePlane(0), destination.int32Stride(0),
                destination.mutablePlane(1), destination.int32Stride(1),
                destination.mutablePlane(2), destination.int32Stride(2), cw, ch)
        case (.i420, _):
            let srcU = source.plane(1) + y / 2 * source.stride(1) + x / 2
            let srcV = source.plane(2) + y / 2 * source.stride(2) + x / 2
            result = PlanarTarget.write(into: destination) { t in
                I420Scale(
                    srcY, source.int32Stride(0), srcU, source.int32Stride(1), srcV, source.int32Stride(2), cw, ch,
                    t.y, t.yStride, t.u, t.uStride, t.v, t.vStride, dw, dh, filter.libyuv)
            }
        }
        guard result == 0 else { throw CaptureError(.conversionFailed, "libyuv scaling failed (\(result))") }
    }

    /// The largest centred rectangle of `dimensions` with the aspect ratio `aspectRatio` (width : height), origin on
    /// even coordinates. A non-positive ratio gives the whole frame.
    public static func centeredCrop(of dimensions: Dimensions, aspectRatio: Dimensions) -> CropRect {
        guard aspectRatio.width > 0, aspectRatio.height > 0, dimensions.width > 0, dimensions.height > 0 else {
            return CropRect(dimensions)
        }
        // Bounded so that the products below cannot overflow.
        let limit = 1 << 30
        let dimensions = Dimensions(width: min(dimensions.width, limit), height: min(dimensions.height, limit))
        let aspectRatio = Dimensions(width: min(aspectRatio.width, limit), height: min(aspectRatio.height, limit))
        let width = max(1, min(dimensions.width, dimensions.height * aspectRatio.width / aspectRatio.height))
        let height = max(1, min(dimensions.height, dimensions.width * aspectRatio.height / aspectRatio.width))
        return CropRect(
            x: (dimensions.width - width) / 2 & ~1, y: (dimensions.height - height) / 2 & ~1,
            width: width, height: height)
    }
}

extension VideoFrameBuffer {
    /// Stride of plane `index` as libyuv's `int`.
    func int32Stride(_ index: Int) -> Int32 { Int32(truncatingIfNeeded: stride(index)) }
}
