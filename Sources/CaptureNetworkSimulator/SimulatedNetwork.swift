/// A deterministic, seeded network of one-way links between addresses, in virtual time.
///
/// The network moves datagrams without sockets or sleeps: ``send(_:from:to:at:)-([UInt8],_,_,_)`` runs a datagram
/// through the model of its direction (see ``LinkConfiguration``) and schedules its delivery, and
/// ``popDelivery(notAfter:)`` hands the due deliveries back in delivery-time order, deliveries due at the same
/// instant in the order they were sent. Nothing happens on its own: time only moves as far as the caller's `now`
/// arguments say, so seconds of simulated traffic take milliseconds. ``VirtualTimeLoop`` drives peers through it.
///
/// ## Directions
///
/// Each ordered pair `(from, to)` is a direction with its own configuration, queue, random stream and
/// ``LinkStatistics``. A direction is created the first time it is configured with ``setLink(from:to:_:)`` or
/// used by a send; until configured it uses ``defaultLink`` as it was at creation.
///
/// ## Determinism
///
/// All randomness comes from the seed: each direction has its own xoshiro256** stream, derived from the seed and
/// the direction's creation order. The same seed and the same calls in the same order therefore give identical
/// outcomes and deliveries on every platform, and traffic on one direction never changes the draws of another.
///
/// ## Threading
///
/// Not thread-safe: a network has a single owner (a test, or a ``VirtualTimeLoop``), which makes every call. It is
/// a class so that a loop and a test can share it; it is deliberately not `Sendable`.
public final class SimulatedNetwork<Address: Hashable & Sendable> {
    private struct Direction: Hashable {
        var from: Address
        var to: Address
    }

    /// The seed all random streams derive from.
    public let seed: UInt64
    /// The instant ``LinkChange`` offsets count from.
    public let start: ContinuousClock.Instant
    /// The configuration a direction gets when it is first used without ``setLink(from:to:_:)``. Changing it does
    /// not affect directions that already exist.
    public var defaultLink: LinkConfiguration

    private var directionIndices: [Direction: Int] = [:]
    private var links: [SimulatedLink] = []
    private var pending = DeliveryHeap<Address>()
    private var nextSequence: UInt64 = 0

    /// A network with no directions yet.
    ///
    /// - Parameters:
    ///   - seed: The seed of every random draw.
    ///   - start: The instant ``LinkChange`` offsets count from; usually the virtual clock's first instant.
    ///   - defaultLink: The configuration of directions not set with ``setLink(from:to:_:)``.
    public init(seed: UInt64, start: ContinuousClock.Instant, defaultLink: LinkConfiguration = .init()) {
        self.seed = seed
        self.start = start
        self.defaultLink = defaultLink
    }

    // MARK: Configuration

    /// Sets the configuration of the direction from `source` to `destination`, creating the direction if needed.
    ///
    /// Out-of-range values are clamped (see ``LinkConfiguration/normalized``); call
    /// ``LinkConfiguration/validate()`` first to reject them instead. Reconfiguring an existing direction applies to
    /// datagrams sent from then on: the queue, the datagrams already in flight, the random stream and the
    /// statistics carry over.
    public func setLink(from source: Address, to destination: Address, _ configuration: LinkConfiguration) {
        let direction = Direction(from: source, to: destination)
        if let index = directionIndices[direction] {
            links[index].reconfigure(configuration)
        } else {
            createLink(direction, configuration: configuration)
        }
    }

    /// Sets the same configuration on both directions between `first` and `second` (first → second, then
    /// second → first, which is the creation order of new directions).
    public func setLinks(between first: Address, and second: Address, _ configuration: LinkConfiguration) {
        setLink(from: first, to: second, configuration)
        setLink(from: second, to: first, configuration)
    }

    /// The normalized configuration of a direction: the one set, or ``defaultLink`` if it has not been created.
    public func link(from source: Address, to destination: Address) -> LinkConfiguration {
        if let index = directionIndices[Direction(from: source, to: destination)] {
            return links[index].configuration
        }
        return defaultLink.normalized
    }

