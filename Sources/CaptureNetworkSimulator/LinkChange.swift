/// A scheduled change to one direction of a link, at an offset from the network's start instant.
///
/// Each optional field that is non-nil replaces the matching setting from ``at`` on; nil fields leave it as it
/// was. ``rate`` is doubly optional: `nil` keeps the rate, `.some(nil)` makes the link unlimited, `.some(n)` sets
/// `n` bits per second. The static factories (``setRate(_:at:)``, ``linkDown(at:)``, ``linkUp(at:)``, …) spell the
/// common cases.
///
/// A change takes effect at the moment the setting matters for a datagram (see ``LinkConfiguration``): a link
/// that goes down drops datagrams sent at or after ``at`` and before the next change that brings it up, while
/// datagrams already in the queue or in flight are still delivered.
public struct LinkChange: Sendable, Hashable {
    /// When the change takes effect, as an offset from the network's start instant. A negative offset is clamped
    /// to zero.
    public var at: Duration
    /// The new bottleneck rate in bits per second: nil to keep it, `.some(nil)` for unlimited.
    public var rate: Int??
    /// Whether the link is up (true) or down (false) from now on, or nil to keep it.
    public var isUp: Bool?
    /// The new independent loss probability, or nil to keep it.
    public var lossRate: Double?
    /// The new propagation delay, or nil to keep it.
    public var delay: Duration?

    /// A change at `at`; every omitted setting is kept.
    public init(at: Duration, rate: Int?? = nil, isUp: Bool? = nil, lossRate: Double? = nil, delay: Duration? = nil) {
        self.at = at
        self.rate = rate
        self.isUp = isUp
        self.lossRate = lossRate
        self.delay = delay
    }

    /// Sets the bottleneck rate (nil for unlimited) at `offset`.
    public static func setRate(_ bitsPerSecond: Int?, at offset: Duration) -> LinkChange {
        LinkChange(at: offset, rate: .some(bitsPerSecond))
    }

    /// Takes the link down at `offset`: everything sent from then until it comes up again is dropped.
    public static func linkDown(at offset: Duration) -> LinkChange {
        LinkChange(at: offset, isUp: false)
    }

    /// Brings the link back up at `offset`.
    public static func linkUp(at offset: Duration) -> LinkChange {
        LinkChange(at: offset, isUp: true)
    }

    /// Sets the independent loss probability at `offset`.
    public static func setLossRate(_ lossRate: Double, at offset: Duration) -> LinkChange {
        LinkChange(at: offset, lossRate: lossRate)
    }

    /// Sets the propagation delay at `offset`.
    public static func setDelay(_ delay: Duration, at offset: Duration) -> LinkChange {
        LinkChange(at: offset, delay: delay)
    }

    /// This change with its values clamped as in ``LinkConfiguration/normalized``.
    public var normalized: LinkChange {
        var result = self
        result.at = at.clampedToNonNegative
        if case .some(.some(let bitsPerSecond)) = rate { result.rate = .some(max(1, bitsPerSecond)) }
        result.lossRate = lossRate?.clampedProbability
        result.delay = delay?.clampedToNonNegative
        return result
    }
}
