import CaptureNetworkSimulator
import Testing

/// Propagation delay, jitter, order preservation and the delivery queue's ordering rules.
@Suite struct DelayAndOrderTests {
    private static let start = ContinuousClock.now

    private func jitteryNetwork(preservesOrder: Bool) -> SimulatedNetwork<String> {
        let network = SimulatedNetwork<String>(seed: 3, start: Self.start)
        let link = LinkConfiguration(
            delay: .milliseconds(40), jitter: .milliseconds(10), preservesOrder: preservesOrder)
        network.setLink(from: "A", to: "B", link)
        return network
    }

    @Test func deliveriesFallWithinDelayPlusJitterAndKeepOrder() {
        let network = jitteryNetwork(preservesOrder: true)
        let outcomes = TestTraffic.sendPeriodic(
            on: network, count: 2_000, interval: .milliseconds(1), size: 100, first: Self.start)
        let deliveries = TestTraffic.drain(network)
        #expect(deliveries.count == 2_000)
        #expect(outcomes.allSatisfy { $0.deliveryTime != nil })
        let transits = deliveries.map { $0.sentAt.duration(to: $0.at) }
        #expect(transits.allSatisfy { (.milliseconds(40) ... .milliseconds(50)).contains($0) })
        #expect(Set(transits).count > 1_000)
        let sequences = deliveries.map { TestTraffic.sequence(of: $0.bytes) }
        #expect(sequences == Array(0..<2_000))
    }

    @Test func withoutOrderPreservationJitterReorders() {
        let network = jitteryNetwork(preservesOrder: false)
        _ = TestTraffic.sendPeriodic(
            on: network, count: 2_000, interval: .milliseconds(1), size: 100, first: Self.start)
        let deliveries = TestTraffic.drain(network)
        let transits = deliveries.map { $0.sentAt.duration(to: $0.at) }
        #expect(transits.allSatisfy { (.milliseconds(40) ... .milliseconds(50)).contains($0) })
        // The draws cover the whole 0...jitter range.
        #expect(transits.contains { $0 < .microseconds(40_100) })
        #expect(transits.contains { $0 > .microseconds(49_900) })
        let sequences = deliveries.map { TestTraffic.sequence(of: $0.bytes) }
        #expect(sequences != Array(0..<2_000))
        #expect(sequences.sorted() == Array(0..<2_000))
        // Jitter is not the reordering model: nothing is counted as held back.
        #expect(network.statistics(from: "A", to: "B").packetsReordered == 0)
    }

    @Test func tiesComeOutInSendOrderAndNothingBeforeItsTime() {
        let network = SimulatedNetwork<String>(
            seed: 5, start: Self.start, defaultLink: LinkConfiguration(delay: .milliseconds(10), duplicateRate: 1))
        for sequence in 0..<5 {
            network.send(TestTraffic.datagram(sequence: sequence, size: 8), from: "A", to: "B", at: Self.start)
        }
        #expect(network.nextDelivery == Self.start + .milliseconds(10))
        #expect(network.popDelivery(notAfter: Self.start + .milliseconds(9)) == nil)
        let deliveries = TestTraffic.drain(network)
        #expect(deliveries.map { TestTraffic.sequence(of: $0.bytes) } == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
        #expect(deliveries.map(\.isDuplicate) == Array(repeating: [false, true], count: 5).flatMap { $0 })
        let statistics = network.statistics(from: "A", to: "B")
        #expect(statistics.packetsDuplicated == 5)
        #expect(statistics.packetsDelivered == 10)
        #expect(network.pendingDeliveryCount == 0)
    }

    @Test func sendGoingBackInTimeIsMovedForward() {
        let network = SimulatedNetwork<String>(seed: 5, start: Self.start)
        network.send([1], from: "A", to: "B", at: Self.start + .milliseconds(5))
        let outcome = network.send([2], from: "A", to: "B", at: Self.start)
        #expect(outcome == .queued(deliveryAt: Self.start + .milliseconds(5)))
        #expect(TestTraffic.drain(network).map(\.bytes) == [[1], [2]])
    }
}
