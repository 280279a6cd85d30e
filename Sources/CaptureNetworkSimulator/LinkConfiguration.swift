/// How one direction of a simulated path treats the datagrams sent over it.
///
/// A datagram crosses a direction in this order:
///
/// 1. **Link state.** If the link is down (see ``schedule``) when the datagram is sent, it is dropped
///    (``SendOutcome/linkDown``).
/// 2. **Random loss.** An independent Bernoulli draw with ``lossRate``, and the ``burstLoss`` model if set, may
///    lose it (``SendOutcome/lost``). As with Linux netem, random loss happens before the bottleneck: a lost
///    datagram takes no link capacity.
/// 3. **Bottleneck.** With a ``rate``, the datagram waits in a drop-tail queue of ``queueBytes`` until the link is
///    free, then takes `size × 8 / rate` seconds to transmit, where the size counts ``overheadBytesPerPacket`` on
///    top of the payload. The queue holds every byte not yet fully transmitted, the datagram in transmission
///    included; a datagram that would take it past ``queueBytes`` is dropped (``SendOutcome/queueFull``). Without
///    a rate the link transmits instantly and nothing queues.
/// 4. **Propagation.** After it leaves the bottleneck, the datagram takes ``delay`` plus a uniform random
///    `0...jitter`. With ``preservesOrder`` it is never delivered before a datagram sent earlier on the same
///    direction; with ``reorderRate`` it may instead be held back by ``reorderDelay`` so that later datagrams
///    overtake it; with ``duplicateRate`` a second copy is delivered at the same instant.
///
/// ## Changing over time
///
/// ``schedule`` lists ``LinkChange``s at offsets from the network's start instant. Each setting is read at the
/// moment it matters: up/down and ``lossRate`` when the datagram is sent, ``rate`` when it starts transmission (a
/// datagram already transmitting keeps its rate), ``delay`` when it leaves the bottleneck.
///
/// ## Invalid values
///
/// The network never traps on a configuration: it uses ``normalized``, which clamps every out-of-range value
/// (negative durations and byte counts to zero, probabilities to `0...1` with NaN as 0, a rate below 1 bit/s to
/// 1 bit/s). Call ``validate()`` to reject such a configuration with a ``LinkConfigurationError`` instead.
public struct LinkConfiguration: Sendable, Hashable {
    /// One-way propagation delay, applied after the bottleneck. Default zero.
    public var delay: Duration
    /// The largest extra random delay: each datagram gets a uniform `0...jitter` on top of ``delay``. Default zero.
    public var jitter: Duration
    /// Whether jitter may make a datagram overtake one sent earlier on the same direction. When true (the default),
    /// a datagram's delivery is at least the previous one's; when false, jitter reorders freely. The
    /// ``reorderRate`` model reorders in both cases.
    public var preservesOrder: Bool
    /// Probability, independent per datagram, that a datagram is lost. Default 0.
    public var lossRate: Double
    /// Correlated (bursty) loss on top of ``lossRate``, or nil (the default) for none.
    public var burstLoss: BurstLoss?
    /// Probability that a datagram is held back by ``reorderDelay`` so that the following ones overtake it. Default 0.
    public var reorderRate: Double
    /// How long a datagram picked by ``reorderRate`` is held back. Default 20 ms.
    public var reorderDelay: Duration
    /// Probability that a datagram is delivered twice (both copies at the same instant). Default 0.
    public var duplicateRate: Double
    /// The bottleneck's rate in bits per second, counting ``overheadBytesPerPacket``, or nil (the default) for an
    /// unlimited link that never queues.
    public var rate: Int?
    /// The drop-tail queue's capacity in bytes (payload plus overhead, the datagram in transmission included).
    /// Only matters with a ``rate``. Default 64 KiB.
    public var queueBytes: Int
    /// Bytes added to each datagram's payload for the rate and the queue: the IP and UDP headers. Default 28
    /// (IPv4 + UDP); use 48 for IPv6.
    public var overheadBytesPerPacket: Int
    /// Changes to the link at offsets from the network's start instant, applied in offset order (changes at the
    /// same offset in array order). Default empty.
    public var schedule: [LinkChange]

