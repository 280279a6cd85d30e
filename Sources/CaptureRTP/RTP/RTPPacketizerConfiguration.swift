/// How a ``VP8Packetizer`` builds packets.
///
/// The SSRC, the first sequence number and the first picture ID default to fresh random values from the system's
/// secure generator (`getrandom`), as RFC 3550 §5.1 asks.
public struct RTPPacketizerConfiguration: Sendable, Hashable, Codable {
    /// The smallest whole-packet size the packetizer accepts; smaller values are raised to it.
    public static let minimumPacketSize = 64

    /// The largest RTP packet, header and extension included (1200 leaves room for IP/UDP/SRTP on common paths).
    public var maxPacketSize: Int
    /// The RTP payload type.
    public var payloadType: UInt8
    /// The synchronization source.
    public var ssrc: UInt32
    /// The sequence number of the first packet.
    public var initialSequenceNumber: UInt16
    /// The 15-bit picture ID of the first frame.
    public var initialPictureID: UInt16
    /// The RFC 8285 one-byte extension ID (1...14) for the CVO video-orientation extension, or `nil` to not send it.
    public var videoOrientationExtensionID: UInt8?
    /// The RFC 8285 one-byte extension ID (1...14) for the media identification extension (`sdes:mid`, RFC 8843
    /// §15), sent on every packet with ``mid``, or `nil` to not send it. BUNDLE receivers such as Janus map packets to
    /// their m-line by it.
    public var midExtensionID: UInt8?
    /// The RFC 8285 one-byte extension ID (1...14) for the transport-wide sequence number
    /// (``TransportSequenceNumberExtension``, negotiated with `transport-cc`), or `nil` to not send it. When set,
    /// every packet carries the element, its number left 0: the sender writes the transport-wide number in place
    /// (at ``OutgoingRTPPacket/transportSequenceNumberOffset``) as it hands the packet out.
    public var transportSequenceNumberExtensionID: UInt8?
    /// The m-line's `a=mid` value sent in the mid extension (1…16 bytes of UTF-8; longer values are not sent).
    public var mid: String
    /// Bytes kept free after each packet in its buffer, so SRTP can append its authentication tag in place.
    public var trailerCapacity: Int
    /// The RFC 8285 one-byte extension ID (1...14) for the RTP stream identifier (``RTPStreamIDExtension/uri``,
    /// RFC 8852 §3.1), sent on every media packet with ``rid`` (after the mid element), or `nil` to not send it. A
    /// simulcast receiver (Janus) maps each layer's SSRC to its `a=rid` by it.
    ///
    /// A stream that sends it and answers NACKs with RTX needs ``repairedRidExtensionID`` too: an RTX copy must not
    /// carry `rtp-stream-id` (the receiver would take the RTX SSRC for the layer's media SSRC), so ``RTXPacket``
    /// rewrites the element to `repaired-rtp-stream-id`, or, with no id for that, blanks it to padding, and then a
    /// receiver that learns SSRCs from these extensions cannot map the RTX stream and drops its packets.
    public var ridExtensionID: UInt8?
    /// The `a=rid` value sent in the rid extension: an RFC 8851 rid-id (``RTPStreamIDExtension/isValid(_:)``: 1…16
    /// bytes of letters, digits, `-` and `_`); any other value (the default, empty) is not sent.
    public var rid: String
    /// The RFC 8285 one-byte extension ID (1...14) for the repaired RTP stream identifier
    /// (``RTPStreamIDExtension/repairedURI``, RFC 8852 §3.2), or `nil`: what RTX copies of this stream's packets
    /// carry in place of the rid element (same value, same length, only the ID changes). Used only while the rid is
    /// sent.
    public var repairedRidExtensionID: UInt8?

    /// Creates a configuration.
    public init(
        maxPacketSize: Int = 1200, payloadType: UInt8 = 96, ssrc: UInt32 = .random(in: .min ... .max),
        initialSequenceNumber: UInt16 = .random(in: .min ... .max), initialPictureID: UInt16 = .random(in: 0...0x7FFF),
        videoOrientationExtensionID: UInt8? = nil, midExtensionID: UInt8? = nil, mid: String = "0",
        trailerCapacity: Int = 16, transportSequenceNumberExtensionID: UInt8? = nil, ridExtensionID: UInt8? = nil,
        rid: String = "", repairedRidExtensionID: UInt8? = nil
    ) {
        self.maxPacketSize = maxPacketSize
        self.payloadType = payloadType
        self.ssrc = ssrc
        self.initialSequenceNumber = initialSequenceNumber
        self.initialPictureID = initialPictureID
        self.videoOrientationExtensionID = videoOrientationExtensionID
        self.midExtensionID = midExtensionID
        self.mid = mid
        self.trailerCapacity = trailerCapacity
        self.transportSequenceNumberExtensionID = transportSequenceNumberExtensionID
        self.ridExtensionID = ridExtensionID
        self.rid = rid
        self.repairedRidExtensionID = repairedRidExtensionID
    }
}
