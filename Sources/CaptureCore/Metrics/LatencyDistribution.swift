/// A summary of recorded durations: how many, the 50th, 90th, 99th and 99.9th percentiles, the maximum and the
/// mean, in milliseconds (see ``LatencyHistogram/distribution``).
///
/// Values come from an HDR histogram with three significant digits, so each is within 0.1 % of the exact
/// nearest-rank figure; the maximum is the highest value equivalent to the longest recorded duration.
public struct LatencyDistribution: Sendable, Hashable, Codable {
    /// The number of durations summarised.
    public var count: Int
    /// The median, in milliseconds.
    public var p50Ms: Double
    /// The 90th percentile, in milliseconds.
    public var p90Ms: Double
    /// The 99th percentile, in milliseconds.
    public var p99Ms: Double
    /// The 99.9th percentile, in milliseconds.
    public var p999Ms: Double
    /// The longest duration, in milliseconds.
    public var maxMs: Double
    /// The mean, in milliseconds.
    public var meanMs: Double

    /// Creates a summary (all zero by default: nothing recorded).
    public init(
        count: Int = 0, p50Ms: Double = 0, p90Ms: Double = 0, p99Ms: Double = 0, p999Ms: Double = 0,
        maxMs: Double = 0, meanMs: Double = 0
    ) {
        self.count = count
        self.p50Ms = p50Ms
        self.p90Ms = p90Ms
        self.p99Ms = p99Ms
        self.p999Ms = p999Ms
        self.maxMs = maxMs
        self.meanMs = meanMs
    }
}
