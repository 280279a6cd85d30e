/// Transport-wide congestion control (TWCC: the transport-wide sequence number extension and its RTCP feedback,
/// draft-holmer-rmcat-transport-wide-cc-extensions-01) on one connection, both ways.
///
/// These are our own figures: W3C webrtc-stats has no TWCC fields (`RTCTransportStats` names none), so they are
/// kept here rather than in ``RTCTransportStats``. The sending half is zero unless the peer's answer accepted the
/// extension and `transport-cc`; the receiving half unless the peer numbers what it sends us. Encoded (`Codable`),
/// the times are seconds as a `Double`, as in ``WebRTCStatsReport``.
public struct TransportWideCCStatistics: Sendable, Hashable, Codable {
    /// Whether the packets we send carry the transport-wide sequence number (negotiated).
    public var isSending = false
    /// RTP packets we sent with a transport-wide sequence number, retransmissions included.
    public var packetsSent = 0
    /// Of those, RTX retransmissions (each with a number of its own).
    public var retransmissionsSent = 0
    /// Transport-wide feedback messages received from the peer.
    public var feedbackReceived = 0
    /// Packets of ours the feedback reported received (each packet once).
    public var packetsReportedReceived = 0
    /// Packets of ours the feedback reported lost (each once; a late arrival reported later also counts in
    /// ``packetsReportedReceived``).
    public var packetsReportedLost = 0
    /// Feedback statuses about packets we never sent, sent too long ago to remember, or already reported: ignored.
    public var ignoredStatuses = 0
    /// RTP bytes sent and not yet reported on by any feedback (the RTP packets' sizes: no SRTP tag, no IP/UDP).
    public var bytesInFlight = 0
    /// The latest arrival the last feedback reported, on our clock since the connection started (the peer's clock
    /// is mapped onto ours at the first feedback, so only differences between arrivals are exact), or `nil`
    /// before any feedback reported a packet received.
    public var lastFeedbackNewestArrival: Duration?
    /// When the last feedback arrived, since the connection started, or `nil` before the first.
    public var lastFeedbackReceived: Duration?
    /// Whether we send feedback for what the peer sends us (the peer numbers its packets).
    public var isReceiving = false
    /// RTP packets received with a transport-wide sequence number (duplicates not counted).
    public var packetsReceived = 0
    /// Transport-wide feedback messages we sent (SRTCP, one per datagram).
    public var feedbackSent = 0
    /// The congestion controller's target, bits per second (also the candidate pair's W3C
    /// `availableOutgoingBitrate`), or `nil` when it does not run (no transport-wide feedback negotiated).
    public var estimatedBitrate: Int?
    /// Which estimate decided ``estimatedBitrate``: `start`, `delayBased`, `probe`, `lossBased`, `receiverCeiling`,
    /// `configuredMaximum` or `configuredMinimum`.
    public var limitation: String?
    /// The throughput the feedback acknowledged, bits per second, once measured.
    public var acknowledgedBitrate: Int?
    /// The standing queue the feedback shows: one-way delay above its minimum over the last 10 s.
    public var queueDelay: Duration?
    /// Probe clusters the controller asked for that were never sent in full (the pacer abandoned them: no media to
    /// start with, or they waited or ran too long).
    public var probeClustersUnsent = 0

    /// All zero.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case isSending, packetsSent, retransmissionsSent, feedbackReceived, packetsReportedReceived
        case packetsReportedLost, ignoredStatuses, bytesInFlight, lastFeedbackNewestArrival, lastFeedbackReceived
        case isReceiving, packetsReceived, feedbackSent, estimatedBitrate, limitation, acknowledgedBitrate
        case queueDelay, probeClustersUnsent
    }

    /// Decodes the figures (times in seconds).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isSending = try container.decode(Bool.self, forKey: .isSending)
        packetsSent = try container.decode(Int.self, forKey: .packetsSent)
        retransmissionsSent = try container.decode(Int.self, forKey: .retransmissionsSent)
        feedbackReceived = try container.decode(Int.self, forKey: .feedbackReceived)
        packetsReportedReceived = try container.decode(Int.self, forKey: .packetsReportedReceived)
        packetsReportedLost = try container.decode(Int.self, forKey: .packetsReportedLost)
        ignoredStatuses = try container.decode(Int.self, forKey: .ignoredStatuses)
        bytesInFlight = try container.decode(Int.self, forKey: .bytesInFlight)
        lastFeedbackNewestArrival = try container.decodeSeconds(forKey: .lastFeedbackNewestArrival)
        lastFeedbackReceived = try container.decodeSeconds(forKey: .lastFeedbackReceived)
        isReceiving = try container.decode(Bool.self, forKey: .isReceiving)
        packetsReceived = try container.decode(Int.self, forKey: .packetsReceived)
        feedbackSent = try container.decode(Int.self, forKey: .feedbackSent)
        estimatedBitrate = try container.decodeIfPresent(Int.self, forKey: .estimatedBitrate)
        limitation = try container.decodeIfPresent(String.self, forKey: .limitation)
        acknowledgedBitrate = try container.decodeIfPresent(Int.self, forKey: .acknowledgedBitrate)
        queueDelay = try container.decodeSeconds(forKey: .queueDelay)
        probeClustersUnsent = try container.decodeIfPresent(Int.self, forKey: .probeClustersUnsent) ?? 0
    }

    /// Encodes the figures (times in seconds).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(isSending, forKey: .isSending)
        try container.encode(packetsSent, forKey: .packetsSent)
        try container.encode(retransmissionsSent, forKey: .retransmissionsSent)
        try container.encode(feedbackReceived, forKey: .feedbackReceived)
        try container.encode(packetsReportedReceived, forKey: .packetsReportedReceived)
        try container.encode(packetsReportedLost, forKey: .packetsReportedLost)
        try container.encode(ignoredStatuses, forKey: .ignoredStatuses)
        try container.encode(bytesInFlight, forKey: .bytesInFlight)
        try container.encodeSeconds(lastFeedbackNewestArrival, forKey: .lastFeedbackNewestArrival)
        try container.encodeSeconds(lastFeedbackReceived, forKey: .lastFeedbackReceived)
        try container.encode(isReceiving, forKey: .isReceiving)
        try container.encode(packetsReceived, forKey: .packetsReceived)
        try container.encode(feedbackSent, forKey: .feedbackSent)
        try container.encodeIfPresent(estimatedBitrate, forKey: .estimatedBitrate)
        try container.encodeIfPresent(limitation, forKey: .limitation)
        try container.encodeIfPresent(acknowledgedBitrate, forKey: .acknowledgedBitrate)
        try container.encodeSeconds(queueDelay, forKey: .queueDelay)
        try container.encode(probeClustersUnsent, forKey: .probeClustersUnsent)
    }
}
