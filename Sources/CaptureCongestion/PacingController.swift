/// The pacer: the owner's queued packets out at the pacing rate, with a short burst allowance, retransmissions first,
/// a queue-time limit, and probe clusters sent at their own rate.
///
/// ## What it is
///
/// libwebrtc's `PacingController` "media debt" model as one sans-IO value. The owner keeps the packets (SRTP-protected
/// datagrams, or anything else); the pacer keeps only their handles, sizes (as the owner counts them) and enqueue
/// times, and says which handle to send when:
///
/// - Sending a packet adds its size to the **media debt**; the debt drains at the ``effectiveRate`` over elapsed time
///   and is capped at rate × ``Configuration/maximumDebtDuration``. A packet may leave while the debt is at most
///   rate × ``Configuration/burstInterval`` (the burst allowance): at 1 Mbit/s and 40 ms, about 5 kB leave back to
///   back, then one packet each time the debt has drained back to the allowance. Over time the sent rate is the
///   pacing rate.
/// - ``Priority/retransmission`` leaves before ``Priority/media``; first in, first out within a priority.
/// - **Queue-time limit.** When the queued bytes at the pacing rate would take longer than
///   ``Configuration/queueTimeLimit`` less the oldest packet's wait (at least 1 ms), the ``effectiveRate`` is raised
///   to drain the queue (and the unpaid debt in front of it) in that time (libwebrtc's `kMaxExpectedQueueLength`), and falls back to ``pacingRate`` when
///   that is no longer needed.
/// - **Probe clusters** (``ProbeClusterRequest``) run one at a time, first in, first out. A cluster starts at the
///   first ``poll(at:)`` after it was added once any packet was ever enqueued (libwebrtc waits for media), and is
///   abandoned if it has waited more than 5 s. While it runs, packets leave at the cluster's bitrate whatever the
///   debt: queued packets first, tagged with the cluster's id, and ``Output/padding(size:probeClusterID:)`` when the
///   queue is empty. The cluster's cumulative bytes follow its bitrate from its start; packets due within
///   ``Configuration/minimumProbeDelta`` of a burst's start leave in that burst, so bursts are never closer than it.
///   It is done when both its minimum bytes and its minimum packets (at least one) were sent.
/// - **Padding to a rate** (``setPaddingRate(_:at:)``, libwebrtc's padding rate): while it is above zero, a packet
///   was ever enqueued, no probe runs and the queue is empty, ``Output/padding(size:probeClusterID:)`` (without a
///   cluster id) fills the gaps so that everything sent adds up to that rate. A second debt, the **padding debt**,
///   takes every byte sent (media, retransmissions, probes and padding) and drains at the padding rate; once both
///   debts are paid, a burst of 5 ms at the padding rate leaves (libwebrtc's padding per process call). Media at or
///   above the padding rate leaves no room for any. An owner sets it where
///   its estimate cannot grow on what the encoder sends (libwebrtc pads simulcast up to every lower layer's target and
///   the top layer's minimum × 1.2, at most the estimate), so that the acknowledged rate, and with it the estimate,
///   can climb to where the encoder turns its next layer on.
///
/// ## Sans-IO
///
/// Time is an input, on the package's `ContinuousClock`, converted once to `Int64` nanoseconds from the instant given
/// to ``init(configuration:at:)`` with saturating arithmetic. The owner enqueues, then loops
/// `while let output = pacer.poll(at: now) { … }` and waits until ``nextDeadline`` (or the next enqueue). The queue is
/// one ring per priority, grown by doubling when full and never shrunk: the steady state allocates nothing per
/// packet.
///
/// ## Hostile input
///
/// Nothing traps: negative sizes count as zero (sizes are capped at `Int32.max`), a rate ≤ 0 is 1 kbit/s, rates are
/// capped at 10¹⁵ bit/s, time going back drains nothing (and moves the reference back), a far-future instant drains
/// the debt, a cluster with a rate ≤ 0 runs at 1 kbit/s, and a cluster still running after 5 s is abandoned.
///
/// ## Where this differs from libwebrtc
///
/// - One queue per priority (two priorities), no audio class and no round robin between streams: the owner's video
///   streams (simulcast layers) share each queue in the order their packets came. No ALR detection or ALR probing.
/// - The burst allowance is a debt threshold rather than libwebrtc's send-burst-interval bookkeeping; the outcome is
///   the same (up to rate × 40 ms back to back), without libwebrtc's 63 kB burst cap.
/// - The queue-time limit uses the oldest packet's wait and counts the unpaid debt with the queued bytes; libwebrtc
///   uses the queue's average wait and the queued bytes alone, a rate that only reaches the limit asymptotically.
/// - Probe packets (media and padding) add to the media debt, as libwebrtc's `OnPacketSent` does: the path carries
///   those bytes too, so media after a probe is held back until the debt drains (the debt cap bounds the hold-back
///   to ``Configuration/maximumDebtDuration``), and the average rate stays at the pacing rate.
/// - Delayed probes are abandoned only after 5 s of waiting (libwebrtc also drops a probe whose next send is late by
///   a few milliseconds); the owner's loop is expected to poll on time.
///
/// ## Threading
///
/// A plain value, not thread-safe: one owner (the connection's send loop) mutates it.
public struct PacingController: Sendable {
    /// The pacer's tunables.
    public struct Configuration: Sendable, Hashable {
        /// How far media may run ahead of the rate (the media-debt allowance). Default 40 ms (libwebrtc
        /// `PacerConfig::kDefaultTimeInterval`).
        public var burstInterval: Duration
        /// The debt is capped at rate × this. Default 500 ms.
        public var maximumDebtDuration: Duration
        /// The rate is raised so that the queue drains within this. Default 2 s (libwebrtc
        /// `kMaxExpectedQueueLength`).
        public var queueTimeLimit: Duration
        /// The size (bytes, as the owner counts sizes) of one padding packet the owner builds. Default 250.
        public var paddingPacketSize: Int
        /// Probe packets are sent in bursts no closer than this. Default 1 ms.
        public var minimumProbeDelta: Duration

