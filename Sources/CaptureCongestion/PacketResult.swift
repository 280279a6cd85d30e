/// What transport-wide feedback said about one packet the sender sent.
///
/// ## What it is
///
/// The estimator's only view of a packet: when it left, how big it was, whether and when it arrived, and whether it
/// belonged to a probe cluster. The connection builds these from its send history when a TWCC feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01) arrives; this module does not parse feedback itself, so it
/// can be fed from TWCC, from RFC 8888 feedback, or from a test harness alike.
///
/// ## Clocks
///
/// ``sendTime`` is on the sender's monotonic clock (`ContinuousClock`, as every instant in this package).
/// ``arrival`` is on the receiver's clock, whose origin is unknown and irrelevant: only differences between
/// arrivals are used (TWCC gives a reference time plus deltas). Hostile values are tolerated: arrivals going back,
/// huge gaps, negative sizes (taken as zero) never trap; the inter-arrival stage drops or resets on them.
///
/// ## Threading
///
/// A plain value.
public struct PacketResult: Sendable, Hashable {
    /// When the packet left the sender (its pacer), on the sender's clock.
    public var sendTime: ContinuousClock.Instant
    /// The packet's size in bytes as counted for rates: the RTP packet (header, extensions, payload, padding).
    public var size: Int
    /// When it arrived, on the receiver's clock (any origin), or nil if the feedback reported it lost.
    public var arrival: Duration?
    /// The probe cluster it was sent for (see ``ProbeClusterRequest/id``), or nil for media.
    public var probeClusterID: Int?

    /// A result; `arrival` nil means lost.
    public init(sendTime: ContinuousClock.Instant, size: Int, arrival: Duration?, probeClusterID: Int? = nil) {
        self.sendTime = sendTime
        self.size = size
        self.arrival = arrival
        self.probeClusterID = probeClusterID
    }
}

/// One transport feedback message, turned into per-packet results in transport sequence order.
///
/// ## What it is
///
/// The results of every packet the feedback covered (received or lost), in the order of their transport-wide
/// sequence numbers, and the local instant the feedback arrived. An empty report is allowed and ignored. The name is
/// libwebrtc's; the connection makes one from CaptureRTP's `TransportFeedbackReport`, the send history's reading of
/// an RTCP transport feedback message.
///
/// ## Threading
///
/// A plain value.
public struct TransportPacketsFeedback: Sendable, Hashable {
    /// When the feedback arrived at the sender, on the sender's clock.
    public var receivedAt: ContinuousClock.Instant
    /// The packets it covered, in transport sequence order.
    public var results: [PacketResult]

    /// A report.
    public init(receivedAt: ContinuousClock.Instant, results: [PacketResult]) {
        self.receivedAt = receivedAt
        self.results = results
    }
}