    /// A configuration; every parameter defaults to a perfect, unlimited, zero-delay link.
    public init(
        delay: Duration = .zero,
        jitter: Duration = .zero,
        preservesOrder: Bool = true,
        lossRate: Double = 0,
        burstLoss: BurstLoss? = nil,
        reorderRate: Double = 0,
        reorderDelay: Duration = .milliseconds(20),
        duplicateRate: Double = 0,
        rate: Int? = nil,
        queueBytes: Int = 65_536,
        overheadBytesPerPacket: Int = 28,
        schedule: [LinkChange] = []
    ) {
        self.delay = delay
        self.jitter = jitter
        self.preservesOrder = preservesOrder
        self.lossRate = lossRate
        self.burstLoss = burstLoss
        self.reorderRate = reorderRate
        self.reorderDelay = reorderDelay
        self.duplicateRate = duplicateRate
        self.rate = rate
        self.queueBytes = queueBytes
        self.overheadBytesPerPacket = overheadBytesPerPacket
        self.schedule = schedule
    }

    /// This configuration with every out-of-range value clamped: negative durations, byte counts and change
    /// offsets to zero, probabilities to `0...1` (NaN to 0), rates below 1 bit/s to 1 bit/s. The network uses this.
    public var normalized: LinkConfiguration {
        var result = self
        result.delay = delay.clampedToNonNegative
        result.jitter = jitter.clampedToNonNegative
        result.lossRate = lossRate.clampedProbability
        result.burstLoss = burstLoss?.normalized
        result.reorderRate = reorderRate.clampedProbability
        result.reorderDelay = reorderDelay.clampedToNonNegative
        result.duplicateRate = duplicateRate.clampedProbability
        result.rate = rate.map { max(1, $0) }
        result.queueBytes = max(0, queueBytes)
        result.overheadBytesPerPacket = max(0, overheadBytesPerPacket)
        result.schedule = schedule.map(\.normalized)
        return result
    }

    /// Throws the first out-of-range value, in declaration order, instead of clamping it as ``normalized`` does.
    public func validate() throws(LinkConfigurationError) {
        try Self.check(duration: delay, "delay")
        try Self.check(duration: jitter, "jitter")
        try Self.check(probability: lossRate, "lossRate")
        if let burstLoss {
            try Self.check(probability: burstLoss.goodToBad, "burstLoss.goodToBad")
            try Self.check(probability: burstLoss.badToGood, "burstLoss.badToGood")
            try Self.check(probability: burstLoss.lossInBad, "burstLoss.lossInBad")
            try Self.check(probability: burstLoss.lossInGood, "burstLoss.lossInGood")
        }
        try Self.check(probability: reorderRate, "reorderRate")
        try Self.check(duration: reorderDelay, "reorderDelay")
        try Self.check(probability: duplicateRate, "duplicateRate")
        if let rate { try Self.check(rate: rate, "rate") }
        if queueBytes < 0 { throw .negativeByteCount(field: "queueBytes", value: queueBytes) }
        if overheadBytesPerPacket < 0 {
            throw .negativeByteCount(field: "overheadBytesPerPacket", value: overheadBytesPerPacket)
        }
        for (index, change) in schedule.enumerated() {
            try Self.check(duration: change.at, "schedule[\(index)].at")
            if case .some(.some(let rate)) = change.rate { try Self.check(rate: rate, "schedule[\(index)].rate") }
            if let lossRate = change.lossRate { try Self.check(probability: lossRate, "schedule[\(index)].lossRate") }
            if let delay = change.delay { try Self.check(duration: delay, "schedule[\(index)].delay") }
        }
    }

    private static func check(duration: Duration, _ field: String) throws(LinkConfigurationError) {
        if duration < .zero { throw .negativeDuration(field: field, value: duration) }
    }

    private static func check(probability: Double, _ field: String) throws(LinkConfigurationError) {
        if !(0...1).contains(probability) { throw .probabilityOutOfRange(field: field, value: probability) }
    }

    private static func check(rate: Int, _ field: String) throws(LinkConfigurationError) {
        if rate < 1 { throw .nonPositiveRate(field: field, value: rate) }
    }
}

extension Duration {
    var clampedToNonNegative: Duration { max(.zero, self) }
}

extension Double {
    /// The value in 0...1; NaN becomes 0.
    var clampedProbability: Double { isNaN ? 0 : Swift.min(1, Swift.max(0, self)) }
}