        /// A configuration; negative durations count as zero, a padding size under 1 as 1.
        public init(
            burstInterval: Duration = .milliseconds(40), maximumDebtDuration: Duration = .milliseconds(500),
            queueTimeLimit: Duration = .seconds(2), paddingPacketSize: Int = 250,
            minimumProbeDelta: Duration = .milliseconds(1)
        ) {
            self.burstInterval = burstInterval
            self.maximumDebtDuration = maximumDebtDuration
            self.queueTimeLimit = queueTimeLimit
            self.paddingPacketSize = paddingPacketSize
            self.minimumProbeDelta = minimumProbeDelta
        }
    }

    /// Which queue a packet joins; a lower raw value leaves first.
    public enum Priority: Int, Sendable, Hashable, Comparable {
        /// A retransmission (RTX, NACK answer): before any media.
        case retransmission = 0
        /// Media (and FEC).
        case media = 1

        /// Whether `lhs` leaves before `rhs`.
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the owner must send now.
    public enum Output: Sendable, Hashable {
        /// Send the owner's queued packet `handle` now; `probeClusterID` marks it as part of a probe cluster.
        case packet(handle: Int, probeClusterID: Int?)
        /// Build and send one padding packet of `size` bytes now: for the probe cluster `probeClusterID`, or (`nil`)
        /// to hold the padding rate.
        case padding(size: Int, probeClusterID: Int?)
    }

    /// Counters, for statistics and tests.
    public struct Statistics: Sendable, Hashable {
        /// Queued packets sent (media and retransmissions, probes included).
        public var packetsSent = 0
        /// Their bytes.
        public var bytesSent = 0
        /// Padding packets asked for.
        public var paddingPacketsSent = 0
        /// Their bytes.
        public var paddingBytesSent = 0
        /// Probe clusters started.
        public var probeClustersStarted = 0
        /// Probe clusters that sent their minimum bytes and packets.
        public var probeClustersCompleted = 0
        /// Probe clusters dropped: waited more than 5 s (no media ever, or behind others), or still running after 5 s.
        public var probeClustersAbandoned = 0
        /// Times the effective rate was raised above the pacing rate to meet the queue-time limit.
        public var queueTimeLimitRaises = 0
        /// The sum over sent packets of their time in the queue (W3C `totalPacketSendDelay`).
        public var totalQueueDelay: Duration = .zero
        /// Queued packets dropped by ``PacingController/removeAll()``.
        public var packetsDropped = 0

        /// Zero counters.
        public init() {}
    }

    private struct ActiveCluster {
        var request: ProbeClusterRequest
        var bitrate: Double
        var minimumBytes: Int
        var minimumPackets: Int
        var start: Int64
        var bytes = 0
        var packets = 0
        var nextSlot: Int64
        var burstStart: Int64?
    }

