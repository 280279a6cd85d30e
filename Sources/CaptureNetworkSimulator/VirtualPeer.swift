/// A sans-IO endpoint that a ``VirtualTimeLoop`` runs through a ``SimulatedNetwork``.
///
/// The loop owns time: it never sleeps, it asks each peer when it next needs to run (``nextTimeout``), moves
/// virtual time to the earliest pending event and calls the peer with that instant. A peer must therefore take all
/// of its notion of "now" from the `at` arguments, never from a real clock.
///
/// ## Threading
///
/// The loop calls every requirement on the thread that called ``VirtualTimeLoop/run(peers:until:stopWhen:)``, one
/// call at a time. Peers need no locking for the loop's sake.
public protocol VirtualPeer<Address>: AnyObject {
    /// The address type of the network the peer is attached to.
    associatedtype Address: Hashable & Sendable

    /// The addresses this peer receives on: datagrams to any of them are handed to it. The loop reads this once at
    /// the start of each run.
    var addresses: [Address] { get }

    /// The instant the peer next needs ``handleTimeout(at:)``, or nil if it has nothing scheduled. An instant at or
    /// before the loop's current time fires at the current time.
    var nextTimeout: ContinuousClock.Instant? { get }

    /// Handles a datagram that arrived at `destination` (one of ``addresses``) from `source` at virtual time `now`.
    /// The buffer is valid only during the call.
    func receive(
        _ datagram: UnsafeRawBufferPointer,
        from source: Address,
        to destination: Address,
        at now: ContinuousClock.Instant
    )

    /// Runs the peer's timers due at or before `now` (virtual time).
    func handleTimeout(at now: ContinuousClock.Instant)

    /// Hands every datagram the peer has queued to `send` as (source, destination, bytes), in order, and forgets
    /// them. The bytes are copied during the call; the buffer need not outlive it.
    func drainTransmits(_ send: (_ from: Address, _ to: Address, _ bytes: UnsafeRawBufferPointer) -> Void)
}
