/// Turns the feedback of a probe cluster's packets into a probe result: the rate the path delivered them at.
///
/// ## What it is
///
/// For each cluster it keeps the first and last send and arrival instants, the total bytes and packet count. Once at
/// least 80 % of the requested packets and bytes were received, the send rate (bytes but the last sent, over the
/// send interval) and the receive rate (bytes but the first received, over the receive interval) give the result:
/// `min(send, receive)`, or `0.95 × receive` when the receive rate is under 90 % of the send rate (the path is
/// saturated). Intervals of zero or over 1 s, and receive/send ratios over 2, are invalid.
///
/// ## libwebrtc
///
/// Follows `probe_bitrate_estimator.cc`. The clusters live in a fixed array of 8 slots (the oldest is replaced)
/// rather than a map.
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct ProbeBitrateEstimator {
    struct Cluster {
        var id = -1
        var firstSend: Int64 = .max
        var lastSend: Int64 = .min
        var sizeLastSend = 0
        var firstArrival: Int64 = .max
        var lastArrival: Int64 = .min
        var sizeFirstArrival = 0
        var totalSize = 0
        var packets = 0
        var minimumBytes = 0
        var minimumPackets = 0
    }

    static let slots = 8
    fileprivate(set) var clusters = [Cluster](repeating: Cluster(), count: slots)
    private var nextSlot = 0
    private(set) var lastEstimate: Double?

    /// Registers a cluster the estimator requested, so its minimums are known.
    mutating func expect(id: Int, minimumBytes: Int, minimumPackets: Int) {
        clusters[nextSlot] = Cluster(id: id, minimumBytes: minimumBytes, minimumPackets: minimumPackets)
        nextSlot = (nextSlot + 1) % Self.slots
    }

    /// Adds one received probe packet; returns a result when the cluster has enough packets.
    mutating func add(clusterID: Int, send: Int64, arrival: Int64, size: Int) -> Double? {
        guard let slot = clusters.firstIndex(where: { $0.id == clusterID }) else { return nil }
        let size = max(0, size)
        var cluster = clusters[slot]
        if send < cluster.firstSend { cluster.firstSend = send }
        if send > cluster.lastSend {
            cluster.lastSend = send
            cluster.sizeLastSend = size
        }
        if arrival < cluster.firstArrival {
            cluster.firstArrival = arrival
            cluster.sizeFirstArrival = size
        }
        if arrival > cluster.lastArrival { cluster.lastArrival = arrival }
        cluster.totalSize = cluster.totalSize &+ size
        cluster.packets += 1
        clusters[slot] = cluster

        guard Double(cluster.packets) >= 0.8 * Double(cluster.minimumPackets),
            Double(cluster.totalSize) >= 0.8 * Double(cluster.minimumBytes)
        else { return nil }
        let sendInterval = Nanoseconds.difference(cluster.lastSend, cluster.firstSend)
        let receiveInterval = Nanoseconds.difference(cluster.lastArrival, cluster.firstArrival)
        guard sendInterval > 0, sendInterval <= Nanoseconds.perSecond, receiveInterval > 0,
            receiveInterval <= Nanoseconds.perSecond
        else { return nil }
        let sendRate = Double(cluster.totalSize &- cluster.sizeLastSend) * 8 / Nanoseconds.seconds(sendInterval)
        let receiveRate =
            Double(cluster.totalSize &- cluster.sizeFirstArrival) * 8 / Nanoseconds.seconds(receiveInterval)
        guard sendRate > 0, receiveRate > 0, receiveRate / sendRate <= 2 else { return nil }
        var result = min(sendRate, receiveRate)
        if receiveRate < 0.9 * sendRate { result = 0.95 * receiveRate }
        guard result.isFinite else { return nil }
        lastEstimate = result
        return result
    }

    /// The latest result, cleared on reading.
    mutating func takeEstimate() -> Double? {
        defer { lastEstimate = nil }
        return lastEstimate
    }
}

extension ProbeBitrateEstimator {
    /// Whether a cluster with this id is registered.
    func isExpecting(_ id: Int) -> Bool { clusters.contains { $0.id == id } }
}