    private struct PendingCluster {
        var request: ProbeClusterRequest
        var added: Int64
    }

    static let minimumRate = 1000.0
    static let maximumRate = 1e15
    static let maximumSize = Int(Int32.max)
    static let probeMaximumWait: Int64 = 5 * Nanoseconds.perSecond

    /// The configuration in force.
    public let configuration: Configuration
    private let epoch: ContinuousClock.Instant
    private let burstNanoseconds: Int64
    private let debtNanoseconds: Int64
    private let queueLimitNanoseconds: Int64
    private let probeDeltaNanoseconds: Int64
    private let paddingSize: Int

    private var retransmissions = PacketRing()
    private var media = PacketRing()
    private var rate = 1_000_000.0
    private var effective = 1_000_000.0
    private var raised = false
    private var debt = 0.0
    /// The padding rate, bit/s (0: no padding but probes'), and the debt every byte sent adds to, drained at it.
    private var paddingRateBits = 0.0
    private var paddingDebt = 0.0
    /// Padding bytes still to send at ``paddingBurstAt``: a burst starts when both debts are paid and holds 5 ms at
    /// the padding rate (libwebrtc asks for that much padding per process call), so that the owner wakes about every
    /// 5 ms rather than once per small padding packet.
    private var paddingBurstLeft = 0
    private var paddingBurstAt: Int64 = .min
    static let paddingBurstNanoseconds: Int64 = 5 * Nanoseconds.perMillisecond
    private var lastUpdate: Int64 = 0
    private var anyPacketEnqueued = false
    private var pending: [PendingCluster] = []
    private var active: ActiveCluster?
    private var queueDelaySum: Int64 = 0

    /// Counters (see ``Statistics``).
    public private(set) var statistics = Statistics()

    /// A pacer at 1 Mbit/s until ``setPacingRate(_:at:)``, with an empty queue.
    public init(configuration: Configuration = .init(), at now: ContinuousClock.Instant) {
        self.configuration = configuration
        self.epoch = now
        self.burstNanoseconds = max(0, Nanoseconds.of(configuration.burstInterval))
        self.debtNanoseconds = max(0, Nanoseconds.of(configuration.maximumDebtDuration))
        self.queueLimitNanoseconds = Nanoseconds.of(configuration.queueTimeLimit)
        self.probeDeltaNanoseconds = max(0, Nanoseconds.of(configuration.minimumProbeDelta))
        self.paddingSize = min(max(1, configuration.paddingPacketSize), Self.maximumSize)
    }

    // MARK: Inputs

    /// Sets the rate the media debt drains at, bit/s; ≤ 0 is treated as 1 kbit/s.
    public mutating func setPacingRate(_ bitsPerSecond: Int, at now: ContinuousClock.Instant) {
        let time = nanoseconds(now)
        drain(to: time)
        rate = min(max(Self.minimumRate, Double(bitsPerSecond)), Self.maximumRate)
        updateEffectiveRate(at: time)
        // A step down must not leave seconds of debt from the old rate: cap it at the new rate.
        debt = min(debt, max(debtCap, 0))
    }

    /// Sets the rate, bit/s, that padding fills what is sent up to while the queue is empty (see the type's notes);
    /// 0 (the default, and any value ≤ 0) sends no padding but probes'.
    public mutating func setPaddingRate(_ bitsPerSecond: Int, at now: ContinuousClock.Instant) {
        drain(to: nanoseconds(now))
        paddingRateBits = bitsPerSecond <= 0 ? 0 : min(Double(bitsPerSecond), Self.maximumRate)
        paddingDebt = min(paddingDebt, paddingDebtCap)
    }

    /// The padding rate, bit/s (0: none).
    public var paddingRate: Int { paddingRateBits == 0 ? 0 : Int(bitrate: paddingRateBits) }

    /// Queues the owner's packet `handle` of `size` bytes (negative counts as zero).
    public mutating func enqueue(handle: Int, size: Int, priority: Priority, at now: ContinuousClock.Instant) {
        let time = nanoseconds(now)
        drain(to: time)
        let entry = PacketRing.Entry(handle: handle, size: min(max(0, size), Self.maximumSize), enqueuedAt: time)
        switch priority {
        case .retransmission: retransmissions.push(entry)
        case .media: media.push(entry)
        }
        anyPacketEnqueued = true
        updateEffectiveRate(at: time)
    }

