/// What a connection's pacer is doing and has done: the queue in front of the network, the rate it drains at, the
/// probes it sent, and whether it told the encoder to drop frames.
///
/// Sizes are RTP sizes (no SRTP tag, no IP/UDP), as the congestion controller counts them.
public struct PacerStatistics: Sendable, Hashable, Codable {
    /// The rate packets leave at, bits per second: 1.1 × the transport-wide estimate once feedback arrived, 2.5 × the
    /// target before (and always with receiver-report rate control, which has no estimate to pace close to).
    public var pacingRate = 0
    /// The rate the pacer actually drains at: the pacing rate, raised while the queue would otherwise take more than
    /// 2 s to drain.
    public var effectiveRate = 0
    /// Packets waiting now.
    public var queuedPackets = 0
    /// Their bytes.
    public var queuedBytes = 0
    /// How long the oldest waiting packet has waited.
    public var queueDelay: Duration = .zero
    /// How long the queue takes to drain at ``effectiveRate``.
    public var expectedQueueTime: Duration = .zero
    /// Packets the pacer released (media and retransmissions).
    public var packetsSent = 0
    /// Time those packets spent in the queue, summed (the W3C `totalPacketSendDelay` of the stream, RTX included).
    public var totalQueueDelay: Duration = .zero
    /// Padding packets sent for probes.
    public var paddingPacketsSent = 0
    /// Their bytes.
    public var paddingBytesSent = 0
    /// Probe clusters begun.
    public var probeClustersStarted = 0
    /// Probe clusters that sent all they were asked to.
    public var probeClustersCompleted = 0
    /// Probe clusters given up (no media to start with, or waited or ran too long).
    public var probeClustersAbandoned = 0
    /// Times the drain rate was raised above the pacing rate to empty a long queue.
    public var queueTimeLimitRaises = 0
    /// The congestion window (bytes in flight the transport-wide controller allows before pushing the encoder's rate
    /// back), or `nil` without transport-wide feedback.
    public var congestionWindow: Int?
    /// The factor the window's pushback applies to the encoder's target (1 when the window is not full).
    public var pushbackRatio = 1.0
    /// Whether the encoder is told to drop frames now (the window full, or over 2 s of data queued).
    public var isDroppingFrames = false
    /// How often the encoder was told to start dropping frames.
    public var frameDroppingEpisodes = 0
    /// Retransmissions not sent because they would have taken more than the target rate's worth in a second.
    public var retransmissionsRateLimited = 0

    /// Nothing sent, nothing queued.
    public init() {}
}
