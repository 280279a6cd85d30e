/// What a ``SimulatedNetwork`` did with one datagram handed to `SimulatedNetwork.send(_:from:to:at:)`.
///
/// The outcome is decided at send time, since the whole path is known then; the datagram itself only appears
/// from ``SimulatedNetwork/popDelivery(notAfter:)`` once virtual time reaches its delivery instant.
public enum SendOutcome: Sendable, Hashable {
    /// The datagram will be delivered at this instant (a duplicate, if one is made, at the same instant).
    case queued(deliveryAt: ContinuousClock.Instant)
    /// Lost by the random loss models (``LinkConfiguration/lossRate``, ``LinkConfiguration/burstLoss``).
    case lost
    /// Dropped at the tail of the bottleneck queue: it would have exceeded ``LinkConfiguration/queueBytes``.
    case queueFull
    /// Dropped because the link was down when it was sent (see ``LinkChange/linkDown(at:)``).
    case linkDown

    /// The delivery instant, or nil if the datagram was dropped.
    public var deliveryTime: ContinuousClock.Instant? {
        if case .queued(let instant) = self { return instant }
        return nil
    }
}
