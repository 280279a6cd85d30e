import CaptureCongestion
import CaptureNetworkSimulator
import Testing

/// libwebrtc's own scenario figures (`goog_cc_network_control_unittest.cc`) and issue 20's goals, in virtual time.
@Suite("Closed-loop scenarios")
struct ScenarioTests {
    /// libwebrtc samples the target at one instant; on a path this slow (RTT 200–400 ms) AIMD's sawtooth has a period
    /// of 5–14 s and an instant lands anywhere in it, so this takes the mean of the 10 s before each instant.
    @Test(
        "500 k / 100 ms → 800 k → 100 k at 200 ms: 450 ± 100, 750 ± 150, 90 ± 25 (libwebrtc's figures, 10 s means)")
    func updatesTargetRateBasedOnLinkCapacity() {
        let link = LinkConfiguration(
            delay: .milliseconds(100), rate: 500_000, queueBytes: 1_000_000,
            schedule: [
                .setRate(800_000, at: .seconds(25)),
                LinkChange(at: .seconds(45), rate: .some(100_000), delay: .milliseconds(200)),
            ])
        let harness = ClosedLoopHarness(link: link)
        harness.run(until: .seconds(95))
        let first = harness.meanTarget(in: .seconds(15) ..< .seconds(25))
        let second = harness.meanTarget(in: .seconds(35) ..< .seconds(45))
        let third = harness.meanTarget(in: .seconds(85) ..< .seconds(95))
        print("capacity (10 s means): 500k@25s=\(first) 800k@45s=\(second) 100k@95s=\(third)")
        #expect(abs(first - 450_000) <= 100_000)
        #expect(abs(second - 750_000) <= 150_000)
        #expect(abs(third - 90_000) <= 25_000)
    }

