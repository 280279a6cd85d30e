public import CaptureCore
internal import CVPX

/// A libvpx VP8 decoder producing I420 frame buffers from a `FrameBufferPool`.
///
/// Each decoded picture is copied once out of libvpx's internal frame into a pooled I420 buffer (libvpx reuses its
/// frames on the next call). The pool is recreated when the stream's size changes. Not thread-safe: decode from one
/// thread at a time.
public final class VP8Decoder {
    /// How many decoded buffers may be held by callers at once before ``decode(_:)`` fails with `invalidState`.
    public let poolCapacity: Int
    /// The pool the current stream size decodes into, or `nil` before the first picture.
    public private(set) var pool: FrameBufferPool?

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    /// Creates a decoder.
    ///
    /// - Parameter poolCapacity: Decoded buffers a caller may hold at once (at least 1).
    /// - Throws: `CaptureError` `conversionFailed` when libvpx cannot create a VP8 decoder.
    public init(poolCapacity: Int = 8) throws(CaptureError) {
        self.poolCapacity = max(1, poolCapacity)
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        var config = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
        let status = cvpx_codec_dec_init(context, vpx_codec_vp8_dx(), &config, 0)
        guard status == VPX_CODEC_OK else {
            context.deallocate()
            throw vpxError(
                .conversionFailed, "VP8 decoder initialisation failed", status: status, context: nil,
                call: "vpx_codec_dec_init")
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one compressed VP8 frame.
    ///
    /// - Returns: The picture, or `nil` when the frame produced none (libvpx shows no picture for it).
    /// - Throws: `CaptureError` `malformedFile` for an empty or corrupt frame (libvpx rejects it), `invalidState`
    ///   when every pooled buffer is still held by the caller.
    public func decode(_ bytes: [UInt8]) throws(CaptureError) -> VideoFrameBuffer? {
        guard !bytes.isEmpty else { throw CaptureError(.malformedFile, "empty VP8 frame") }
        let status = bytes.withUnsafeBufferPointer { data in
            vpx_codec_decode(context, data.baseAddress, UInt32(data.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .malformedFile, "VP8 frame of \(bytes.count) bytes could not be decoded", status: status,
                context: context, call: "vpx_codec_decode")
        }
        var iterator: vpx_codec_iter_t? = nil
        var result: VideoFrameBuffer?
        while let image = vpx_codec_get_frame(context, &iterator) {
            result = try copy(image)
        }
        return result
    }

    /// Decodes an ``EncodedFrame`` into a `VideoFrame` that keeps its rotation and capture time.
    ///
    /// - Returns: The frame, or `nil` when the frame produced no picture.
    /// - Throws: As ``decode(_:)``.
    public func decode(_ frame: EncodedFrame) throws(CaptureError) -> VideoFrame? {
        guard let buffer = try decode(frame.bytes) else { return nil }
        return VideoFrame(buffer: buffer, rotation: frame.rotation, timestampNs: frame.captureTimeNs)
    }

    /// Copies libvpx's I420 picture into a pooled buffer.
    private func copy(_ image: UnsafePointer<vpx_image_t>) throws(CaptureError) -> VideoFrameBuffer {
        let picture = image.pointee
        guard picture.fmt == VPX_IMG_FMT_I420, picture.d_w > 0, picture.d_h > 0 else {
            throw CaptureError(.conversionFailed, "VP8 decoder produced an unexpected picture format \(picture.fmt)")
        }
        let dimensions = Dimensions(width: Int(picture.d_w), height: Int(picture.d_h))
        if pool?.dimensions != dimensions {
            pool = FrameBufferPool(format: .i420, dimensions: dimensions, capacity: poolCapacity)
        }
        guard let buffer = pool?.take() else {
            throw CaptureError(
                .invalidState, "all \(poolCapacity) decoded buffers are still in use; release frames before decoding")
        }
        for index in 0..<3 {
            let (plane, stride) =
                switch index {
                case 0: (picture.planes.0, picture.stride.0)
                case 1: (picture.planes.1, picture.stride.1)
                default: (picture.planes.2, picture.stride.2)
                }
            guard let source = plane else {
                throw CaptureError(.conversionFailed, "VP8 decoder returned a picture without plane \(index)")
            }
            let layout = buffer.planes[index]
            let destination = buffer.mutablePlane(index)
            for row in 0..<layout.rows {
                (destination + row * layout.stride).update(from: source + row * Int(stride), count: layout.rowBytes)
            }
        }
        return buffer
    }
}
