/// The send-side bandwidth estimator: transport feedback in, a target bitrate, a pacing rate and probe requests out.
///
/// ## What it is
///
/// GoogCC's send side (draft-ietf-rmcat-gcc-02, as libwebrtc implements it today) as one sans-IO value:
///
/// 1. Each ``TransportPacketsFeedback`` is sorted by arrival into a reused buffer; received packets feed the
///    acknowledged-bitrate estimator, the probe-result estimator (packets of a probe cluster), and the delay-based
///    chain (inter-arrival groups → trendline detector → AIMD rate control); lost and received counts feed the
///    loss-based limit.
/// 2. The delay-based estimate is set by a probe result when there is one and no overuse, else moved by AIMD.
/// 3. The target is `min(delay-based, loss-based, receiver ceiling, maximum)`, at least the minimum, with the
///    ``TargetLimitation`` that decided it; the pacing rate is 1.1 × the target once feedback arrived (2.5 × before,
///    so the start probes and the first frames are not held back).
/// 4. ``ProbeClusterRequest``s (start, further, recovery after a large drop, a stale estimate) are queued for the
///    owner to send.
///
/// ## Sans-IO
///
/// Time is an input (`now`), on the same `ContinuousClock` as the rest of the package; there are no clocks, threads,
/// locks or callbacks. The owner calls ``process(now:)`` at ``nextDeadline``, passes feedback, RTTs and REMB when
/// they arrive, and reads ``targetBitrate``, ``pacingBitrate`` and ``takeProbeClusterRequests()`` after each call.
/// Steady state allocates nothing per packet: the windows are fixed rings and the sort buffer is reused.
///
/// ## Hostile feedback
///
/// Empty reports, negative sizes, arrival times going back or jumping, and packets sent "after" the feedback never
/// trap and never produce NaN, infinity or a negative rate; see ``statistics``.
///
/// ## Where this differs from libwebrtc
///
/// See each stage's notes: the loss-based limit (a v1 with an inherent-loss allowance, a limit only after a back-off),
/// the recovery probe (sent without ALR), the stale-estimate probe (ours), no ALR probing, no congestion window (the
/// connection feeds a ``CongestionWindowPushback`` and a ``PacingController`` itself). The module's article lists the
/// scenario figures measured against libwebrtc's own.
///
/// ## Threading
///
/// A plain value, not thread-safe: one owner (the connection) mutates it.
public struct SendSideBandwidthEstimator: Sendable {
    /// The rates the estimator works within.
    public struct Configuration: Sendable, Hashable {
        /// The lowest target, bit/s (libwebrtc: 30 kbit/s). Default 30 000.
        public var minimumBitrate: Int
        /// The target before any feedback, bit/s (libwebrtc: 300 kbit/s). Default 300 000.
        public var startBitrate: Int
        /// The highest target, and the probing ceiling (probes never exceed 5 Mbit/s), bit/s. Default 2 500 000.
        public var maximumBitrate: Int
        /// Whether a delay-based decrease also drains the standing queue the feedback shows (see
        /// `AIMDRateControl`): for a sender with no congestion window. A sender whose pacer and window push back
        /// (``CongestionWindowPushback``) turns it off, as libwebrtc has it. Default `true`.
        public var drainsStandingQueue = true
        /// Whether an estimate that has gone untested (no overuse nor probe for a sawtooth period) is probed, one
        /// confirmed 1.5× step at a time (see the module's article). Off by default: a token-bucket shaper's burst
        /// passes a short cluster untouched, so on such a path a step is found wrong only after it was sent.
        public var probesStaleEstimate = false

        /// A configuration; out-of-range values are clamped by ``normalized``.
        public init(minimumBitrate: Int = 30_000, startBitrate: Int = 300_000, maximumBitrate: Int = 2_500_000) {
            self.minimumBitrate = minimumBitrate
            self.startBitrate = startBitrate
            self.maximumBitrate = maximumBitrate
        }

        /// The configuration with the minimum at least 1 kbit/s, the maximum at least the minimum, and the start
        /// between them.
        public var normalized: Configuration {
            let minimum = max(1000, minimumBitrate)
            let maximum = max(minimum, maximumBitrate)
            var normalized = Configuration(
                minimumBitrate: minimum, startBitrate: min(max(startBitrate, minimum), maximum),
                maximumBitrate: maximum)
            normalized.drainsStandingQueue = drainsStandingQueue
            normalized.probesStaleEstimate = probesStaleEstimate
            return normalized
        }
    }

