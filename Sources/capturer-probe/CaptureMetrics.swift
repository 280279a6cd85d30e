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

    /// The figures for frames captured at `timestampsNs` (in order). Fewer than two frames give zeros.
    init(timestampsNs: [UInt64]) {
        let intervals = zip(timestampsNs.dropFirst(), timestampsNs).map { Double($0 &- $1) / 1e6 }
        guard let first = timestampsNs.first, let last = timestampsNs.last, !intervals.isEmpty, last > first else {
            self.init(fps: 0, meanIntervalMs: 0, jitterMs: 0, minIntervalMs: 0, maxIntervalMs: 0)
            return
        }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        let variance = intervals.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(intervals.count)
        self.init(
            fps: Double(intervals.count) / (Double(last - first) / 1e9), meanIntervalMs: mean,
            jitterMs: variance.squareRoot(), minIntervalMs: intervals.min() ?? 0, maxIntervalMs: intervals.max() ?? 0)
    }

    init(fps: Double, meanIntervalMs: Double, jitterMs: Double, minIntervalMs: Double, maxIntervalMs: Double) {
        self.fps = fps.rounded(places: 3)
        self.meanIntervalMs = meanIntervalMs.rounded(places: 3)
        self.jitterMs = jitterMs.rounded(places: 3)
        self.minIntervalMs = minIntervalMs.rounded(places: 3)
        self.maxIntervalMs = maxIntervalMs.rounded(places: 3)
    }
}

/// Percentiles of a set of durations, in milliseconds.
struct LatencySummary: Codable, Hashable {
    var p50: Double
    var p99: Double
    var max: Double

    /// Nearest-rank percentiles of `samplesMs`.
    init(samplesMs: [Double]) {
        let sorted = samplesMs.sorted()
        func rank(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.min(Swift.max(index, 0), sorted.count - 1)]
        }
        p50 = rank(0.5).rounded(places: 3)
        p99 = rank(0.99).rounded(places: 3)
        max = (sorted.last ?? 0).rounded(places: 3)
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
