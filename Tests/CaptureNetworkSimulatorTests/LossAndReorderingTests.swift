import CaptureNetworkSimulator
import Testing

/// Independent and bursty loss, and the hold-back reordering model.
@Suite struct LossAndReorderingTests {
    private static let start = ContinuousClock.now

    /// The lengths of the runs of consecutive losses.
    private func burstLengths(_ outcomes: [SendOutcome]) -> [Int] {
        var lengths: [Int] = []
        var current = 0
        for outcome in outcomes {
            if outcome == .lost {
                current += 1
            } else if current > 0 {
                lengths.append(current)
                current = 0
            }
        }
        if current > 0 { lengths.append(current) }
        return lengths
    }

    private func mean(_ values: [Int]) -> Double {
        Double(values.reduce(0, +)) / Double(max(1, values.count))
    }

    @Test func independentLossIsCloseToItsRate() {
        let network = SimulatedNetwork<String>(
            seed: 11, start: Self.start, defaultLink: LinkConfiguration(delay: .milliseconds(10), lossRate: 0.05))
        let outcomes = TestTraffic.sendPeriodic(
            on: network, count: 10_000, interval: .milliseconds(1), size: 200, first: Self.start)
        let lost = outcomes.filter { $0 == .lost }.count
        #expect((400...600).contains(lost))
        let deliveries = TestTraffic.drain(network)
        let statistics = network.statistics(from: "A", to: "B")
        #expect(statistics.packetsLost == lost)
        #expect(statistics.packetsDelivered == 10_000 - lost)
        #expect(deliveries.count == 10_000 - lost)
        #expect(statistics.bytesDelivered == 200 * (10_000 - lost))
        // Independent losses rarely come in pairs.
        #expect(mean(burstLengths(outcomes)) < 1.2)
    }

    @Test func gilbertElliottLossComesInBursts() {
        // Bursts of 1 / 0.25 = 4 datagrams on average; 0.01 / 0.26 ≈ 3.8 % of datagrams in the bad state.
        let burstLoss = BurstLoss(goodToBad: 0.01, badToGood: 0.25)
        let network = SimulatedNetwork<String>(
            seed: 12, start: Self.start, defaultLink: LinkConfiguration(burstLoss: burstLoss))
        let outcomes = TestTraffic.sendPeriodic(
            on: network, count: 10_000, interval: .milliseconds(1), size: 200, first: Self.start)
        let bursts = burstLengths(outcomes)
        #expect(mean(bursts) > 2)
        let lossShare = Double(outcomes.filter { $0 == .lost }.count) / 10_000
        #expect((0.02...0.06).contains(lossShare))
    }

    @Test func reorderingHoldsBackAboutItsRate() {
        let link = LinkConfiguration(delay: .milliseconds(20), reorderRate: 0.1, reorderDelay: .milliseconds(50))
        let network = SimulatedNetwork<String>(seed: 13, start: Self.start, defaultLink: link)
        _ = TestTraffic.sendPeriodic(
            on: network, count: 5_000, interval: .milliseconds(10), size: 100, first: Self.start)
        let deliveries = TestTraffic.drain(network)
        #expect(deliveries.count == 5_000)
        // A datagram arrived after a later-sent one if a higher sequence number was delivered before it.
        var highestSeen = -1
        var late = 0
        for delivery in deliveries {
            let sequence = TestTraffic.sequence(of: delivery.bytes)
            if sequence < highestSeen { late += 1 }
            highestSeen = max(highestSeen, sequence)
        }
        #expect((400...600).contains(late))
        // Every held-back datagram is overtaken, except possibly the very last one sent.
        let reordered = network.statistics(from: "A", to: "B").packetsReordered
        #expect(reordered - late <= 1 && reordered >= late)
    }
}
