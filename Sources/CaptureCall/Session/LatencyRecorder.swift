/// Glass-to-wire latencies (capture timestamp → last packet of the frame handed to the socket), kept in a fixed
/// ring of the most recent samples so that recording one allocates nothing.
public struct LatencyRecorder: Sendable, Hashable, Codable {
    /// A summary of the recorded samples, in milliseconds.
    public struct Summary: Sendable, Hashable, Codable {
        /// How many samples the summary covers (at most the recorder's capacity).
        public var count: Int
        /// The median.
        public var p50Ms: Double
        /// The 99th percentile.
        public var p99Ms: Double
        /// The largest sample.
        public var maxMs: Double

        /// Creates a summary.
        public init(count: Int = 0, p50Ms: Double = 0, p99Ms: Double = 0, maxMs: Double = 0) {
            self.count = count
            self.p50Ms = p50Ms
            self.p99Ms = p99Ms
            self.maxMs = maxMs
        }
    }

    private var samplesNs: [UInt64]
    private var next = 0
    private var filled = 0

    /// Creates a recorder keeping the last `capacity` samples (at least one).
    public init(capacity: Int = 4096) {
        samplesNs = [UInt64](repeating: 0, count: max(1, capacity))
    }

    /// Records one latency in nanoseconds. Allocates nothing.
    public mutating func record(nanoseconds: UInt64) {
        samplesNs[next] = nanoseconds
        next = (next + 1) % samplesNs.count
        filled = min(filled + 1, samplesNs.count)
    }

    /// The percentiles of the recorded samples (all zero when none were recorded). Sorts a copy: not for hot paths.
    public var summary: Summary {
        guard filled > 0 else { return Summary(count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0) }
        let sorted = samplesNs[0..<filled].sorted()
        func percentile(_ p: Double) -> Double {
            let index = min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))
            return Double(sorted[index]) / 1e6
        }
        return Summary(count: filled, p50Ms: percentile(0.5), p99Ms: percentile(0.99), maxMs: percentile(1))
    }
}
