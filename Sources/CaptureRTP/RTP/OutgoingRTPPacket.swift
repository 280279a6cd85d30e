/// One packet the ``VP8Packetizer`` built, lent to its `emit` callback.
///
/// The buffer belongs to the packetizer and is reused for the next packet: use or copy it inside the callback. It
/// holds ``length`` packet bytes followed by free space (at least the configured trailer capacity), so SRTP can
/// protect the packet in place and set ``length`` to the grown size.
public struct OutgoingRTPPacket {
    /// The whole reusable buffer (capacity: maximum packet size plus trailer capacity).
    public let buffer: UnsafeMutableRawBufferPointer
    /// The number of valid bytes at the start of ``buffer``; may be raised (up to `buffer.count`) by in-place
    /// protection.
    public var length: Int
    /// The packet's RTP sequence number.
    public let sequenceNumber: UInt16
    /// The packet's RTP timestamp.
    public let rtpTimestamp: UInt32
    /// Whether this is the first packet of its frame.
    public let isFirstPacketOfFrame: Bool
    /// Whether this is the last packet of its frame (the marker bit is set).
    public let isLastPacketOfFrame: Bool
    /// Where the two data bytes of the transport-wide sequence number element are in ``buffer`` (written 0), or
    /// `nil` when the packetizer sends no such element
    /// (``RTPPacketizerConfiguration/transportSequenceNumberExtensionID``).
    public let transportSequenceNumberOffset: Int?

    /// The packet's bytes (`buffer[0..<length]`).
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[0..<min(max(length, 0), buffer.count)])
    }
}
