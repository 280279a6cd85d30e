import Testing

@testable import CaptureCongestion

private let ms: Int64 = 1_000_000

@Suite("Inter-arrival grouping")
struct InterArrivalGroupingTests {
    @Test("Packets within 5 ms form a group; the third group yields the first deltas")
    func groupsAndDeltas() {
        var grouping = InterArrivalGrouping()
        // Group 1: sent 0, 2 ms; group 2: sent 10, 12 ms; group 3 starts at 20 ms.
        let value1 = grouping.add(send: 0, arrival: 100 * ms, system: 0, size: 100)
        #expect(value1 == nil)
        let value2 = grouping.add(send: 2 * ms, arrival: 103 * ms, system: 0, size: 100)
        #expect(value2 == nil)
        let value3 = grouping.add(send: 10 * ms, arrival: 111 * ms, system: 0, size: 300)
        #expect(value3 == nil)
        let value4 = grouping.add(send: 12 * ms, arrival: 115 * ms, system: 0, size: 300)
        #expect(value4 == nil)
        let deltas = grouping.add(send: 20 * ms, arrival: 121 * ms, system: 0, size: 100)
        // send 12 − 2 = 10 ms, arrival 115 − 103 = 12 ms, size 600 − 200.
        #expect(deltas == .init(send: 10 * ms, arrival: 12 * ms, size: 400))
    }

    @Test("A packet sent before the group began is dropped")
    func reorderedPacketDropped() {
        var grouping = InterArrivalGrouping()
        _ = grouping.add(send: 10 * ms, arrival: 100 * ms, system: 0, size: 100)
        let value5 = grouping.add(send: 5 * ms, arrival: 101 * ms, system: 0, size: 100)
        #expect(value5 == nil)
        _ = grouping.add(send: 20 * ms, arrival: 110 * ms, system: 0, size: 100)
        let deltas = grouping.add(send: 30 * ms, arrival: 120 * ms, system: 0, size: 100)
        #expect(deltas == .init(send: 10 * ms, arrival: 10 * ms, size: 0))
    }

    @Test("A back-to-back burst (arrivals 1 ms apart, send gaps larger) joins the group")
    func burstJoinsGroup() {
        var grouping = InterArrivalGrouping()
        _ = grouping.add(send: 0, arrival: 100 * ms, system: 0, size: 100)
        // Sent 8 ms later but arrived 1 ms later: a burst.
        _ = grouping.add(send: 8 * ms, arrival: 101 * ms, system: 0, size: 100)
        _ = grouping.add(send: 20 * ms, arrival: 120 * ms, system: 0, size: 100)
        let deltas = grouping.add(send: 30 * ms, arrival: 130 * ms, system: 0, size: 100)
        #expect(deltas == .init(send: 12 * ms, arrival: 19 * ms, size: -100))
    }

    @Test("A remote clock jump of 3 s beyond the local feedback clock resets the stage")
    func clockJumpResets() {
        var grouping = InterArrivalGrouping()
        _ = grouping.add(send: 0, arrival: 0, system: 0, size: 100)
        _ = grouping.add(send: 10 * ms, arrival: 10 * ms, system: 10 * ms, size: 100)
        _ = grouping.add(send: 20 * ms, arrival: 5_000 * ms, system: 20 * ms, size: 100)
        // The jump shows when the jumped group closes: 4 990 ms of arrival against 10 ms of local time.
        let deltas = grouping.add(send: 30 * ms, arrival: 5_010 * ms, system: 30 * ms, size: 100)
        #expect(deltas == nil)
        #expect(grouping.resets == 1)
    }

    @Test("Three groups in a row completing before their predecessor reset the stage")
    func sustainedReorderingResets() {
        var grouping = InterArrivalGrouping()
        _ = grouping.add(send: 0, arrival: 1000 * ms, system: 0, size: 100)
        _ = grouping.add(send: 10 * ms, arrival: 1010 * ms, system: 0, size: 100)
        // Each group: a first packet late, a second one early, so the group completes before the previous one.
        for group in Int64(2)...5 {
            _ = grouping.add(send: group * 10 * ms, arrival: (1000 + 100 * group) * ms, system: 0, size: 100)
            _ = grouping.add(send: (group * 10 + 1) * ms, arrival: (1010 - 50 * (group - 1)) * ms, system: 0, size: 100)
        }
        #expect(grouping.resets == 1)
    }
}

