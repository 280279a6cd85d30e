import CaptureCall
import CaptureNet
import CaptureNetworkSimulator
import CaptureWebRTC
import Foundation
import Testing

/// The connection's congestion controller in virtual time: our publisher, with transport-wide feedback from our
/// viewer, sends frames sized by the target it sets (a perfect encoder), across a bottleneck that narrows and widens
/// (issue 20 §6's profile: RTT 50 ms, a 300 ms drop-tail queue at 2 Mbit/s). There is no pacer yet, so frames leave
/// in bursts and the estimate ramps without probes.
@Suite("WebRTCConnection: the target follows the link (TWCC and the send-side estimate, virtual time)")
struct CongestionControlConnectionTests {
    typealias Scenario = WholeConnectionTests.Scenario

    /// One sample a 100 ms: the target the connection set, and the bottleneck queue's delay.
    struct Sample {
        var seconds: Double
        var targetKbps: Int
        var queueMs: Double
    }

    static func run(
        seed: UInt64, forward: LinkConfiguration, seconds: Int, rateAt: (Double) -> Int
    ) throws -> (samples: [Sample], scenario: Scenario) {
        let scenario = try Scenario(
            seed: seed, link: LinkConfiguration(delay: .milliseconds(25)), forward: forward,
            mediaFor: .seconds(seconds), transportWideCC: true)
        scenario.publisher.followsTarget = true
        var samples: [Sample] = []
        for step in 1...(seconds * 10) {
            scenario.run(for: .milliseconds(100))
            let now = scenario.loop.now
            let elapsed = Double(step) / 10
            let queued = scenario.network.queuedBytes(
                from: WholeConnectionTests.publisherAddress, to: WholeConnectionTests.viewerAddress, at: now)
            samples.append(
                Sample(
                    seconds: elapsed, targetKbps: scenario.publisher.targetKbps,
                    queueMs: Double(queued) * 8_000 / Double(rateAt(elapsed))))
        }
        return (samples, scenario)
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }

    @Test("2 Mbit/s steps to 500 kbit/s and back: the target drops under the link, the queue drains, it recovers")
    func stepDownAndUp() throws {
        let forward = LinkConfiguration(
            delay: .milliseconds(25), rate: 2_000_000, queueBytes: 75_000,
            schedule: [.setRate(500_000, at: .seconds(20)), .setRate(2_000_000, at: .seconds(40))])
        let rateAt: (Double) -> Int = { $0 > 20 && $0 <= 40 ? 500_000 : 2_000_000 }
        let (samples, scenario) = try Self.run(seed: 31, forward: forward, seconds: 70, rateAt: rateAt)
        func window(_ from: Double, _ to: Double) -> [Sample] {
            samples.filter { $0.seconds > from && $0.seconds <= to }
        }
        let beforeStep = window(15, 20).map(\.targetKbps).min() ?? 0
        let underLinkAt = window(20, 40).first { $0.targetKbps < 500 }?.seconds
        let drainedAt = window(20, 40).first { $0.queueMs < 100 && $0.seconds > (underLinkAt ?? 40) }?.seconds
        let narrowQueueP95 = Self.percentile(window(25, 40).map(\.queueMs), 0.95)
        let narrowMean = Double(window(25, 40).map(\.targetKbps).reduce(0, +)) / Double(window(25, 40).count)
        let recoveredAt = window(40, 70).first { $0.targetKbps >= 1_500 }?.seconds
        let wide = scenario.publisher.connection.statistics.transportWideCC
        // Each second: target kbit/s / queue ms.
        print(
            samples.filter { Int($0.seconds * 10) % 10 == 0 }.map {
                "\(Int($0.seconds)):\($0.targetKbps)/\(Int($0.queueMs))"
            }
            .joined(separator: " "))
        print(
            "congestion control, virtual time: \(beforeStep) kbit/s before the step; under 500 at "
                + "\(underLinkAt.map { String($0) } ?? "never") s; queue < 100 ms at "
                + "\(drainedAt.map { String($0) } ?? "never") s; p95 queue 25-40 s \(narrowQueueP95) ms; mean "
                + "\(Int(narrowMean)) kbit/s on 500 k; >= 1500 at \(recoveredAt.map { String($0) } ?? "never") s; "
                + "\(scenario.publisher.targets.count) target changes, limitation \(wide.limitation ?? "-"), "
                + "\(wide.probeClustersUnsent) probe clusters unsent")
        #expect(wide.estimatedBitrate != nil)
        // Today's figures (seed 31): 1,345 kbit/s before the step, under the link 0.8 s after it, the queue under
        // 100 ms 3.7 s after it, p95 queue 32 ms and a mean of 275 kbit/s on the narrow link, 1.5 Mbit/s again
        // 15.5 s after it widens. Issue 20's goals are 3 s to drain and 80 % utilisation: without a pacer, frames
        // burst into the queue, and the decrease that drains a 1.1 s queue goes deep (to 150 kbit/s) and climbs back
        // additively. The bounds below guard what holds today; the goals wait for the pacer.
        // Ramping by AIMD alone from the 1 Mbit/s start (no probes without a pacer).
        #expect(beforeStep >= 1_200, "target before the step: \(beforeStep) kbit/s")
        // The step: under the link within 2 s, the queue drained within 4 s and kept short.
        let under = try #require(underLinkAt, "the target never went under the 500 kbit/s link")
        #expect(under <= 22)
        let drained = try #require(drainedAt, "the queue never drained")
        #expect(drained <= 24)
        #expect(narrowQueueP95 <= 100, "p95 queue delay on the narrow link: \(narrowQueueP95) ms")
        #expect(narrowMean >= 200, "mean target on the 500 kbit/s link: \(narrowMean) kbit/s")
        // The link widens: AIMD climbs back to 75 % of it within 20 s.
        let recovered = try #require(recoveredAt, "the target never recovered to 1.5 Mbit/s")
        #expect(recovered <= 60)
        #expect(
            scenario.publisher.connection.statsReport(at: scenario.loop.now).candidatePair?.availableOutgoingBitrate
                != nil)
    }

    @Test("without transport-wide feedback nothing estimates: the target stays where the receiver reports put it")
    func noFeedbackNoEstimate() throws {
        let scenario = try Scenario(seed: 32, mediaFor: .seconds(5), transportWideCC: false)
        scenario.run(for: .seconds(6))
        let wide = scenario.publisher.connection.statistics.transportWideCC
        #expect(wide.estimatedBitrate == nil)
        #expect(
            scenario.publisher.connection.statsReport(at: scenario.loop.now).candidatePair?.availableOutgoingBitrate
                == nil)
    }
}