    @Test("A 250 k REMB cap on 2 Mbit/s is obeyed within 1 s and recovered (> 1500 k) 10 s after it is lifted")
    func receiverCeiling() {
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(delay: .milliseconds(50), rate: 2_000_000, queueBytes: 200_000),
            configuration: .init(startBitrate: 1_000_000),
            ceilings: [(.seconds(10), 250_000), (.seconds(20), nil)])
        harness.run(until: .seconds(10))
        let before = harness.estimator.targetBitrate
        harness.run(until: .seconds(11))
        let capped = harness.estimator.targetBitrate
        let reason = harness.estimator.limitation
        harness.run(until: .seconds(30))
        let after = harness.estimator.targetBitrate
        print("remb: before=\(before) capped=\(capped) (\(reason)) lifted+10s=\(after)")
        #expect(before > 1_500_000)
        #expect(capped <= 250_000)
        #expect(reason == .receiverCeiling)
        #expect(after > 1_500_000)
    }

    @Test("10 % random loss on 2 Mbit/s / 200 ms: the target stays above 100 k after 120 s")
    func modestBackoffToHighLoss() {
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(delay: .milliseconds(200), lossRate: 0.1, rate: 2_000_000, queueBytes: 200_000))
        harness.run(until: .seconds(120))
        let target = harness.estimator.targetBitrate
        let mean = harness.targets.map(\.bitrate).reduce(0, +) / max(1, harness.targets.count)
        print("loss10: target@120s=\(target) mean=\(mean) inherent-loss loss=\(harness.estimator.lossFraction)")
        #expect(target > 100_000)
    }

    @Test("Open 5 Mbit/s link: probing reaches ≥ 80 % of a 2.5 Mbit/s maximum within 5 s")
    func probingRampUp() {
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(delay: .milliseconds(25), rate: 5_000_000, queueBytes: 200_000),
            configuration: .init(maximumBitrate: 2_500_000))
        var reached: Duration?
        for tenth in 1...50 {
            harness.run(until: .milliseconds(100 * tenth))
            if reached == nil, harness.estimator.targetBitrate >= 2_000_000 { reached = .milliseconds(100 * tenth) }
        }
        print(
            "probe: reached 80% at \(reached.map { "\($0)" } ?? "never"), target@5s=\(harness.estimator.targetBitrate), clusters=\(harness.probeRequests.map(\.bitrate))"
        )
        #expect(reached != nil)
    }

    @Test(
        "2 M → 500 k (RTT 50 ms, 300 ms queue at 2 M): under the link within 2 s, queue under 100 ms within 3 s",
        arguments: [100, 200]
    )
    func stepDown(feedbackMilliseconds: Int) {
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(
                delay: .milliseconds(25), rate: 2_000_000, queueBytes: 75_000,
                schedule: [.setRate(500_000, at: .seconds(20)), .setRate(2_000_000, at: .seconds(40))]),
            configuration: .init(maximumBitrate: 2_500_000), feedbackInterval: .milliseconds(feedbackMilliseconds))
        harness.run(until: .seconds(20))
        let before = harness.estimator.targetBitrate
        harness.run(until: .seconds(40))
        let underAt = harness.targets.first { $0.at >= .seconds(20) && $0.bitrate < 500_000 }?.at
        let settled = harness.queueSettled(under: .milliseconds(100), after: .seconds(20))
        let p95 = harness.queueDelay(quantile: 0.95, sentIn: Duration.seconds(25)..<Duration.seconds(40))
        let peakQueue = harness.maximumQueueDelay(sentIn: Duration.seconds(20)..<Duration.seconds(23))
        let steady = harness.targets.filter { $0.at >= .seconds(30) && $0.at < .seconds(40) }.map(\.bitrate)
        let utilisation = Double(steady.reduce(0, +)) / Double(max(1, steady.count)) / 500_000
        harness.run(until: .seconds(60))
        let recoveredAt = harness.targets.first { $0.at >= .seconds(40) && $0.bitrate >= 1_500_000 }?.at
        print(
            "step (feedback every \(feedbackMilliseconds) ms): before=\(before) under-link at \(underAt.map { "\($0 - .seconds(20))" } ?? "never") after step, peak queue \(peakQueue), queue < 100 ms (for 500 ms) at \(settled.map { "\($0)" } ?? "never") after step, p95 queue 25–40 s \(p95), utilisation 30–40 s \(utilisation), ≥75 % after step up at \(recoveredAt.map { "\($0 - .seconds(40))" } ?? "never")"
        )
        #expect(before > 1_500_000)
        #expect(underAt.map { $0 - .seconds(20) <= .seconds(2) } ?? false)
        #expect(settled.map { $0 <= .seconds(3) } ?? false)
        #expect(p95 <= .milliseconds(100))
        #expect(utilisation >= 0.8)
    }

    @Test("With the stale-estimate probe: 2 M → 500 k → 2 M recovers to 1.5 M within 20 s, the narrow phase as full")
    func staleEstimateProbe() {
        var configuration = SendSideBandwidthEstimator.Configuration(maximumBitrate: 2_500_000)
        configuration.probesStaleEstimate = true
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(
                delay: .milliseconds(25), rate: 2_000_000, queueBytes: 75_000,
                schedule: [.setRate(500_000, at: .seconds(20)), .setRate(2_000_000, at: .seconds(40))]),
            configuration: configuration)
        harness.run(until: .seconds(60))
        let recoveredAt = harness.targets.first { $0.at >= .seconds(40) && $0.bitrate >= 1_500_000 }?.at
        let narrow = harness.meanTarget(in: Duration.seconds(30)..<Duration.seconds(40))
        let statistics = harness.estimator.statistics
        print(
            "stale-estimate probe: >= 1.5 M \(recoveredAt.map { "\($0 - .seconds(40))" } ?? "never") after the step up, "
                + "narrow mean \(narrow), \(statistics.staleEstimateProbes) probes (\(statistics.staleEstimateProbesConfirmed)"
                + " confirmed, \(statistics.staleEstimateProbesFailed) failed)")
        #expect(recoveredAt.map { $0 - .seconds(40) <= .seconds(20) } ?? false)
        #expect(narrow >= 400_000)
        #expect(statistics.staleEstimateProbes > 0)
    }

    /// 1 Mbit/s, RTT 50 ms, a 300 ms drop-tail queue (37.5 kB), run for 40 s; the mean target over 10–40 s.
    static func steadyMean(
        lossRate: Double = 0, jitter: Duration = .zero, feedbackLossRate: Double = 0
    ) -> (mean: Int, harness: ClosedLoopHarness) {
        let harness = ClosedLoopHarness(
            link: LinkConfiguration(
                delay: .milliseconds(25), jitter: jitter, lossRate: lossRate, rate: 1_000_000, queueBytes: 37_500),
            feedbackLossRate: feedbackLossRate)
        harness.run(until: .seconds(40))
        return (harness.meanTarget(in: Duration.seconds(10)..<Duration.seconds(40)), harness)
    }

    @Test("1 % and 5 % random loss keep ≥ 90 % and ≥ 50 % of the loss-free mean rate")
    func randomLoss() {
        let clean = Self.steadyMean().mean
        let one = Self.steadyMean(lossRate: 0.01).mean
        let five = Self.steadyMean(lossRate: 0.05).mean
        print("loss: clean=\(clean) 1%=\(one) 5%=\(five) (1 Mbit/s, RTT 50 ms, mean 10–40 s)")
        #expect(Double(one) >= 0.9 * Double(clean))
        #expect(Double(five) >= 0.5 * Double(clean))
    }

    @Test("Jitter without loss (0–20 ms) costs at most 20 % of the mean rate")
    func jitterWithoutLoss() {
        let clean = Self.steadyMean().mean
        let (jittery, harness) = Self.steadyMean(jitter: .milliseconds(20))
        print("jitter: clean=\(clean) jitter 0–20 ms=\(jittery) overuses=\(harness.estimator.statistics.overuses)")
        #expect(Double(jittery) >= 0.8 * Double(clean))
    }

    @Test("5 % of the feedback lost: no collapse (≥ 70 % of the mean rate)")
    func feedbackLoss() {
        let clean = Self.steadyMean().mean
        let (mean, harness) = Self.steadyMean(feedbackLossRate: 0.05)
        print("feedback loss: clean=\(clean) 5% feedback lost=\(mean) (\(harness.feedbackLost) reports lost)")
        #expect(Double(mean) >= 0.7 * Double(clean))
    }
}