@Suite("Trendline estimator")
struct TrendlineEstimatorTests {
    @Test("Constant delay stays normal; the threshold decays to 6 (12.5 + 0.039 × (0 − 12.5) × 100, clamped)")
    func constantDelay() {
        var trendline = TrendlineEstimator()
        trendline.update(arrivalDeltaMs: 10, sendDeltaMs: 10, arrivalMs: 0)
        trendline.update(arrivalDeltaMs: 10, sendDeltaMs: 10, arrivalMs: 100)
        #expect(trendline.threshold == 12.5)
        trendline.update(arrivalDeltaMs: 10, sendDeltaMs: 10, arrivalMs: 200)
        #expect(trendline.threshold == 6)
        #expect(trendline.state == .normal)
    }

    @Test("A queue growing 2 ms per 5 ms group is overuse")
    func thresholdRises() {
        var trendline = TrendlineEstimator()
        var arrival = 0.0
        for _ in 0..<40 {
            arrival += 7
            trendline.update(arrivalDeltaMs: 7, sendDeltaMs: 5, arrivalMs: arrival)
        }
        #expect(trendline.state == .overusing)
        #expect(trendline.modifiedTrend > trendline.threshold)
        #expect((6.0...600).contains(trendline.threshold))
    }

    @Test("A draining queue is underusing")
    func draining() {
        var trendline = TrendlineEstimator()
        var arrival = 0.0
        for _ in 0..<40 {
            arrival += 3
            trendline.update(arrivalDeltaMs: 3, sendDeltaMs: 5, arrivalMs: arrival)
        }
        #expect(trendline.state == .underusing)
    }

    @Test("NaN and infinite deltas are ignored")
    func hostileDeltas() {
        var trendline = TrendlineEstimator()
        trendline.update(arrivalDeltaMs: .nan, sendDeltaMs: 5, arrivalMs: 0)
        trendline.update(arrivalDeltaMs: .infinity, sendDeltaMs: 5, arrivalMs: 0)
        #expect(trendline.state == .normal)
        #expect(trendline.threshold == 12.5)
    }
}

@Suite("AIMD and link capacity")
struct AIMDRateControlTests {
    @Test("Capacity bounds: 500 k ± 3·√(0.4 × 500) kbit/s")
    func linkCapacity() {
        var capacity = LinkCapacityEstimator()
        #expect(capacity.upperBound == .infinity)
        capacity.onOveruseDetected(throughput: 500_000)
        let deviation = 3 * (0.4 * 500.0).squareRoot() * 1000
        #expect(abs(capacity.upperBound - (500_000 + deviation)) < 1e-6)
        #expect(abs(capacity.lowerBound - (500_000 - deviation)) < 1e-6)
    }

    @Test("Multiplicative increase ×1.08 per second, capped at 1.5 × acked + 10 k; decrease to 0.85 × acked − 5 k")
    func increaseAndDecrease() {
        var aimd = AIMDRateControl(start: 300_000, minimum: 30_000)
        aimd.update(usage: .normal, throughput: 300_000, now: 0)
        #expect(aimd.estimate == 301_000)  // First step: at least 1 kbit/s.
        aimd.update(usage: .normal, throughput: 300_000, now: 1_000 * ms)
        #expect(abs(aimd.estimate - 301_000 * 1.08) < 1e-6)
        aimd.update(usage: .normal, throughput: 100_000, now: 2_000 * ms)
        #expect(abs(aimd.estimate - 301_000 * 1.08) < 1e-6)  // Above 1.5 × 100 k + 10 k: kept, not lowered.
        aimd.update(usage: .overusing, throughput: 200_000, now: 2_100 * ms)
        #expect(aimd.estimate == 165_000)
        #expect(aimd.state == .hold)
        #expect(aimd.linkCapacity.estimate == 200_000)
    }

    @Test("Additive increase near capacity: one 1042-byte packet per (RTT + 100 ms) at 500 k")
    func additive() {
        var aimd = AIMDRateControl(start: 500_000, minimum: 30_000)
        aimd.rtt = 200 * ms
        // 500 k / 30 = 16 667 bits a frame, two packets of 8 333 bits, over 0.3 s: 27 778 bit/s per second.
        #expect(abs(aimd.nearMaxIncreasePerSecond - 500_000.0 / 30 / 2 / 0.3) < 1e-6)
    }

    @Test("Never under the minimum")
    func minimum() {
        var aimd = AIMDRateControl(start: 40_000, minimum: 30_000)
        aimd.update(usage: .overusing, throughput: 1_000, now: 0)
        #expect(aimd.estimate == 30_000)
    }
}

@Suite("Acknowledged bitrate")
struct AcknowledgedBitrateTests {
    @Test("1000 bytes every 10 ms is 800 kbit/s after the first 500 ms window")
    func steadyRate() {
        var estimator = AcknowledgedBitrateEstimator()
        for index in 0...50 { estimator.update(arrival: Int64(index) * 10 * ms, size: 1000) }
        #expect(estimator.bitrate == 800_000)
        for index in 51...200 { estimator.update(arrival: Int64(index) * 10 * ms, size: 1000) }
        #expect(abs((estimator.bitrate ?? 0) - 800_000) < 1)
    }

