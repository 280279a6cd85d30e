import CaptureCore

/// Frame timing figures of a capture run.
struct TimingSummary: Codable, Hashable {
    /// Frames per second measured from the first to the last frame's capture time.
    var fps: Double
    /// Mean interval between frames, in milliseconds.
    var meanIntervalMs: Double
    /// Standard deviation of the frame intervals, in milliseconds.
    var jitterMs: Double
    var minIntervalMs: Double
    var maxIntervalMs: Double

    /// The figures of the intervals gathered in `intervals`. Fewer than two frames give zeros.
    init(_ intervals: IntervalAccumulator) {
        guard intervals.count > 0, intervals.spanNs > 0 else {
            self.init(fps: 0, meanIntervalMs: 0, jitterMs: 0, minIntervalMs: 0, maxIntervalMs: 0)
            return
        }
        let count = Double(intervals.count)
        let mean = intervals.sumMs / count
        let variance = max(0, intervals.sumSquaresMs / count - mean * mean)
        self.init(
            fps: count / (Double(intervals.spanNs) / 1e9), meanIntervalMs: mean, jitterMs: variance.squareRoot(),
            minIntervalMs: intervals.minMs, maxIntervalMs: intervals.maxMs)
    }

    init(fps: Double, meanIntervalMs: Double, jitterMs: Double, minIntervalMs: Double, maxIntervalMs: Double) {
        self.fps = fps.rounded(places: 3)
        self.meanIntervalMs = meanIntervalMs.rounded(places: 3)
        self.jitterMs = jitterMs.rounded(places: 3)
        self.minIntervalMs = minIntervalMs.rounded(places: 3)
        self.maxIntervalMs = maxIntervalMs.rounded(places: 3)
    }
}

/// Running sums of the intervals between successive timestamps, so that timing figures need no per-frame storage.
struct IntervalAccumulator {
    private var first: UInt64?
    private var last: UInt64?
    /// Intervals seen (one less than the timestamps).
    private(set) var count = 0
    private(set) var sumMs = 0.0
    private(set) var sumSquaresMs = 0.0
    private(set) var minMs = Double.infinity
    private(set) var maxMs = 0.0

    /// From the first to the last timestamp, in nanoseconds.
    var spanNs: UInt64 { (last ?? 0) &- (first ?? 0) }

    /// Adds the next timestamp, in nanoseconds.
    mutating func add(_ timestampNs: UInt64) {
        if first == nil { first = timestampNs }
        if let last {
            let interval = Double(timestampNs &- last) / 1e6
            count += 1
            sumMs += interval
            sumSquaresMs += interval * interval
            minMs = min(minMs, interval)
            maxMs = max(maxMs, interval)
        }
        last = timestampNs
    }
}

/// Percentiles of a set of durations, in milliseconds, from an HDR histogram (``LatencyHistogram``).
struct LatencySummary: Codable, Hashable {
    var count: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
    var mean: Double
    /// Frames whose capture timestamp was later than the clock at the end (counted as 0 ms).
    var aheadOfClock: Int

    init(_ histogram: LatencyHistogram) {
        let distribution = histogram.distribution
        count = distribution.count
        p50 = distribution.p50Ms.rounded(places: 3)
        p90 = distribution.p90Ms.rounded(places: 3)
        p99 = distribution.p99Ms.rounded(places: 3)
        p999 = distribution.p999Ms.rounded(places: 3)
        max = distribution.maxMs.rounded(places: 3)
        mean = distribution.meanMs.rounded(places: 3)
        aheadOfClock = histogram.aheadCount
    }
}

extension Double {
    /// The value rounded to `places` decimals (for readable JSON).
    func rounded(places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