    /// Queues a probe cluster; it starts at the first ``poll(at:)`` once the clusters before it are done and a packet
    /// was ever enqueued.
    public mutating func addProbeCluster(_ request: ProbeClusterRequest, at now: ContinuousClock.Instant) {
        pending.append(PendingCluster(request: request, added: nanoseconds(now)))
    }

    /// Drops every queued packet (the owner lost its route); counted in ``Statistics/packetsDropped``. Probe clusters
    /// and the debt are kept.
    public mutating func removeAll() {
        statistics.packetsDropped = Self.saturatingSum(statistics.packetsDropped, queuedPackets)
        retransmissions.removeAll()
        media.removeAll()
        raised = false
        effective = rate
    }

    // MARK: Output

    /// The next thing to send at `now`, or nil when nothing may leave now (then ask again at ``nextDeadline``). The
    /// caller loops `while let output = pacer.poll(at: now) { … }`.
    public mutating func poll(at now: ContinuousClock.Instant) -> Output? {
        let time = nanoseconds(now)
        drain(to: time)
        updateEffectiveRate(at: time)
        if let output = pollProbe(at: time) { return output }
        if active != nil { return nil }
        if queuedPackets == 0, let padding = pollPadding(at: time) { return padding }
        guard queuedPackets > 0, debt <= allowance + 1e-6 else { return nil }
        guard let entry = popFront() else { return nil }
        send(entry, at: time)
        return .packet(handle: entry.handle, probeClusterID: nil)
    }

    /// When to poll next: the next probe send, else when the debt has drained to the allowance (an instant in the
    /// past means now), else (the queue empty, a padding rate set, media seen) when both debts are paid, for the next
    /// padding burst. Nil when nothing is queued, pending, running or padded.
    public var nextDeadline: ContinuousClock.Instant? {
        if let active {
            if let burst = active.burstStart, active.nextSlot <= Nanoseconds.sum(burst, probeDeltaNanoseconds) {
                return instant(lastUpdate)
            }
            let afterBurst = active.burstStart.map { Nanoseconds.sum($0, probeDeltaNanoseconds) } ?? .min
            return instant(max(active.nextSlot, afterBurst))
        }
        if let first = pending.first {
            if anyPacketEnqueued { return instant(lastUpdate) }
            return instant(Nanoseconds.sum(first.added, Self.probeMaximumWait + 1))
        }
        guard queuedPackets > 0 else {
            guard paddingRateBits > 0, anyPacketEnqueued else { return nil }
            // Padding: once both debts are paid.
            let wait = max(debt * 8e9 / effective, paddingDebt * 8e9 / paddingRateBits).rounded(.up)
            return instant(Nanoseconds.sum(lastUpdate, wait < 9e18 ? Int64(wait) : .max))
        }
        let excess = debt - allowance
        if excess <= 0 { return instant(lastUpdate) }
        let wait = (excess * 8e9 / effective).rounded(.up)
        return instant(Nanoseconds.sum(lastUpdate, wait < 9e18 ? Int64(wait) : .max))
    }

    /// Packets queued.
    public var queuedPackets: Int { retransmissions.count + media.count }

    /// Bytes queued.
    public var queuedBytes: Int { Self.saturatingSum(retransmissions.bytes, media.bytes) }

    /// How long the packet that has waited longest has waited at `now`; `.zero` when the queue is empty.
    public func oldestQueueTime(at now: ContinuousClock.Instant) -> Duration {
        guard let oldest = oldestEnqueueTime else { return .zero }
        return .nanoseconds(max(0, Nanoseconds.difference(nanoseconds(now), oldest)))
    }

    /// The time to send ``queuedBytes`` at the ``effectiveRate``.
    public var expectedQueueTime: Duration {
        let seconds = Double(queuedBytes) * 8 / effective
        return .nanoseconds(Int64(min(seconds * 1e9, 9e18)))
    }

    /// The configured rate, bit/s.
    public var pacingRate: Int { Int(bitrate: rate) }

    /// The rate the debt drains at, bit/s: ``pacingRate``, or more to meet the queue-time limit.
    public var effectiveRate: Int { Int(bitrate: effective) }

    /// The id of the probe cluster being sent, or nil.
    public var activeProbeClusterID: Int? { active?.request.id }

