/// What a ``WebRTCTransport`` has seen and done.
public struct WebRTCTransportStatistics: Sendable, Hashable, Codable {
    /// Datagrams received, by what their first byte says (RFC 7983).
    public var stunReceived = 0
    /// Datagrams from a TURN server handled by the agent (responses, Data indications, ChannelData off the media
    /// route); ChannelData on the media route is counted by what it carries.
    public var turnReceived = 0
    /// DTLS records received.
    public var dtlsReceived = 0
    /// RTCP datagrams received and handed to the sender.
    public var rtcpReceived = 0
    /// RTP datagrams received (a send-only publisher expects none).
    public var rtpReceived = 0
    /// Datagrams that are none of the above: dropped.
    public var unknownReceived = 0
    /// Media datagrams (RTP, RTCP) sent on the selected pair.
    public var mediaSent = 0
    /// Media datagrams not sent because there was no selected pair or consent was lost.
    public var mediaBlocked = 0
    /// Media datagrams the socket refused.
    public var mediaSendErrors = 0
    /// Encoded frames of a simulcast layer the connection was not configured with (an `EncodedFrame/simulcastIndex`
    /// past ``ConnectionMedia/simulcastLayers``): dropped.
    public var framesForUnknownLayer = 0
    /// RTCP key-frame requests (PLI, FIR) and NACKs that name an SSRC we do not send: counted and ignored.
    public var feedbackForUnknownSSRC = 0
    /// Encoded frames dropped before sending because the driver thread had fallen 30 frames behind the encoder (a
    /// key frame is asked for each time).
    public var framesDropped = 0
    /// From the start (the peer's description taken) to ICE's selected pair, once there is one.
    public var iceConnectedAfter: Duration?
    /// From the start (the peer's description taken) to DTLS connected, once it is.
    public var dtlsConnectedAfter: Duration?
    /// Transport-wide congestion control: packets numbered, feedback both ways, bytes in flight.
    public var transportWideCC = TransportWideCCStatistics()
    /// The pacer's figures, once media is sent (`nil` before, and for a connection that only receives).
    public var pacer: PacerStatistics?

    /// Creates empty statistics.
    public init() {}
}