    /// Counters of what the estimator ignored or reset, for statistics and tests.
    public struct Statistics: Sendable, Hashable {
        /// Feedback reports received.
        public var reports = 0
        /// Reports with no results, ignored.
        public var emptyReports = 0
        /// Results received (arrival known).
        public var packetsReceived = 0
        /// Results reported lost.
        public var packetsLost = 0
        /// Results with a negative size (counted as zero bytes).
        public var malformedResults = 0
        /// Times the delay-based stage reset (feedback gap over 2 s, remote clock jump, sustained reordering).
        public var delayBasedResets = 0
        /// Overuse episodes detected.
        public var overuses = 0
        /// Probe results applied to the delay-based estimate.
        public var probeResults = 0
        /// Probes sent because the estimate had gone untested (no overuse nor probe for 5–15 s; the module's article).
        public var staleEstimateProbes = 0
        /// Stale-estimate probes whose step held 3 s without overuse.
        public var staleEstimateProbesConfirmed = 0
        /// Stale-estimate probes followed by an overuse within 3 s (the next waits twice as long).
        public var staleEstimateProbesFailed = 0
    }

    private struct Received {
        var send: Int64
        var arrival: Int64
        var size: Int
        var probe: Int?
    }

    static let streamTimeout: Int64 = 2 * Nanoseconds.perSecond
    /// The loss fraction (libwebrtc's "low loss", 2 %) at and above which the estimate is not probed when stale.
    static let staleProbeLossLimit = 0.02
    static let processInterval: Int64 = 25 * Nanoseconds.perMillisecond
    static let initialReduceInterval: Int64 = 200 * Nanoseconds.perMillisecond

    /// The configuration in force (normalized).
    public private(set) var configuration: Configuration
    private let epoch: ContinuousClock.Instant

    private var interArrival = InterArrivalGrouping()
    private var trendline = TrendlineEstimator()
    private var aimd: AIMDRateControl
    private var acknowledged = AcknowledgedBitrateEstimator()
    private var probeResults = ProbeBitrateEstimator()
    private var probing: ProbeController
    private var loss = LossBasedEstimator()
    private var queue = QueueDelayEstimator()

    private var sorted: [Received] = []
    private var pendingProbes: [ProbeClusterRequest] = []
    private var receiverCeiling: Double?
    private var rtt: Int64 = AIMDRateControl.initialRTT
    private var lastFeedback: Int64?
    private var lastOveruse: Int64?
    private var delaySource = TargetLimitation.start
    private var started = false
    private var lastProcess: Int64 = 0
    private var previousUsage = BandwidthUsage.normal
    private var target: Double

    /// Counters (see ``Statistics``).
    public private(set) var statistics = Statistics()
    /// The target bitrate for the encoder(s), bit/s.
    public var targetBitrate: Int { Int(bitrate: target) }
    /// What decided ``targetBitrate``.
    public private(set) var limitation = TargetLimitation.start
    /// The rate the pacer should send at, bit/s: 1.1 × the target once feedback arrived, 2.5 × before.
    public var pacingBitrate: Int { Int(bitrate: target * (lastFeedback == nil ? 2.5 : 1.1)) }
    /// The delay-based (AIMD) estimate, bit/s.
    public var delayBasedBitrate: Int { Int(bitrate: aimd.estimate) }
    /// The loss-based limit, bit/s, or nil when loss limits nothing.
    public var lossBasedBitrate: Int? { loss.limit.map { Int(bitrate: $0) } }
    /// The acknowledged throughput, bit/s, or nil before enough feedback.
    public var acknowledgedBitrate: Int? { acknowledged.bitrate.map { Int(bitrate: $0) } }
    /// The last loss fraction measured from feedback (0...1).
    public var lossFraction: Double { loss.lastLossFraction }
    /// The standing queue at the bottleneck estimated from the latest feedback (one-way delay over its 10 s minimum).
    public var queueDelay: Duration { .nanoseconds(queue.queueDelay) }
    /// The delay-based detector's state.
    public var bandwidthUsage: BandwidthUsage { trendline.state }
    /// When ``process(now:)`` should next be called.
    public var nextDeadline: ContinuousClock.Instant {
        epoch + .nanoseconds(Nanoseconds.sum(lastProcess, Self.processInterval))
    }

    /// An estimator starting at `configuration.startBitrate`; `start` is the instant its clock counts from.
    public init(configuration: Configuration = Configuration(), at start: ContinuousClock.Instant) {
        let configuration = configuration.normalized
        self.configuration = configuration
        self.epoch = start
        self.aimd = AIMDRateControl(
            start: Double(configuration.startBitrate), minimum: Double(configuration.minimumBitrate))
        self.probing = ProbeController(maximum: Double(configuration.maximumBitrate))
        self.target = Double(configuration.startBitrate)
        sorted.reserveCapacity(256)
        pendingProbes.reserveCapacity(4)
    }

