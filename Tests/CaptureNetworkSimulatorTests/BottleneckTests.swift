import CaptureNetworkSimulator
import Testing

/// The rate limit, the drop-tail queue and the link's schedule.
@Suite struct BottleneckTests {
    private static let start = ContinuousClock.now

    @Test func rateLimitShapesThroughputAndFillsTheQueue() throws {
        let rate = 1_000_000
        let queueBytes = 30_000
        let link = LinkConfiguration(delay: .milliseconds(20), rate: rate, queueBytes: queueBytes)
        let network = SimulatedNetwork<String>(seed: 21, start: Self.start, defaultLink: link)
        // 1,200-byte payloads at 2 Mbit/s: one every 4.8 ms for 5 s.
        let count = 1_042
        let outcomes = TestTraffic.sendPeriodic(
            on: network, count: count, interval: .microseconds(4_800), size: 1_200, first: Self.start)
        let deliveries = TestTraffic.drain(network)

        let throughput = TestTraffic.throughput(
            of: deliveries, in: (Self.start + .seconds(1))..<(Self.start + .seconds(5)))
        #expect(abs(throughput - Double(rate)) <= 0.03 * Double(rate))

        let statistics = network.statistics(from: "A", to: "B")
        let dropped = outcomes.filter { $0 == .queueFull }.count
        #expect(dropped > 0)
        #expect(statistics.packetsDroppedAtQueue == dropped)
        #expect(statistics.packetsDelivered == count - dropped)
        #expect(statistics.maximumQueueBytes <= queueBytes)
        #expect(statistics.maximumQueueBytes > queueBytes - 1_228)

        // A full queue holds queueBytes × 8 / rate = 240 ms of traffic, give or take one datagram's 9.8 ms.
        let fullQueueDelay = Duration.milliseconds(240)
        let oneDatagram = Duration.microseconds(9_824)
        #expect(abs((statistics.lastQueueingDelay - fullQueueDelay).seconds) <= oneDatagram.seconds)
        #expect(statistics.maximumQueueingDelay <= fullQueueDelay)
        let last = try #require(deliveries.last)
        let lastQueueingDelay = last.sentAt.duration(to: last.at) - .milliseconds(20)
        #expect(abs((lastQueueingDelay - fullQueueDelay).seconds) <= oneDatagram.seconds)
        // The queue drains once the sender stops.
        #expect(network.queuedBytes(from: "A", to: "B", at: Self.start + .seconds(6)) == 0)
    }

    @Test func rateChangeOnScheduleIsFollowed() {
        let link = LinkConfiguration(
            rate: 2_000_000, queueBytes: 50_000, schedule: [.setRate(500_000, at: .seconds(2))])
        let network = SimulatedNetwork<String>(seed: 22, start: Self.start, defaultLink: link)
        // 1,200-byte payloads at 3 Mbit/s: more than either rate.
        _ = TestTraffic.sendPeriodic(
            on: network, count: 1_562, interval: .microseconds(3_200), size: 1_200, first: Self.start)
        let deliveries = TestTraffic.drain(network)
        let before = TestTraffic.throughput(
            of: deliveries, in: (Self.start + .milliseconds(500))..<(Self.start + .seconds(2)))
        let after = TestTraffic.throughput(of: deliveries, in: (Self.start + .seconds(3))..<(Self.start + .seconds(5)))
        #expect(abs(before - 2_000_000) <= 0.03 * 2_000_000)
        #expect(abs(after - 500_000) <= 0.03 * 500_000)
    }

    @Test func linkDownDropsExactlyWhatIsSentWhileDown() {
        let link = LinkConfiguration(
            delay: .milliseconds(10), schedule: [.linkDown(at: .seconds(3)), .linkUp(at: .seconds(4))])
        let network = SimulatedNetwork<String>(seed: 23, start: Self.start, defaultLink: link)
        let outcomes = TestTraffic.sendPeriodic(
            on: network, count: 600, interval: .milliseconds(10), size: 100, first: Self.start)
        let down = outcomes.indices.filter { outcomes[$0] == .linkDown }
        #expect(down == Array(300..<400))
        #expect(outcomes.filter { $0.deliveryTime != nil }.count == 500)
        let deliveries = TestTraffic.drain(network)
        #expect(deliveries.map { TestTraffic.sequence(of: $0.bytes) } == Array(0..<300) + Array(400..<600))
        let statistics = network.statistics(from: "A", to: "B")
        #expect(statistics.packetsDroppedWhileDown == 100)
        #expect(statistics.packetsDelivered == 500)
    }

    @Test func datagramsQueuedBeforeTheLinkGoesDownAreStillDelivered() {
        // 10 datagrams of 1,228 wire bytes at 100 kbit/s take ~98 ms each: most are still queued at the 200 ms outage.
        let link = LinkConfiguration(
            rate: 100_000, schedule: [.linkDown(at: .milliseconds(200)), .linkUp(at: .seconds(10))])
        let network = SimulatedNetwork<String>(seed: 24, start: Self.start, defaultLink: link)
        let queued = TestTraffic.sendPeriodic(on: network, count: 10, interval: .zero, size: 1_200, first: Self.start)
        #expect(queued.allSatisfy { $0.deliveryTime != nil })
        #expect(network.send([0], from: "A", to: "B", at: Self.start + .milliseconds(300)) == .linkDown)
        #expect(TestTraffic.drain(network).count == 10)
    }
}
