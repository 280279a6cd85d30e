/// One datagram arriving at its destination, as returned by ``SimulatedNetwork/popDelivery(notAfter:)``.
public struct Delivery<Address: Hashable & Sendable>: Sendable, Hashable {
    /// The datagram's bytes, a copy of what was sent.
    public var bytes: [UInt8]
    /// The sender's address.
    public var from: Address
    /// The destination address.
    public var to: Address
    /// The instant the datagram arrives.
    public var at: ContinuousClock.Instant
    /// The instant it was sent (after the network moved a send that went back in time forward; see
    /// `SimulatedNetwork.send(_:from:to:at:)`).
    public var sentAt: ContinuousClock.Instant
    /// Whether this is the extra copy made by ``LinkConfiguration/duplicateRate``.
    public var isDuplicate: Bool

    /// A delivery; the network makes these, the initializer is for building expected values in tests.
    public init(
        bytes: [UInt8],
        from: Address,
        to: Address,
        at: ContinuousClock.Instant,
        sentAt: ContinuousClock.Instant,
        isDuplicate: Bool = false
    ) {
        self.bytes = bytes
        self.from = from
        self.to = to
        self.at = at
        self.sentAt = sentAt
        self.isDuplicate = isDuplicate
    }
}