    /// Changes the minimum, start (ignored once started) and maximum rates.
    public mutating func setConfiguration(_ configuration: Configuration, now: ContinuousClock.Instant) {
        self.configuration = configuration.normalized
        aimd.minimum = Double(self.configuration.minimumBitrate)
        probing.setMaximum(Double(self.configuration.maximumBitrate))
        updateTarget(now: nanoseconds(now))
    }

    /// The periodic step: sends the start probes on the first call, times out probing.
    public mutating func process(now: ContinuousClock.Instant) {
        let nowNs = nanoseconds(now)
        lastProcess = max(lastProcess, nowNs)
        if !started {
            started = true
            probing.start(startBitrate: target, now: nowNs, into: &pendingProbes)
            registerProbes()
        }
        probing.process(now: nowNs)
    }

    /// A round-trip time measured by RTCP (or the owner's own means).
    public mutating func onRoundTripTime(_ roundTripTime: Duration, now: ContinuousClock.Instant) {
        let value = Nanoseconds.of(roundTripTime)
        guard value >= 0 else { return }
        rtt = min(value, 10 * Nanoseconds.perSecond)
        aimd.rtt = rtt
    }

    /// The receiver's ceiling (REMB, TMMBR) in bit/s, or nil to lift it.
    public mutating func onReceiverEstimatedMaximum(_ bitrate: Int?, now: ContinuousClock.Instant) {
        receiverCeiling = bitrate.map { Double(max(0, $0)) }
        updateTarget(now: nanoseconds(now))
    }

    /// The probe clusters to send, oldest first; the list is emptied.
    public mutating func takeProbeClusterRequests() -> [ProbeClusterRequest] {
        guard !pendingProbes.isEmpty else { return [] }
        defer { pendingProbes.removeAll(keepingCapacity: true) }
        return pendingProbes
    }

    /// One transport feedback report.
    public mutating func onFeedback(_ report: TransportPacketsFeedback, now: ContinuousClock.Instant) {
        let nowNs = nanoseconds(now)
        statistics.reports += 1
        guard !report.results.isEmpty else {
            statistics.emptyReports += 1
            return
        }
        if !started { process(now: now) }
        let system = nanoseconds(report.receivedAt)
        if let lastFeedback, Nanoseconds.difference(system, lastFeedback) > Self.streamTimeout {
            interArrival.reset()
            trendline.reset()
        }
        lastFeedback = system

        // Received packets in arrival order (insertion sort: feedback is nearly sorted already).
        sorted.removeAll(keepingCapacity: true)
        var lostCount = 0
        for result in report.results {
            if result.size < 0 { statistics.malformedResults += 1 }
            guard let arrival = result.arrival else {
                lostCount += 1
                continue
            }
            sorted.append(
                Received(
                    send: nanoseconds(result.sendTime), arrival: Nanoseconds.of(arrival), size: max(0, result.size),
                    probe: result.probeClusterID))
        }
        statistics.packetsLost += lostCount
        statistics.packetsReceived += sorted.count
        sortByArrival()

        let resetsBefore = interArrival.resets
        for packet in sorted {
            queue.add(send: packet.send, arrival: packet.arrival, now: system)
            acknowledged.update(arrival: packet.arrival, size: packet.size)
            if let probe = packet.probe {
                _ = probeResults.add(clusterID: probe, send: packet.send, arrival: packet.arrival, size: packet.size)
            }
            if let deltas = interArrival.add(
                send: packet.send, arrival: packet.arrival, system: system, size: packet.size)
            {
                trendline.update(
                    arrivalDeltaMs: Nanoseconds.milliseconds(deltas.arrival),
                    sendDeltaMs: Nanoseconds.milliseconds(deltas.send),
                    arrivalMs: Nanoseconds.milliseconds(packet.arrival))
            }
        }
        if interArrival.resets != resetsBefore { queue.reset() }
        statistics.delayBasedResets += interArrival.resets - resetsBefore
        updateDelayBased(now: nowNs)

        // Loss is congestion, not inherent, after an overuse and while a standing queue is measured: a sender that
        // fills the path (padding up to its estimate) keeps a drop-tail queue full, whose delay no longer grows, so
        // the trendline reads normal while the queue's overflow is 20-30 % loss (seen in the Janus lab).
        let overused = lastOveruse.map { Nanoseconds.difference(nowNs, $0) < Nanoseconds.perSecond } ?? false
        let congested = overused || queue.queueDelay >= Self.standingQueueLoss
        if loss.addPackets(lost: lostCount, total: lostCount + sorted.count, congested: congested) {
            loss.update(rate: target, upper: upperLimit, acknowledged: acknowledged.bitrate, rtt: rtt, now: nowNs)
        }
        updateTarget(now: nowNs)
    }

