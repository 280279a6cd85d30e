import CaptureCall
import Testing

/// The session's small parts: the reproducible loss simulator and the glass-to-wire latency recorder.
@Suite("Session support")
struct SessionSupportTests {
    @Test("the same seed drops the same packets; a different seed drops others")
    func lossIsReproducible() {
        var first = PacketLossSimulator(lossPercent: 5, seed: 42)
        var second = PacketLossSimulator(lossPercent: 5, seed: 42)
        var other = PacketLossSimulator(lossPercent: 5, seed: 43)
        let a = (0..<2_000).map { _ in first.shouldDrop() }
        let b = (0..<2_000).map { _ in second.shouldDrop() }
        let c = (0..<2_000).map { _ in other.shouldDrop() }
        #expect(a == b)
        #expect(a != c)
    }

    @Test("the drop rate is near the asked percentage", arguments: [0.0, 5, 20, 100])
    func lossRate(percent: Double) {
        var simulator = PacketLossSimulator(lossPercent: percent, seed: 7)
        let count = 20_000
        let dropped = (0..<count).filter { _ in simulator.shouldDrop() }.count
        let rate = Double(dropped) / Double(count) * 100
        #expect(abs(rate - percent) < 1.5, "dropped \(rate)% for \(percent)%")
    }

    @Test("out-of-range and non-finite percentages are clamped")
    func lossClamped() {
        #expect(PacketLossSimulator(lossPercent: 250, seed: 1).lossPercent == 100)
        #expect(PacketLossSimulator(lossPercent: -3, seed: 1).lossPercent == 0)
        #expect(PacketLossSimulator(lossPercent: .nan, seed: 1).lossPercent == 0)
    }

    @Test("latency percentiles over the recorded samples, the ring keeping the newest")
    func latencyPercentiles() {
        var recorder = LatencyRecorder(capacity: 100)
        #expect(recorder.summary.count == 0)
        for ms in 1...100 { recorder.record(nanoseconds: UInt64(ms) * 1_000_000) }
        var summary = recorder.summary
        #expect(summary.count == 100)
        #expect(abs(summary.p50Ms - 50.5) <= 0.5)
        #expect(summary.p99Ms == 99)
        #expect(summary.maxMs == 100)
        // 100 more samples of 1 s replace all the old ones.
        for _ in 0..<100 { recorder.record(nanoseconds: 1_000_000_000) }
        summary = recorder.summary
        #expect(summary.count == 100)
        #expect(summary.p50Ms == 1_000)
    }
}
