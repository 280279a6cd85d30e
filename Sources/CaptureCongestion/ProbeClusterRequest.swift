/// A burst of packets the owner must send at a given rate so the estimator can measure the path beyond the current
/// target.
///
/// ## What it is
///
/// An output of ``SendSideBandwidthEstimator``: send at least ``minimumBytes`` and ``minimumPackets`` packets at
/// ``bitrate`` (padding, or duplicates of recent media), each marked with ``id`` in its ``PacketResult``. The
/// receive rate of the cluster, from feedback, becomes a probe result. libwebrtc's `ProbeClusterConfig` carries
/// the same (a 15 ms cluster of at least 5 packets).
///
/// ## Threading
///
/// A plain value.
public struct ProbeClusterRequest: Sendable, Hashable {
    /// The cluster's identifier, to be echoed in ``PacketResult/probeClusterID``.
    public var id: Int
    /// The rate to send the cluster at, bit/s.
    public var bitrate: Int
    /// The fewest bytes to send (the rate over ``duration``).
    public var minimumBytes: Int
    /// The fewest packets to send.
    public var minimumPackets: Int
    /// How long the cluster should last at ``bitrate``.
    public var duration: Duration

    /// A request.
    public init(id: Int, bitrate: Int, minimumBytes: Int, minimumPackets: Int, duration: Duration) {
        self.id = id
        self.bitrate = bitrate
        self.minimumBytes = minimumBytes
        self.minimumPackets = minimumPackets
        self.duration = duration
    }
}