    // MARK: Sending

    /// Sends a datagram from `source` to `destination` at `now` and reports what the link did with it.
    ///
    /// A queued datagram becomes available from ``popDelivery(notAfter:)`` at its delivery instant. Sends on one
    /// direction must not go back in time: a `now` earlier than that direction's previous send is taken as the
    /// previous send's instant. An empty datagram is carried like any other (its size is the overhead alone).
    @discardableResult
    public func send(
        _ bytes: [UInt8],
        from source: Address,
        to destination: Address,
        at now: ContinuousClock.Instant
    ) -> SendOutcome {
        let direction = Direction(from: source, to: destination)
        let index = directionIndices[direction] ?? createLink(direction, configuration: defaultLink)
        let decision = links[index].send(payloadBytes: bytes.count, at: now)
        guard case .queued(let deliveryAt) = decision.outcome else { return decision.outcome }
        var delivery = Delivery(bytes: bytes, from: source, to: destination, at: deliveryAt, sentAt: decision.sentAt)
        enqueue(delivery, link: index)
        if decision.duplicate {
            delivery.isDuplicate = true
            enqueue(delivery, link: index)
        }
        return decision.outcome
    }

    /// Sends a copy of `bytes`; otherwise the same as ``send(_:from:to:at:)-([UInt8],_,_,_)``.
    @discardableResult
    public func send(
        _ bytes: UnsafeRawBufferPointer,
        from source: Address,
        to destination: Address,
        at now: ContinuousClock.Instant
    ) -> SendOutcome {
        send([UInt8](bytes), from: source, to: destination, at: now)
    }

    // MARK: Receiving

    /// The delivery instant of the earliest pending datagram, or nil if none is in flight.
    public var nextDelivery: ContinuousClock.Instant? { pending.first?.delivery.at }

    /// The number of datagrams in flight (duplicates included).
    public var pendingDeliveryCount: Int { pending.count }

    /// Removes and returns the earliest pending datagram if it is due at or before `now`, else returns nil.
    ///
    /// Deliveries come out in delivery-time order; deliveries due at the same instant come out in the order they
    /// were sent (a duplicate right after its original).
    public func popDelivery(notAfter now: ContinuousClock.Instant) -> Delivery<Address>? {
        guard let first = pending.first, first.delivery.at <= now, let entry = pending.removeFirst() else {
            return nil
        }
        links[entry.link].recordDelivery(payloadBytes: entry.delivery.bytes.count)
        return entry.delivery
    }

    // MARK: Statistics

    /// The counters of the direction from `source` to `destination` (all zero if it has not been created).
    public func statistics(from source: Address, to destination: Address) -> LinkStatistics {
        guard let index = directionIndices[Direction(from: source, to: destination)] else { return LinkStatistics() }
        return links[index].statistics
    }

    /// The wire bytes in the direction's bottleneck queue at `instant` (not yet fully transmitted then).
    ///
    /// Exact for an instant at or after the direction's most recent send; for an earlier instant it counts only
    /// datagrams accepted up to now.
    public func queuedBytes(from source: Address, to destination: Address, at instant: ContinuousClock.Instant) -> Int {
        guard let index = directionIndices[Direction(from: source, to: destination)] else { return 0 }
        return links[index].queuedBytes(at: instant)
    }

    // MARK: Private

    @discardableResult
    private func createLink(_ direction: Direction, configuration: LinkConfiguration) -> Int {
        let index = links.count
        links.append(
            SimulatedLink(
                configuration: configuration,
                random: RandomStream(seed: seed, stream: index),
                start: start
            )
        )
        directionIndices[direction] = index
        return index
    }

    private func enqueue(_ delivery: Delivery<Address>, link: Int) {
        pending.insert(.init(delivery: delivery, sequence: nextSequence, link: link))
        nextSequence &+= 1
    }
}
