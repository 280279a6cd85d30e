/// How a ``VideoSender`` answers generic NACKs (RFC 4585): from a history of the packets it sent, either wrapped in
/// RTX (RFC 4588: own payload type and SSRC, the original sequence number first in the payload) or, when no RTX was
/// negotiated, as the original packet again.
public struct RetransmissionConfiguration: Sendable, Hashable, Codable {
    /// The RTX payload type (`a=rtpmap:<pt> rtx/90000` with `apt` the media's), or `nil` to resend on the media SSRC.
    public var rtxPayloadType: UInt8?
    /// The RTX stream's SSRC (`a=ssrc-group:FID <media> <rtx>`).
    public var rtxSSRC: UInt32
    /// Packets kept for retransmission, a power of two (rounded up): a fixed ring allocated once. 1024 packets hold
    /// about 4 s of 720p at 2.5 Mbit/s.
    public var historyPackets: Int
    /// Packets older than this are not resent (the receiver has given up on them).
    public var maximumAge: Duration

    /// Creates a configuration.
    public init(
        rtxPayloadType: UInt8? = 97, rtxSSRC: UInt32 = .random(in: .min ... .max), historyPackets: Int = 1024,
        maximumAge: Duration = .milliseconds(1_500)
    ) {
        self.rtxPayloadType = rtxPayloadType
        self.rtxSSRC = rtxSSRC
        self.historyPackets = historyPackets
        self.maximumAge = maximumAge
    }
}
