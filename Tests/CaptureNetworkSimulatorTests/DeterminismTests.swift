import CaptureNetworkSimulator
import Testing

/// Same seed and inputs give the same deliveries; the seed and the direction, not other traffic, pick the draws.
@Suite struct DeterminismTests {
    private static let start = ContinuousClock.now

    /// Every random feature at once, over a queueing bottleneck.
    private static let busyLink = LinkConfiguration(
        delay: .milliseconds(30),
        jitter: .milliseconds(15),
        preservesOrder: false,
        lossRate: 0.03,
        burstLoss: BurstLoss(goodToBad: 0.02, badToGood: 0.3),
        reorderRate: 0.05,
        duplicateRate: 0.02,
        rate: 2_000_000,
        queueBytes: 20_000
    )

    private struct Run: Equatable {
        var outcomes: [SendOutcome]
        var deliveries: [Delivery<String>]
    }

    /// A→B sends 1,000-byte datagrams every 3 ms (over the 2 Mbit/s rate); B→A optionally sends 100 bytes every 5 ms.
    private func run(seed: UInt64, reverseTraffic: Bool) -> Run {
        let network = SimulatedNetwork<String>(seed: seed, start: Self.start)
        network.setLinks(between: "A", and: "B", Self.busyLink)
        var outcomes: [SendOutcome] = []
        for millisecond in stride(from: 0, to: 6_000, by: 1) {
            let now = Self.start + .milliseconds(millisecond)
            if millisecond % 3 == 0 {
                let datagram = TestTraffic.datagram(sequence: millisecond / 3, size: 1_000)
                outcomes.append(network.send(datagram, from: "A", to: "B", at: now))
            }
            if reverseTraffic, millisecond % 5 == 0 {
                network.send(TestTraffic.datagram(sequence: millisecond, size: 100), from: "B", to: "A", at: now)
            }
        }
        return Run(outcomes: outcomes, deliveries: TestTraffic.drain(network))
    }

    @Test func sameSeedAndTrafficGiveIdenticalDeliveries() {
        let first = run(seed: 42, reverseTraffic: true)
        let second = run(seed: 42, reverseTraffic: true)
        #expect(first == second)
        // The scenario exercises every outcome, so the comparison covers every model.
        #expect(first.outcomes.contains(.lost))
        #expect(first.outcomes.contains(.queueFull))
        #expect(first.deliveries.contains { $0.isDuplicate })
    }

    @Test func differentSeedGivesDifferentLossPattern() {
        let first = run(seed: 42, reverseTraffic: false)
        let second = run(seed: 43, reverseTraffic: false)
        let lostFirst = first.outcomes.indices.filter { first.outcomes[$0] == .lost }
        let lostSecond = second.outcomes.indices.filter { second.outcomes[$0] == .lost }
        #expect(!lostFirst.isEmpty && !lostSecond.isEmpty)
        #expect(lostFirst != lostSecond)
    }

    @Test func trafficOnOneDirectionDoesNotChangeAnother() {
        let alone = run(seed: 7, reverseTraffic: false)
        let withReverse = run(seed: 7, reverseTraffic: true)
        #expect(alone.outcomes == withReverse.outcomes)
        #expect(alone.deliveries == withReverse.deliveries.filter { $0.from == "A" })
    }

    @Test func unsafeBufferSendCopiesTheBytes() {
        let network = SimulatedNetwork<String>(seed: 1, start: Self.start)
        var bytes: [UInt8] = [1, 2, 3]
        bytes.withUnsafeBytes { _ = network.send($0, from: "A", to: "B", at: Self.start) }
        bytes[0] = 9
        #expect(network.popDelivery(notAfter: Self.start)?.bytes == [1, 2, 3])
    }
}