    /// Probe clusters added and not yet started.
    public var pendingProbeClusters: Int { pending.count }

    /// The ring storage (retransmission and media slots), for tests of the no-growth steady state.
    var capacity: Int { retransmissions.capacity + media.capacity }

    // MARK: Internals

    private var allowance: Double { effective / 8 * Double(burstNanoseconds) / 1e9 }

    private var debtCap: Double { effective / 8 * Double(debtNanoseconds) / 1e9 }

    private var paddingDebtCap: Double { paddingRateBits / 8 * Double(debtNanoseconds) / 1e9 }

    /// One padding packet to hold the padding rate when the queue is empty: a burst of 5 ms at the padding rate starts
    /// once a padding rate is set, media was seen and both debts are paid; the rest of a burst only at its instant.
    private mutating func pollPadding(at time: Int64) -> Output? {
        guard paddingRateBits > 0, anyPacketEnqueued else { return nil }
        if paddingBurstAt != time { paddingBurstLeft = 0 }
        if paddingBurstLeft <= 0, debt <= 1e-6, paddingDebt <= 1e-6 {
            let burst = paddingRateBits / 8 * Double(Self.paddingBurstNanoseconds) / 1e9
            paddingBurstLeft = max(paddingSize, Int(min(burst, Double(Self.maximumSize))))
            paddingBurstAt = time
        }
        guard paddingBurstLeft > 0 else { return nil }
        paddingBurstLeft -= paddingSize
        return sendPadding()
    }

    /// One padding packet to hold the padding rate, its bytes on both debts.
    private mutating func sendPadding() -> Output {
        addDebt(paddingSize)
        // At least the packet itself on the padding debt, whatever its cap (a zero maximum debt duration would leave it
        // at zero and let padding leave without end).
        paddingDebt = max(paddingDebt, Double(paddingSize))
        statistics.paddingPacketsSent = Self.saturatingSum(statistics.paddingPacketsSent, 1)
        statistics.paddingBytesSent = Self.saturatingSum(statistics.paddingBytesSent, paddingSize)
        return .padding(size: paddingSize, probeClusterID: nil)
    }

    private var oldestEnqueueTime: Int64? {
        switch (retransmissions.front, media.front) {
        case (let a?, let b?): min(a.enqueuedAt, b.enqueuedAt)
        case (let a?, nil): a.enqueuedAt
        case (nil, let b?): b.enqueuedAt
        case (nil, nil): nil
        }
    }

    private mutating func popFront() -> PacketRing.Entry? {
        retransmissions.popFront() ?? media.popFront()
    }

    private mutating func drain(to time: Int64) {
        if time > lastUpdate {
            let elapsed = Double(Nanoseconds.difference(time, lastUpdate)) / 1e9
            debt = max(0, debt - effective / 8 * elapsed)
            paddingDebt = max(0, paddingDebt - paddingRateBits / 8 * elapsed)
        }
        lastUpdate = time
    }

    /// Adds a sent packet's bytes to the media debt and the padding debt (each capped at its rate × the maximum debt
    /// duration).
    private mutating func addDebt(_ size: Int) {
        debt = min(debt + Double(size), max(debtCap, 0))
        paddingDebt = min(paddingDebt + Double(size), paddingDebtCap)
    }

    private mutating func updateEffectiveRate(at time: Int64) {
        let bytes = queuedBytes
        guard bytes > 0, let oldest = oldestEnqueueTime else {
            effective = rate
            raised = false
            return
        }
        let waited = max(0, Nanoseconds.difference(time, oldest))
        let left = max(Nanoseconds.perMillisecond, Nanoseconds.difference(queueLimitNanoseconds, waited))
        // The debt must drain before the queue can: without it the rate chases the limit and only meets it at 1 ms.
        let needed = min((Double(bytes) + debt) * 8 / (Double(left) / 1e9), Self.maximumRate)
        if needed > rate {
            if !raised { statistics.queueTimeLimitRaises += 1 }
            raised = true
            effective = needed
        } else {
            raised = false
            effective = rate
        }
    }

    private mutating func send(_ entry: PacketRing.Entry, at time: Int64) {
        addDebt(entry.size)
        statistics.packetsSent = Self.saturatingSum(statistics.packetsSent, 1)
        statistics.bytesSent = Self.saturatingSum(statistics.bytesSent, entry.size)
        queueDelaySum = Nanoseconds.sum(queueDelaySum, max(0, Nanoseconds.difference(time, entry.enqueuedAt)))
        statistics.totalQueueDelay = .nanoseconds(queueDelaySum)
    }

