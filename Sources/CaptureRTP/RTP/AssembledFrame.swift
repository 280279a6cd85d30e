public import CaptureCore

/// A complete VP8 frame reassembled from RTP packets.
public struct AssembledFrame: Sendable, Hashable, Codable {
    /// The encoded VP8 frame (payload descriptors removed).
    public var bytes: [UInt8]
    /// The frame's RTP timestamp.
    public var rtpTimestamp: UInt32
    /// Whether the VP8 frame tag marks a key frame (RFC 6386 §9.1: bit 0 of the first byte is 0).
    public var isKeyFrame: Bool
    /// The rotation from the CVO extension (0° when absent).
    public var rotation: VideoRotation
    /// The VP8 picture ID, if the sender included one.
    public var pictureID: UInt16?
    /// The sender's SSRC.
    public var ssrc: UInt32
    /// The sequence number of the frame's first packet.
    public var firstSequenceNumber: UInt16
    /// The sequence number of the frame's last packet.
    public var lastSequenceNumber: UInt16
    /// How many packets carried the frame.
    public var packetCount: Int
    /// The arrival time of the frame's last-arriving packet, in the caller's nanosecond clock.
    public var arrivalTimeNs: UInt64
    /// The temporal layer (the payload descriptor's TID, RFC 7741), when the sender layers its stream.
    public var temporalLayerIndex: UInt8?
    /// The descriptor's Y bit: the frame depends only on base-layer frames.
    public var isLayerSync = false
    /// The descriptor's TL0PICIDX, when present.
    public var tl0PictureIndex: UInt8?

    /// Creates a frame.
    public init(
        bytes: [UInt8], rtpTimestamp: UInt32, isKeyFrame: Bool, rotation: VideoRotation, pictureID: UInt16?,
        ssrc: UInt32, firstSequenceNumber: UInt16, lastSequenceNumber: UInt16, packetCount: Int, arrivalTimeNs: UInt64
    ) {
        self.bytes = bytes
        self.rtpTimestamp = rtpTimestamp
        self.isKeyFrame = isKeyFrame
        self.rotation = rotation
        self.pictureID = pictureID
        self.ssrc = ssrc
        self.firstSequenceNumber = firstSequenceNumber
        self.lastSequenceNumber = lastSequenceNumber
        self.packetCount = packetCount
        self.arrivalTimeNs = arrivalTimeNs
    }
}

/// Why the assembler gave up on a frame.
public enum AssembledFrameDropReason: Sendable, Hashable, Codable {
    /// Packets of the frame were lost (a sequence gap outlasted the reorder window or delay).
    case packetsLost
    /// The frame was complete but is a delta frame after a loss (or at the start) and no key frame came yet.
    case waitingForKeyFrame
    /// The frame's packets are inconsistent (a new frame started before the marker, or no frame start).
    case inconsistent
}

/// What a ``VP8FrameAssembler`` has seen so far.
public struct VP8ReceiverStatistics: Sendable, Hashable, Codable {
    /// Valid VP8 packets accepted (duplicates excluded).
    public var packetsReceived: Int = 0
    /// Packets received a second time.
    public var duplicates: Int = 0
    /// Packets that arrived after a packet with a higher sequence number.
    public var reordered: Int = 0
    /// Packets that arrived after their frame was emitted or given up.
    public var late: Int = 0
    /// Packets expected from the sequence numbers but never received (RFC 3550 cumulative loss; never negative).
    public var lost: Int = 0
    /// Packets that are not valid RTP or VP8 (counted and ignored).
    public var malformed: Int = 0
    /// Packets with another payload type (counted and ignored).
    public var wrongPayloadType: Int = 0
    /// Frames emitted.
    public var framesComplete: Int = 0
    /// Frames dropped (see ``AssembledFrameDropReason``).
    public var framesDropped: Int = 0
    /// Key-frame requests emitted.
    public var keyFrameRequests: Int = 0

    /// Creates empty statistics.
    public init() {}
}
