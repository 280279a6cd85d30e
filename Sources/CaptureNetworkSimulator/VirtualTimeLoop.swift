/// Runs ``VirtualPeer``s through a ``SimulatedNetwork`` in virtual time, like str0m's test `progress()` or pion's
/// vnet: seconds of a call in milliseconds of wall time, the same every run for the same seed.
///
/// Each step of ``run(peers:until:stopWhen:)``:
///
/// 1. hands every peer's queued datagrams to the network at the current virtual time (peers in array order);
/// 2. finds the earliest event: the network's ``SimulatedNetwork/nextDelivery`` and every peer's
///    ``VirtualPeer/nextTimeout`` (an instant at or before now counts as now);
/// 3. moves virtual time to it (never backwards, never past the deadline);
/// 4. delivers the datagram to the peer that owns its destination address, or runs the peer's timeout. A delivery
///    due at the same instant as a timeout goes first; timeouts due at the same instant run in peer order.
///
/// ```swift
/// let start = ContinuousClock.now
/// let network = SimulatedNetwork<String>(seed: 1, start: start)
/// network.setLinks(between: "offerer", and: "answerer", LinkConfiguration(delay: .milliseconds(40)))
/// let loop = VirtualTimeLoop(network: network)
/// let result = loop.run(peers: [offerer, answerer], until: start + .seconds(10)) { offerer.isConnected }
/// ```
///
/// ## Threading
///
/// Not thread-safe: the loop, its network and its peers have a single owner, and the loop calls the peers on the
/// caller's thread. It is a class so that a `stopWhen` closure can read ``now``.
public final class VirtualTimeLoop<Address: Hashable & Sendable> {
    /// The network the peers' datagrams cross.
    public let network: SimulatedNetwork<Address>
    /// The current virtual time. It only moves forward, during ``run(peers:until:stopWhen:)``.
    public private(set) var now: ContinuousClock.Instant
    /// How many consecutive steps may run without virtual time advancing before a run reports
    /// ``VirtualTimeLoopResult/StopReason/livelock(stepsWithoutProgress:)``. Values below 1 count as 1.
    public var livelockStepLimit: Int
    /// Steps handled over every run so far.
    public private(set) var totalSteps = 0
    /// Datagrams to addresses no peer owned, over every run so far.
    public private(set) var totalUndeliverable = 0

    /// A loop over `network`, at virtual time `now` (the network's start instant by default).
    public init(
        network: SimulatedNetwork<Address>,
        now: ContinuousClock.Instant? = nil,
        livelockStepLimit: Int = 10_000
    ) {
        self.network = network
        self.now = now ?? network.start
        self.livelockStepLimit = livelockStepLimit
    }

    /// Runs the peers until the deadline, until `stopWhen` returns true, until nothing is pending, or until a
    /// livelock; see ``VirtualTimeLoopResult/StopReason``.
    ///
    /// `stopWhen` is checked before the first step and after each one. Events due exactly at the deadline are
    /// handled. A deadline before ``now`` returns at once without moving time. When two peers claim the same
    /// address, the first in `peers` receives its datagrams. Peer datagrams queued by the last step stay with the
    /// peer until the next run drains them.
    @discardableResult
    public func run(
        peers: [any VirtualPeer<Address>],
        until deadline: ContinuousClock.Instant,
        stopWhen: () -> Bool = { false }
    ) -> VirtualTimeLoopResult {
        var steps = 0
        var undeliverable = 0
        var stepsWithoutProgress = 0
        var owners: [Address: Int] = [:]
        for (index, peer) in peers.enumerated() {
            for address in peer.addresses where owners[address] == nil {
                owners[address] = index
            }
        }
        func finish(_ reason: VirtualTimeLoopResult.StopReason) -> VirtualTimeLoopResult {
            totalSteps += steps
            totalUndeliverable += undeliverable
            return VirtualTimeLoopResult(reason: reason, now: now, steps: steps, undeliverable: undeliverable)
        }

        if stopWhen() { return finish(.stopConditionMet) }
        guard deadline >= now else { return finish(.deadlineReached) }
        while true {
            drainTransmits(of: peers)

            // The earliest timeout, the first peer in array order on a tie.
            var timeout: (instant: ContinuousClock.Instant, peer: Int)?
            for (index, peer) in peers.enumerated() {
                guard let instant = peer.nextTimeout else { continue }
                if let current = timeout, current.instant <= instant { continue }
                timeout = (instant, index)
            }
            let delivery = network.nextDelivery
            let next: ContinuousClock.Instant
            switch (delivery, timeout) {
            case (nil, nil):
                now = deadline
                return finish(.idle)
            case (let delivery?, nil):
                next = delivery
            case (nil, let timeout?):
                next = timeout.instant
            case (let delivery?, let timeout?):
                next = min(delivery, timeout.instant)
            }
            let eventTime = max(next, now)
            guard eventTime <= deadline else {
                now = deadline
                return finish(.deadlineReached)
            }
            if eventTime > now {
                now = eventTime
                stepsWithoutProgress = 0
            } else {
                stepsWithoutProgress += 1
            }

            if let datagram = network.popDelivery(notAfter: now) {
                if let owner = owners[datagram.to] {
                    datagram.bytes.withUnsafeBytes { bytes in
                        peers[owner].receive(bytes, from: datagram.from, to: datagram.to, at: now)
                    }
                } else {
                    undeliverable += 1
                }
            } else if let timeout {
                peers[timeout.peer].handleTimeout(at: now)
            }
            steps += 1

            if stopWhen() { return finish(.stopConditionMet) }
            if stepsWithoutProgress >= max(1, livelockStepLimit) {
                return finish(.livelock(stepsWithoutProgress: stepsWithoutProgress))
            }
        }
    }

    private func drainTransmits(of peers: [any VirtualPeer<Address>]) {
        let network = network
        let now = now
        for peer in peers {
            peer.drainTransmits { source, destination, bytes in
                network.send(bytes, from: source, to: destination, at: now)
            }
        }
    }
}
