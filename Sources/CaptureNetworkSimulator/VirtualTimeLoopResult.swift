/// How a ``VirtualTimeLoop/run(peers:until:stopWhen:)`` call ended.
public struct VirtualTimeLoopResult: Sendable, Hashable {
    /// Why a run returned.
    public enum StopReason: Sendable, Hashable {
        /// The next event was after the deadline (virtual time is now the deadline).
        case deadlineReached
        /// The `stopWhen` closure returned true.
        case stopConditionMet
        /// Nothing was pending: no datagram in flight and no peer timeout (virtual time is now the deadline).
        case idle
        /// Virtual time stopped advancing: this many consecutive steps ran at the same instant (a peer whose
        /// ``VirtualPeer/nextTimeout`` stays at or before now, or datagrams bouncing over zero-delay links).
        case livelock(stepsWithoutProgress: Int)
    }

    /// Why the run returned.
    public var reason: StopReason
    /// Virtual time when the run returned.
    public var now: ContinuousClock.Instant
    /// Deliveries and timeouts handled during the run (undeliverable datagrams count as steps).
    public var steps: Int
    /// Datagrams delivered during the run to an address no peer owns (dropped, and counted here).
    public var undeliverable: Int

    /// A result; the loop makes these.
    public init(reason: StopReason, now: ContinuousClock.Instant, steps: Int, undeliverable: Int) {
        self.reason = reason
        self.now = now
        self.steps = steps
        self.undeliverable = undeliverable
    }
}
