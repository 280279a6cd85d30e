import CaptureNetworkSimulator
import Testing

/// Sends a numbered ping every 20 ms from its own timer and records the round-trip time of each echo.
private final class Pinger: VirtualPeer {
    let address: String
    let target: String
    private var nextPing: ContinuousClock.Instant
    private var sentAt: [Int: ContinuousClock.Instant] = [:]
    private var outbox: [[UInt8]] = []
    private(set) var roundTripTimes: [Duration] = []

    init(address: String, target: String, start: ContinuousClock.Instant) {
        self.address = address
        self.target = target
        self.nextPing = start
    }

    var addresses: [String] { [address] }

    var nextTimeout: ContinuousClock.Instant? { nextPing }

    func receive(
        _ datagram: UnsafeRawBufferPointer, from source: String, to destination: String, at now: ContinuousClock.Instant
    ) {
        guard let sent = sentAt.removeValue(forKey: TestTraffic.sequence(of: datagram)) else { return }
        roundTripTimes.append(now - sent)
    }

    func handleTimeout(at now: ContinuousClock.Instant) {
        while nextPing <= now {
            let sequence = sentAt.count + roundTripTimes.count
            sentAt[sequence] = now
            outbox.append(TestTraffic.datagram(sequence: sequence, size: 64))
            nextPing += .milliseconds(20)
        }
    }

    func drainTransmits(_ send: (_ from: String, _ to: String, _ bytes: UnsafeRawBufferPointer) -> Void) {
        for datagram in outbox {
            datagram.withUnsafeBytes { send(address, target, $0) }
        }
        outbox.removeAll()
    }
}

/// Sends every datagram it receives back to where it came from.
private final class Echoer: VirtualPeer {
    let addresses: [String]
    private var outbox: [(from: String, to: String, bytes: [UInt8])] = []
    private(set) var received = 0

    init(address: String) {
        addresses = [address]
    }

    var nextTimeout: ContinuousClock.Instant? { nil }

    func receive(
        _ datagram: UnsafeRawBufferPointer, from source: String, to destination: String, at now: ContinuousClock.Instant
    ) {
        received += 1
        outbox.append((destination, source, [UInt8](datagram)))
    }

    func handleTimeout(at now: ContinuousClock.Instant) {}

    func drainTransmits(_ send: (_ from: String, _ to: String, _ bytes: UnsafeRawBufferPointer) -> Void) {
        for datagram in outbox {
            datagram.bytes.withUnsafeBytes { send(datagram.from, datagram.to, $0) }
        }
        outbox.removeAll()
    }
}

/// A peer whose timer is always due and never moves: the loop must report it rather than spin forever.
private final class StuckPeer: VirtualPeer {
    let stuckAt: ContinuousClock.Instant
    private(set) var timeouts = 0

    init(stuckAt: ContinuousClock.Instant) {
        self.stuckAt = stuckAt
    }

    var addresses: [String] { ["stuck"] }

    var nextTimeout: ContinuousClock.Instant? { stuckAt }

    func receive(
        _ datagram: UnsafeRawBufferPointer, from source: String, to destination: String, at now: ContinuousClock.Instant
    ) {}

    func handleTimeout(at now: ContinuousClock.Instant) {
        timeouts += 1
    }

    func drainTransmits(_ send: (_ from: String, _ to: String, _ bytes: UnsafeRawBufferPointer) -> Void) {}
}

/// The virtual-time loop: event order, time keeping, stop conditions and livelock detection.
@Suite struct VirtualTimeLoopTests {
    private static let start = ContinuousClock.now

    private func pingSetup() -> (VirtualTimeLoop<String>, Pinger, Echoer) {
        let network = SimulatedNetwork<String>(seed: 31, start: Self.start)
        network.setLinks(between: "pinger", and: "echoer", LinkConfiguration(delay: .milliseconds(50)))
        let pinger = Pinger(address: "pinger", target: "echoer", start: Self.start)
        return (VirtualTimeLoop(network: network), pinger, Echoer(address: "echoer"))
    }

    @Test(.timeLimit(.minutes(1))) func pingOverFiftyMillisecondsTakesOneHundredMillisecondRoundTrips() {
        let (loop, pinger, echoer) = pingSetup()
        let deadline = Self.start + .seconds(10)
        var result: VirtualTimeLoopResult?
        // Nothing here waits for the wall clock: ten simulated seconds pass as fast as the steps run. How fast that is
        // belongs to a benchmark, not a test (a starved sanitized run once took a full second).
        result = loop.run(peers: [pinger, echoer], until: deadline)
        #expect(result?.reason == .deadlineReached)
        #expect(result?.now == deadline)
        #expect(loop.now == deadline)
        // Pings at 0, 20, …, 10,000 ms (501); those sent by 9,950 ms reach the echoer (498) and the echoes of those
        // sent by 9,900 ms are back (496) by the deadline.
        #expect(echoer.received == 498)
        #expect(pinger.roundTripTimes.count == 496)
        #expect(pinger.roundTripTimes.allSatisfy { $0 == .milliseconds(100) })
        #expect(result?.steps == 501 + 498 + 496)
        #expect(result?.undeliverable == 0)
    }

    @Test func stopConditionEndsTheRunAtTheFirstEcho() {
        let (loop, pinger, echoer) = pingSetup()
        let result = loop.run(peers: [pinger, echoer], until: Self.start + .seconds(10)) {
            !pinger.roundTripTimes.isEmpty
        }
        #expect(result.reason == .stopConditionMet)
        #expect(result.now == Self.start + .milliseconds(100))
        // Already met: the next run returns at once.
        let again = loop.run(peers: [pinger, echoer], until: Self.start + .seconds(10)) { true }
        #expect(again.steps == 0)
        #expect(again.now == result.now)
    }

    @Test func livelockingPeerIsReportedNotHung() {
        let network = SimulatedNetwork<String>(seed: 32, start: Self.start)
        let loop = VirtualTimeLoop(network: network, now: Self.start + .milliseconds(5))
        let peer = StuckPeer(stuckAt: Self.start)
        let result = loop.run(peers: [peer], until: Self.start + .seconds(1))
        #expect(result.reason == .livelock(stepsWithoutProgress: 10_000))
        #expect(result.now == Self.start + .milliseconds(5))
        #expect(peer.timeouts == 10_000)
    }

    @Test func undeliverableDatagramsAreCountedAndIdleRunsReachTheDeadline() {
        let network = SimulatedNetwork<String>(seed: 33, start: Self.start)
        let loop = VirtualTimeLoop(network: network)
        let echoer = Echoer(address: "echoer")
        network.send([1, 2, 3], from: "nobody", to: "echoer", at: Self.start)
        let result = loop.run(peers: [echoer], until: Self.start + .seconds(1))
        #expect(result.reason == .idle)
        #expect(result.now == Self.start + .seconds(1))
        #expect(result.steps == 2)
        #expect(result.undeliverable == 1)
        #expect(loop.totalUndeliverable == 1)
        // A deadline in the past does not move time backwards.
        let past = loop.run(peers: [echoer], until: Self.start)
        #expect(past.reason == .deadlineReached)
        #expect(past.now == Self.start + .seconds(1))
    }
}