    /// The queueing delay from which loss counts as the queue's overflow (congestion), not inherent loss: above what
    /// jitter gives (RTT ± 10 ms here), under a 300 ms drop-tail buffer's full.
    static let standingQueueLoss: Int64 = 50 * Nanoseconds.perMillisecond

    private mutating func updateDelayBased(now: Int64) {
        let usage = trendline.state
        let acked = acknowledged.bitrate
        let probe = probeResults.takeEstimate()
        if usage == .overusing {
            if previousUsage != .overusing {
                statistics.overuses += 1
                probing.overuseBegan(now: now)
            }
            lastOveruse = now
            if let acked {
                if aimd.timeToReduceFurther(now: now, throughput: acked) {
                    aimd.update(
                        usage: .overusing, throughput: acked, now: now,
                        queueDelay: configuration.drainsStandingQueue ? queue.queueDelay : 0)
                    delaySource = .delayBased
                }
            } else if aimd.timeToReduceFurther(now: now, throughput: .infinity) {
                aimd.setEstimate(aimd.estimate / 2, now: now)
                delaySource = .delayBased
            }
        } else {
            if let probe {
                statistics.probeResults += 1
                aimd.setEstimate(probe, now: now)
                delaySource = .probe
            } else {
                aimd.update(usage: usage, throughput: acked, now: now)
                if delaySource == .start || aimd.state != .hold { delaySource = .delayBased }
            }
            if previousUsage == .underusing && usage == .normal {
                probing.recoveredFromOveruse(now: now, into: &pendingProbes)
                registerProbes()
            }
            // Not on a lossy path: a lost packet or two make a small cluster's result read low, and the result is
            // applied as libwebrtc applies every probe result, up or down.
            let delayLimited =
                configuration.probesStaleEstimate && (limitation == .delayBased || limitation == .probe)
                && lossFraction < Self.staleProbeLossLimit
            if probing.probeIfStale(
                lastOveruse: lastOveruse, delayLimited: delayLimited, now: now, into: &pendingProbes)
            {
                statistics.staleEstimateProbes += 1
                registerProbes()
            }
            statistics.staleEstimateProbesConfirmed = probing.statistics.staleProbesConfirmed
            statistics.staleEstimateProbesFailed = probing.statistics.staleProbesFailed
        }
        previousUsage = usage
    }

    private var upperLimit: Double {
        var upper = min(aimd.estimate, Double(configuration.maximumBitrate))
        if let receiverCeiling { upper = min(upper, receiverCeiling) }
        return upper
    }

    private mutating func updateTarget(now: Int64) {
        var value = aimd.estimate
        var reason = lastFeedback == nil ? TargetLimitation.start : delaySource
        if let receiverCeiling, receiverCeiling < value {
            value = receiverCeiling
            reason = .receiverCeiling
        }
        let maximum = Double(configuration.maximumBitrate)
        if maximum < value {
            value = maximum
            reason = .configuredMaximum
        }
        if let limit = loss.limit, limit < value {
            value = limit
            reason = .lossBased
        }
        let minimum = Double(configuration.minimumBitrate)
        if !(value >= minimum) {
            value = minimum
            reason = .configuredMinimum
        }
        target = value
        limitation = reason
        if started {
            probing.setEstimate(value, now: now, into: &pendingProbes)
            registerProbes()
        }
    }

    private mutating func registerProbes() {
        for request in pendingProbes where !probeResults.isExpecting(request.id) {
            probeResults.expect(
                id: request.id, minimumBytes: request.minimumBytes, minimumPackets: request.minimumPackets)
        }
    }

    private mutating func sortByArrival() {
        var shifts = 0
        var index = 1
        while index < sorted.count {
            let element = sorted[index]
            var position = index
            while position > 0, sorted[position - 1].arrival > element.arrival {
                sorted[position] = sorted[position - 1]
                position -= 1
                shifts += 1
            }
            sorted[position] = element
            index += 1
            if shifts > 16 * sorted.count {
                sorted.sort { $0.arrival < $1.arrival }
                return
            }
        }
    }

    private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        Nanoseconds.of(epoch.duration(to: instant))
    }
}