    /// Starts, abandons, and sends for probe clusters; nil when no probe packet leaves now.
    private mutating func pollProbe(at time: Int64) -> Output? {
        if let running = active, Nanoseconds.difference(time, running.start) > Self.probeMaximumWait {
            active = nil
            statistics.probeClustersAbandoned += 1
        }
        while active == nil, let first = pending.first {
            if Nanoseconds.difference(time, first.added) > Self.probeMaximumWait {
                pending.removeFirst()
                statistics.probeClustersAbandoned += 1
                continue
            }
            guard anyPacketEnqueued else { return nil }
            pending.removeFirst()
            let request = first.request
            active = ActiveCluster(
                request: request, bitrate: min(max(Self.minimumRate, Double(request.bitrate)), Self.maximumRate),
                minimumBytes: max(0, request.minimumBytes), minimumPackets: max(1, request.minimumPackets),
                start: time, nextSlot: time)
            statistics.probeClustersStarted += 1
        }
        guard var cluster = active else { return nil }
        let burstEnd = cluster.burstStart.map { Nanoseconds.sum($0, probeDeltaNanoseconds) }
        if let burstEnd, time < burstEnd, time >= (cluster.burstStart ?? time) {
            guard cluster.nextSlot <= burstEnd else { return nil }
        } else {
            guard cluster.nextSlot <= time else { return nil }
            cluster.burstStart = time
        }
        let output: Output
        let size: Int
        if let entry = popFront() {
            send(entry, at: time)
            size = entry.size
            output = .packet(handle: entry.handle, probeClusterID: cluster.request.id)
        } else {
            size = paddingSize
            addDebt(size)
            statistics.paddingPacketsSent = Self.saturatingSum(statistics.paddingPacketsSent, 1)
            statistics.paddingBytesSent = Self.saturatingSum(statistics.paddingBytesSent, size)
            output = .padding(size: size, probeClusterID: cluster.request.id)
        }
        cluster.bytes = Self.saturatingSum(cluster.bytes, size)
        cluster.packets = Self.saturatingSum(cluster.packets, 1)
        let offset = min(Double(cluster.bytes) * 8e9 / cluster.bitrate, 9e18)
        cluster.nextSlot = Nanoseconds.sum(cluster.start, Int64(offset))
        if cluster.bytes >= cluster.minimumBytes, cluster.packets >= cluster.minimumPackets {
            active = nil
            statistics.probeClustersCompleted += 1
        } else {
            active = cluster
        }
        updateEffectiveRate(at: time)
        return output
    }

    private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        Nanoseconds.of(epoch.duration(to: instant))
    }

    private func instant(_ nanoseconds: Int64) -> ContinuousClock.Instant {
        epoch.advanced(by: .nanoseconds(nanoseconds))
    }

    static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : value
    }
}

/// A first-in, first-out ring of queued packets, grown by doubling when full and never shrunk.
struct PacketRing {
    struct Entry {
        var handle: Int
        var size: Int
        var enqueuedAt: Int64
    }

    private var storage: [Entry] = []
    private var head = 0
    private(set) var count = 0
    /// The sum of the queued sizes (each at most `Int32.max`).
    private(set) var bytes = 0

    var capacity: Int { storage.count }

    var front: Entry? { count > 0 ? storage[head] : nil }

    mutating func push(_ entry: Entry) {
        if count == storage.count { grow() }
        var index = head + count
        if index >= storage.count { index -= storage.count }
        storage[index] = entry
        count += 1
        bytes = PacingController.saturatingSum(bytes, entry.size)
    }

    mutating func popFront() -> Entry? {
        guard count > 0 else { return nil }
        let entry = storage[head]
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        bytes = count == 0 ? 0 : max(0, bytes - entry.size)
        return entry
    }

    mutating func removeAll() {
        head = 0
        count = 0
        bytes = 0
    }

    private mutating func grow() {
        let filler = Entry(handle: 0, size: 0, enqueuedAt: 0)
        var grown = [Entry](repeating: filler, count: max(16, storage.count * 2))
        for offset in 0..<count {
            var index = head + offset
            if index >= storage.count { index -= storage.count }
            grown[offset] = storage[index]
        }
        storage = grown
        head = 0
    }
}