    @Test("Arrival going back restarts the window without a bogus sample")
    func backwards() {
        var estimator = AcknowledgedBitrateEstimator()
        estimator.update(arrival: 1_000 * ms, size: 1000)
        estimator.update(arrival: 0, size: 1000)
        #expect(estimator.bitrate == nil)
    }
}

@Suite("Loss-based limit")
struct LossBasedEstimatorTests {
    @Test("20 % loss: × (1 − 0.5 × 51/256); then low loss: 1.08 × the last second's minimum + 1 k")
    func backoffAndRecovery() {
        var loss = LossBasedEstimator()
        let value7 = loss.addPackets(lost: 2, total: 10, congested: true)
        #expect(!value7)
        let value8 = loss.addPackets(lost: 2, total: 10, congested: true)
        #expect(value8)
        loss.update(rate: 1_000_000, upper: 1_000_000, acknowledged: nil, rtt: 0, now: 0)
        let backedOff = 1_000_000 * (1 - 0.5 * 51 / 256)
        #expect(loss.limit == backedOff)
        let value9 = loss.addPackets(lost: 0, total: 20, congested: true)
        #expect(value9)
        loss.update(rate: backedOff, upper: 1_000_000, acknowledged: nil, rtt: 0, now: 100 * ms)
        #expect(loss.limit == backedOff * 1.08 + 1000)
    }

    @Test("2–10 % holds; a limit that climbs back to the others disappears")
    func holdAndClear() {
        var loss = LossBasedEstimator()
        _ = loss.addPackets(lost: 10, total: 20, congested: true)
        loss.update(rate: 100_000, upper: 100_000, acknowledged: nil, rtt: 0, now: 0)
        #expect(loss.limit == 75_000)
        _ = loss.addPackets(lost: 1, total: 20, congested: true)
        loss.update(rate: 75_000, upper: 100_000, acknowledged: nil, rtt: 0, now: 100 * ms)
        #expect(loss.limit == 75_000)
        _ = loss.addPackets(lost: 0, total: 20, congested: true)
        loss.update(rate: 75_000, upper: 80_000, acknowledged: nil, rtt: 0, now: 200 * ms)
        #expect(loss.limit == nil)
    }

    @Test("Loss without overuse is learnt as inherent")
    func inherent() {
        var loss = LossBasedEstimator()
        for _ in 0..<100 { _ = loss.addPackets(lost: 2, total: 20, congested: false) }
        #expect(abs(loss.inherentLoss - 25.0 / 256) < 0.01)
        let value10 = loss.addPackets(lost: -1, total: 20, congested: false)
        #expect(!value10)
    }
}

@Suite("Queue delay")
struct QueueDelayEstimatorTests {
    @Test("The excess of arrival − send over its 10 s minimum; the minimum ages out")
    func standingQueue() {
        var queue = QueueDelayEstimator()
        queue.add(send: 0, arrival: 5_000 * ms, now: 0)
        #expect(queue.queueDelay == 0)
        queue.add(send: 100 * ms, arrival: 5_350 * ms, now: 500 * ms)
        #expect(queue.queueDelay == 250 * ms)
        // Eleven seconds later the 5 000 ms baseline has aged out: 5 250 ms is the new minimum.
        queue.add(send: 11_000 * ms, arrival: 16_250 * ms, now: 11_500 * ms)
        #expect(queue.queueDelay == 0)
        queue.add(send: 11_100 * ms, arrival: 16_400 * ms, now: 11_600 * ms)
        #expect(queue.queueDelay == 50 * ms)
    }

    @Test("Local time going back clears the baseline instead of trapping")
    func backwards() {
        var queue = QueueDelayEstimator()
        queue.add(send: 0, arrival: 100 * ms, now: 50_000 * ms)
        queue.add(send: .min, arrival: .max, now: -5 * ms)
        #expect(queue.queueDelay == 0)
    }
}

@Suite("Probing")
struct ProbingTests {
    @Test("5 packets of 1000 bytes sent 1 ms apart, received 2 ms apart: 0.95 × 4 Mbit/s")
    func probeResult() {
        var estimator = ProbeBitrateEstimator()
        estimator.expect(id: 7, minimumBytes: 4000, minimumPackets: 5)
        var result: Double?
        for index in 0..<5 {
            result = estimator.add(clusterID: 7, send: Int64(index) * ms, arrival: Int64(index) * 2 * ms, size: 1000)
        }
        #expect(result.map { abs($0 - 3_800_000) < 1e-3 } ?? false)
        let value11 = estimator.add(clusterID: 8, send: 0, arrival: 0, size: 1000)
        #expect(value11 == nil)
    }

