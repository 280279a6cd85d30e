public import CaptureCore

/// One VP8 frame as libvpx produced it, with the capture metadata that travelled through the encoder.
public struct EncodedFrame: Sendable, Hashable, Codable {
    /// The compressed frame (an RFC 6386 VP8 frame, as stored in IVF or carried in RTP).
    public var bytes: [UInt8]
    /// Whether the frame is a key frame (decodable on its own).
    public var isKeyFrame: Bool
    /// The capture time on the 90 kHz RTP clock: `captureTimeNs × 9 / 100_000`, wrapping at 2³².
    public var rtpTimestamp: UInt32
    /// The capture time of the source frame on the monotonic clock, in nanoseconds.
    public var captureTimeNs: UInt64
    /// The clockwise rotation a renderer must apply, carried over from the source frame.
    public var rotation: VideoRotation
    /// The coded width and height (before rotation).
    public var dimensions: Dimensions
    /// The quantizer libvpx used, on its internal 0…127 scale (`VP8E_GET_LAST_QUANTIZER`, WebRTC's `qp`).
    public var qp: Int
    /// Whether no later frame references this one (libvpx's `VPX_FRAME_IS_DROPPABLE`): a receiver may lose it without
    /// harm to the following frames. The RTP packetizer maps it to the VP8 payload descriptor's N bit (RFC 7741).
    public var isDroppable: Bool
    /// The frame's temporal layer, when the stream has more than one (``VP8EncoderConfiguration/temporalLayers``).
    public var temporalLayer: VP8TemporalLayerInfo?
    /// Which simulcast encoding the frame belongs to: 0 is the lowest resolution (libwebrtc's `simulcastIdx`); 0 when
    /// the stream is not simulcast.
    public var simulcastIndex: Int

    /// Creates an encoded frame.
    public init(
        bytes: [UInt8], isKeyFrame: Bool, rtpTimestamp: UInt32, captureTimeNs: UInt64, rotation: VideoRotation,
        dimensions: Dimensions, qp: Int, isDroppable: Bool = false, temporalLayer: VP8TemporalLayerInfo? = nil,
        simulcastIndex: Int = 0
    ) {
        self.simulcastIndex = simulcastIndex
        self.bytes = bytes
        self.isKeyFrame = isKeyFrame
        self.rtpTimestamp = rtpTimestamp
        self.captureTimeNs = captureTimeNs
        self.rotation = rotation
        self.dimensions = dimensions
        self.qp = qp
        self.isDroppable = isDroppable
        self.temporalLayer = temporalLayer
    }

    /// The 90 kHz RTP timestamp of a monotonic capture time in nanoseconds (`timestampNs × 9 / 100_000`, wrapping).
    public static func rtpTimestamp(fromNanoseconds timestampNs: UInt64) -> UInt32 {
        // Split so that the multiplication cannot overflow for any UInt64 input.
        let ticks = timestampNs / 100_000 * 9 + timestampNs % 100_000 * 9 / 100_000
        return UInt32(truncatingIfNeeded: ticks)
    }
}
