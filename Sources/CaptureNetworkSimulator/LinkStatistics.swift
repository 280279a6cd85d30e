/// Counters for one direction of a ``SimulatedNetwork``, read with ``SimulatedNetwork/statistics(from:to:)``.
///
/// Byte counts in the `bytes…` counters are payload bytes; the queue figures are wire bytes (payload plus
/// ``LinkConfiguration/overheadBytesPerPacket``), the unit the bottleneck works in. Every datagram sent is counted
/// once in ``packetsSent`` and, unless it is on its way, in exactly one of ``packetsLost``,
/// ``packetsDroppedAtQueue`` and ``packetsDroppedWhileDown``; once every delivery has been popped,
/// `packetsSent == packetsDelivered - packetsDuplicated + packetsLost + packetsDroppedAtQueue
/// + packetsDroppedWhileDown`.
public struct LinkStatistics: Sendable, Hashable {
    /// Datagrams handed to the network for this direction.
    public internal(set) var packetsSent = 0
    /// Payload bytes handed to the network for this direction.
    public internal(set) var bytesSent = 0
    /// Datagrams returned by ``SimulatedNetwork/popDelivery(notAfter:)``, duplicates included.
    public internal(set) var packetsDelivered = 0
    /// Payload bytes returned by ``SimulatedNetwork/popDelivery(notAfter:)``, duplicates included.
    public internal(set) var bytesDelivered = 0
    /// Datagrams lost by the random loss models.
    public internal(set) var packetsLost = 0
    /// Datagrams dropped at the tail of the bottleneck queue.
    public internal(set) var packetsDroppedAtQueue = 0
    /// Datagrams dropped because the link was down.
    public internal(set) var packetsDroppedWhileDown = 0
    /// Extra copies made by ``LinkConfiguration/duplicateRate``.
    public internal(set) var packetsDuplicated = 0
    /// Datagrams held back by ``LinkConfiguration/reorderRate`` (each is overtaken by every datagram sent within
    /// ``LinkConfiguration/reorderDelay`` after it). Overtaking caused by jitter without
    /// ``LinkConfiguration/preservesOrder`` is not counted.
    public internal(set) var packetsReordered = 0
    /// The most wire bytes the bottleneck queue has held, the accepted datagram included.
    public internal(set) var maximumQueueBytes = 0
    /// Wire bytes in the bottleneck queue just after the most recent send on this direction (see
    /// ``SimulatedNetwork/queuedBytes(from:to:at:)`` for the value at another instant).
    public internal(set) var currentQueueBytes = 0
    /// The longest time a datagram spent in the bottleneck, from its send to the end of its transmission.
    public internal(set) var maximumQueueingDelay = Duration.zero
    /// The time the most recently accepted datagram spends in the bottleneck.
    public internal(set) var lastQueueingDelay = Duration.zero

    /// All counters zero.
    public init() {}
}
