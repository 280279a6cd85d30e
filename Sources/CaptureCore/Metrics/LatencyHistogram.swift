internal import Histogram

/// Records durations (such as capture timestamp → delegate, or capture timestamp → encoded frame) into an HDR
/// histogram and summarises them as a ``LatencyDistribution``.
///
/// The histogram's buckets are allocated once, at creation (about 130 KiB: 1 µs to 60 s at three significant
/// digits); ``record(nanoseconds:)`` then writes one counter and allocates nothing, so it can run on the capture
/// thread for every frame. Durations above 60 s are recorded as 60 s and counted in ``saturatedCount``; an end
/// earlier than its start (a driver's timestamp ahead of the clock that reads the arrival) is recorded as 0 and
/// counted in ``aheadCount``.
///
/// ```swift
/// var latency = LatencyHistogram()
/// latency.record(from: frame.timestampNs, to: MonotonicClock.nowNs())
/// print(latency.distribution.p99Ms)
/// ```
public struct LatencyHistogram: Sendable, Codable {
    /// The longest duration told apart, in microseconds (60 s); longer ones are clamped to it.
    public static let highestTrackableMicroseconds: UInt64 = 60_000_000

    private var histogram: Histogram<UInt64>
    /// Durations that were longer than ``highestTrackableMicroseconds`` (recorded as that value).
    public private(set) var saturatedCount = 0
    /// Durations whose end came before their start (recorded as 0). vivid, for one, stamps a frame with the end of
    /// its ideal exposure (the stream's start plus whole frame periods), which can be ahead of the clock when the
    /// frame is dequeued; a difference taken in unsigned arithmetic would wrap and be clamped to 60 s instead.
    public private(set) var aheadCount = 0

    /// Creates an empty histogram.
    public init() {
        histogram = Histogram(
            lowestDiscernibleValue: 1, highestTrackableValue: Self.highestTrackableMicroseconds,
            numberOfSignificantValueDigits: .three)
    }

    /// The number of durations recorded.
    public var count: Int { Int(histogram.totalCount) }

    /// Records one duration, in nanoseconds (kept at microsecond resolution). Allocates nothing.
    public mutating func record(nanoseconds: UInt64) {
        var microseconds = nanoseconds / 1_000
        if microseconds > Self.highestTrackableMicroseconds {
            microseconds = Self.highestTrackableMicroseconds
            saturatedCount += 1
        }
        _ = histogram.record(microseconds)
    }

    /// Records the duration from `startNs` to `endNs` (both on one monotonic clock, in nanoseconds): 0, counted in
    /// ``aheadCount``, when `endNs` is earlier. Allocates nothing.
    public mutating func record(from startNs: UInt64, to endNs: UInt64) {
        guard endNs >= startNs else {
            aheadCount += 1
            _ = histogram.record(0)
            return
        }
        record(nanoseconds: endNs - startNs)
    }

    /// Adds every duration recorded in `other`.
    public mutating func add(_ other: LatencyHistogram) {
        histogram.add(other.histogram)
        saturatedCount += other.saturatedCount
        aheadCount += other.aheadCount
    }

    /// Forgets every recorded duration.
    public mutating func reset() {
        histogram.reset()
        saturatedCount = 0
        aheadCount = 0
    }

    /// The percentiles, maximum and mean of what was recorded (all zero when nothing was).
    public var distribution: LatencyDistribution {
        guard histogram.totalCount > 0 else { return LatencyDistribution() }
        func ms(_ microseconds: UInt64) -> Double { Double(microseconds) / 1_000 }
        return LatencyDistribution(
            count: count, p50Ms: ms(histogram.valueAtPercentile(50)), p90Ms: ms(histogram.valueAtPercentile(90)),
            p99Ms: ms(histogram.valueAtPercentile(99)), p999Ms: ms(histogram.valueAtPercentile(99.9)),
            maxMs: ms(histogram.max), meanMs: histogram.mean / 1_000)
    }
}
