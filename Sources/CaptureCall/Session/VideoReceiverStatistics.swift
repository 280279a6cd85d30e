/// What a ``VideoReceiver`` has seen so far.
public struct VideoReceiverStatistics: Sendable, Hashable, Codable {
    /// Datagrams that arrived on the RTP socket (before simulated loss).
    public var datagrams = 0
    /// RTP packets dropped on purpose by the loss simulator.
    public var packetsDroppedBySimulation = 0
    /// RTP packets passed to the reassembler.
    public var packets = 0
    /// Bytes of those packets.
    public var bytes = 0
    /// Packets lost (sequence gaps the reorder window did not fill).
    public var packetsLost = 0
    /// Frames the reassembler finished or gave up: ``framesComplete`` + ``framesLost``.
    public var framesReceived = 0
    /// Frames complete and decodable.
    public var framesComplete = 0
    /// Frames given up (missing packets, or a delta frame while waiting for a key frame).
    public var framesLost = 0
    /// Frames the VP8 decoder turned into pictures.
    public var framesDecoded = 0
    /// Key frames among the decoded frames.
    public var keyFramesDecoded = 0
    /// Frames the decoder rejected (counted; the receiver then waits for a key frame).
    public var decodeErrors = 0
    /// Picture loss indications sent.
    public var plisSent = 0
    /// Receiver reports sent.
    public var receiverReportsSent = 0
    /// Sender reports received.
    public var senderReportsReceived = 0
    /// Interarrival jitter (RFC 3550 §6.4.1), in milliseconds.
    public var jitterMs = 0.0
    /// The received RTP bit rate since the first packet, in kbit/s.
    public var bitrateKbps = 0.0
    /// Packets that failed SRTP/SRTCP authentication or replay checks (never decoded).
    public var srtpFailures = 0
    /// RTP or RTCP packets that did not parse (counted and ignored).
    public var malformed = 0
    /// RTP packets from a second source (another SSRC or address) while the current sender is active, dropped:
    /// the receiver follows one sender, and switches only after it has been silent for
    /// ``VideoReceiver/sourceSwitchSilence`` (a restarted or moved sender).
    public var strayPackets = 0
    /// RTCP packets the socket refused to send (counted; never fatal).
    public var sendErrors = 0
    /// RTP packets recorded with a transport-wide sequence number (when configured; duplicates not counted), as of
    /// the last feedback sent.
    public var transportNumberedPackets = 0
    /// Transport-wide feedback messages sent to the sender.
    public var transportFeedbackSent = 0

    /// Creates empty statistics.
    public init() {}
}