    @Test("Start clusters at 3× and 6×; a result above 70 % probes at 2×, capped at the maximum")
    func controller() {
        var controller = ProbeController(maximum: 2_500_000)
        var requests: [ProbeClusterRequest] = []
        controller.start(startBitrate: 300_000, now: 0, into: &requests)
        #expect(requests.map(\.bitrate) == [900_000, 1_800_000])
        #expect(requests.map(\.minimumBytes) == [1688, 3375])
        requests.removeAll()
        controller.setEstimate(1_300_000, now: 500 * ms, into: &requests)
        #expect(requests.map(\.bitrate) == [2_500_000])
        #expect(controller.state == .complete)
    }

    @Test("A result under 70 % ends probing after 1 s")
    func timeout() {
        var controller = ProbeController(maximum: 2_500_000)
        var requests: [ProbeClusterRequest] = []
        controller.start(startBitrate: 300_000, now: 0, into: &requests)
        requests.removeAll()
        controller.setEstimate(450_000, now: 500 * ms, into: &requests)
        #expect(requests.isEmpty)
        controller.process(now: 1_600 * ms)
        #expect(controller.state == .complete)
    }

    /// A controller past its start probes (timed out at 2 s), with `estimate` set at `at` ms and no request left.
    static func pastStart(estimate: Double, at: Int64) -> (ProbeController, [ProbeClusterRequest]) {
        var controller = ProbeController(maximum: 2_500_000)
        var requests: [ProbeClusterRequest] = []
        controller.start(startBitrate: 300_000, now: 0, into: &requests)
        controller.process(now: 2_000 * ms)
        controller.setEstimate(estimate, now: at * ms, into: &requests)
        requests.removeAll()
        return (controller, requests)
    }

    @Test("After a large drop, recovery from overuse probes at 85 % of the rate before it")
    func recovery() {
        var (controller, requests) = Self.pastStart(estimate: 2_000_000, at: 3_000)
        controller.setEstimate(500_000, now: 4_000 * ms, into: &requests)
        requests.removeAll()
        controller.recoveredFromOveruse(now: 5_000 * ms, into: &requests)
        #expect(requests.map(\.bitrate) == [1_700_000])
    }

    @Test("A stale estimate is probed at 1.5×; a step that holds 3 s lets the next follow, a failed one backs off")
    func staleEstimate() {
        var (controller, requests) = Self.pastStart(estimate: 500_000, at: 2_000)
        // Overuse episodes 7 s apart: the estimate goes stale 7 s after the last one.
        controller.overuseBegan(now: 3_000 * ms)
        controller.overuseBegan(now: 10_000 * ms)
        #expect(controller.staleAfter == 7_000 * ms)
        func stale(_ at: Int64, overuse: Int64 = 10_500, limited: Bool = true) -> Bool {
            controller.probeIfStale(lastOveruse: overuse * ms, delayLimited: limited, now: at * ms, into: &requests)
        }
        #expect(!stale(17_000))
        #expect(!stale(17_600, limited: false))
        #expect(requests.isEmpty)
        #expect(stale(17_600))
        #expect(requests.map(\.bitrate) == [750_000])
        #expect(controller.state == .complete, "no further probing from a stale probe")
        // The step held 3 s without overuse: confirmed, and the next step follows at once.
        requests.removeAll()
        controller.setEstimate(740_000, now: 17_800 * ms, into: &requests)
        #expect(!stale(20_000))
        #expect(stale(20_600))
        #expect(controller.statistics.staleProbesConfirmed == 1)
        #expect(requests.map(\.bitrate) == [1_110_000])
        // An overuse within 3 s of that one: failed, and the next waits twice the period (14 s after the overuse).
        requests.removeAll()
        controller.setEstimate(800_000, now: 21_500 * ms, into: &requests)
        #expect(!stale(23_700, overuse: 22_000))
        #expect(controller.statistics.staleProbesFailed == 1)
        #expect(controller.staleAfter == 14_000 * ms)
        #expect(!stale(35_900, overuse: 22_000))
        #expect(stale(36_000, overuse: 22_000))
        #expect(requests.map(\.bitrate) == [1_200_000])
        // Episodes far apart: at most 15 s (times the back-off); none at the maximum.
        controller.overuseBegan(now: 60_000 * ms)
        #expect(controller.staleAfter == 30_000 * ms)
        controller.setEstimate(2_450_000, now: 70_000 * ms, into: &requests)
        requests.removeAll()
        #expect(!stale(200_000, overuse: 60_000))
    }
}
