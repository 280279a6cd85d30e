import CaptureCore
import Foundation
import Testing

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test("percentiles of 1…1000 ms match the nearest-rank values within the histogram's 0.1 % precision")
    func percentiles() {
        var histogram = LatencyHistogram()
        for ms in (1...1000).shuffled() { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        let distribution = histogram.distribution
        func close(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) <= expected * 0.001 }
        #expect(distribution.count == 1000)
        #expect(close(distribution.p50Ms, 500), "\(distribution)")
        #expect(close(distribution.p90Ms, 900), "\(distribution)")
        #expect(close(distribution.p99Ms, 990), "\(distribution)")
        #expect(close(distribution.p999Ms, 999), "\(distribution)")
        #expect(close(distribution.maxMs, 1000), "\(distribution)")
        #expect(close(distribution.meanMs, 500.5), "\(distribution)")
    }

    @Test("nothing recorded gives zeros; longer than 60 s is clamped and counted; reset forgets; add merges")
    func edges() throws {
        var histogram = LatencyHistogram()
        #expect(histogram.distribution == LatencyDistribution())
        histogram.record(nanoseconds: 120_000_000_000)
        #expect(histogram.saturatedCount == 1)
        #expect(abs(histogram.distribution.maxMs - 60_000) <= 60)
        var other = LatencyHistogram()
        other.record(nanoseconds: 2_000_000)
        histogram.add(other)
        #expect(histogram.count == 2 && histogram.saturatedCount == 1)
        let decoded = try JSONDecoder().decode(LatencyHistogram.self, from: JSONEncoder().encode(histogram))
        #expect(decoded.distribution == histogram.distribution)
        histogram.reset()
        #expect(histogram.count == 0 && histogram.saturatedCount == 0)
        #expect(histogram.distribution == LatencyDistribution())
    }

    @Test("an end before its start (a timestamp ahead of the clock) is 0 and counted, not a wrapped 60 s")
    func endBeforeStart() {
        var histogram = LatencyHistogram()
        histogram.record(from: 5_000_000_000, to: 4_990_000_000)
        histogram.record(from: 5_000_000_000, to: 5_003_000_000)
        #expect(histogram.count == 2 && histogram.aheadCount == 1 && histogram.saturatedCount == 0)
        let maxMs = histogram.distribution.maxMs
        #expect(abs(maxMs - 3) <= 0.01, "max \(maxMs) ms")
        var merged = LatencyHistogram()
        merged.add(histogram)
        #expect(merged.aheadCount == 1)
        merged.reset()
        #expect(merged.aheadCount == 0)
    }
}
