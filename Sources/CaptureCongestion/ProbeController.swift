/// Decides when to probe and at what rate.
///
/// ## What it is
///
/// - **At start**, two clusters at 3× and 6× the start rate (900 kbit/s and 1.8 Mbit/s from 300 kbit/s).
/// - **Further**: while waiting for a result (at most 1 s), an estimate above 70 % of the last probed rate asks for
///   another cluster at 2× that estimate.
/// - **After a large drop** (the estimate fell under 66 % of its value within the last 5 s), once the delay-based
///   detector has recovered from the overuse, one cluster at 85 % of the rate before the drop, if the estimate is
///   still under 95 % of that, and at most once per 5 s.
/// - **When the estimate goes stale** (no overuse and no probe for one sawtooth period, the last interval between
///   overuses, 5–15 s, while the delay-based stage limits the target and loss is under 2 %), one cluster at 1.5× the
///   estimate; a step that holds 3 s without overuse is confirmed and the next may follow, one that does not backs
///   the next off (see ``probeIfStale(lastOveruse:delayLimited:now:into:)``).
/// - Never above the configured maximum nor 5 Mbit/s; a cluster that reaches the maximum ends the exponential
///   phase.
///
/// ## libwebrtc, and where this differs
///
/// Follows `probe_controller.cc` (its constants). libwebrtc sends the recovery probe only in ALR or behind the
/// rapid-recovery field trial; camera video is rarely application-limited, so here it is sent whenever the detector
/// recovers after a large drop: a step down in the path followed by its return is common on Wi-Fi and LTE. There is
/// no ALR probing (camera video, see the module's article). The stale-estimate probe is ours: libwebrtc leaves a
/// widened path to AIMD, whose recovery time depends on where in its sawtooth the path widened (its additive phase
/// lasts until the throughput leaves the link-capacity estimate's band); probing makes recovery a few seconds,
/// whatever the phase.
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct ProbeController {
    enum State: Equatable { case initial, waitingForResult, complete }

    static let maxProbingBitrate = 5_000_000.0
    static let firstScale = 3.0
    static let secondScale = 6.0
    static let furtherScale = 2.0
    static let furtherThreshold = 0.7
    static let resultTimeout: Int64 = Nanoseconds.perSecond
    static let dropThreshold = 0.66
    static let dropTimeout: Int64 = 5 * Nanoseconds.perSecond
    static let fractionAfterDrop = 0.85
    static let uncertainty = 0.05
    static let minimumTimeBetweenRecoveryProbes: Int64 = 5 * Nanoseconds.perSecond
    static let clusterDuration: Int64 = 15 * Nanoseconds.perMillisecond
    static let clusterPackets = 5
    static let staleAfterAtLeast: Int64 = 5 * Nanoseconds.perSecond
    static let staleAfterAtMost: Int64 = 15 * Nanoseconds.perSecond
    static let staleScale = 1.5
    static let confirmWindow: Int64 = 3 * Nanoseconds.perSecond
    /// A held step chains to the next only when the estimate stayed at least this × its value before the probe.
    static let chainThreshold = 1.3
    static let maximumStaleBackoff = 8

    /// What the stale-estimate probing did.
    struct Statistics: Equatable {
        /// Stale probes whose step held for the confirmation window and found room (the next followed at once).
        var staleProbesConfirmed = 0
        /// Stale probes followed by an overuse within it (a token bucket's burst, or a path that did not widen).
        var staleProbesFailed = 0
    }

    private(set) var state = State.initial
    private var maximum: Double
    private var minimumToProbeFurther: Double = .infinity
    private var lastProbeInitiated: Int64?
    private var estimate: Double = 0
    private var lastLargeDrop: Int64?
    private var rateBeforeLargeDrop: Double = 0
    private var lastRecoveryProbe: Int64?
    private var lastOveruseBegan: Int64?
    private var overusePeriod: Int64 = 0
    private var lastStaleProbe: Int64?
    private var lastStaleProbeJudged = true
    private var staleConfirmed = false
    private var staleBackoff = 1
    private var estimateAtStaleProbe: Double = 0
    private(set) var statistics = Statistics()
    private var nextID = 1

    /// A controller whose probes never exceed `maximum` bit/s (nor 5 Mbit/s).
    init(maximum: Double) { self.maximum = min(maximum, Self.maxProbingBitrate) }

    /// Updates the probing ceiling.
    mutating func setMaximum(_ value: Double) { maximum = min(value, Self.maxProbingBitrate) }

    /// The start clusters; call once.
    mutating func start(startBitrate: Double, now: Int64, into requests: inout [ProbeClusterRequest]) {
        guard state == .initial else { return }
        estimate = startBitrate
        initiate(
            rates: (Self.firstScale * startBitrate, Self.secondScale * startBitrate), probeFurther: true, now: now,
            into: &requests)
    }

    /// A new target estimate: may ask for a further cluster, and remembers large drops.
    mutating func setEstimate(_ bitrate: Double, now: Int64, into requests: inout [ProbeClusterRequest]) {
        if state == .waitingForResult, bitrate > minimumToProbeFurther {
            initiate(rates: (Self.furtherScale * bitrate, nil), probeFurther: true, now: now, into: &requests)
        }
        if bitrate < Self.dropThreshold * estimate {
            lastLargeDrop = now
            rateBeforeLargeDrop = estimate
        }
        estimate = bitrate
    }

    /// The delay-based detector went from underusing back to normal after a decrease.
    mutating func recoveredFromOveruse(now: Int64, into requests: inout [ProbeClusterRequest]) {
        guard state == .complete, let lastLargeDrop else { return }
        let suggested = Self.fractionAfterDrop * rateBeforeLargeDrop
        guard (1 - Self.uncertainty) * suggested > estimate,
            Nanoseconds.difference(now, lastLargeDrop) < Self.dropTimeout,
            lastRecoveryProbe.map({ Nanoseconds.difference(now, $0) > Self.minimumTimeBetweenRecoveryProbes }) ?? true
        else { return }
        lastRecoveryProbe = now
        initiate(rates: (suggested, nil), probeFurther: false, now: now, into: &requests)
    }

    /// An overuse episode began: remembers the interval between episodes (the sawtooth's period on a full path).
    mutating func overuseBegan(now: Int64) {
        if let lastOveruseBegan {
            overusePeriod = min(Nanoseconds.difference(now, lastOveruseBegan), Self.staleAfterAtMost)
        }
        lastOveruseBegan = now
    }

    /// How long an estimate may go untested: the last interval between overuse episodes (one sawtooth period), at
    /// least 5 s and at most 15 s, times the back-off after stale probes that failed (up to 8×).
    var staleAfter: Int64 {
        min(max(Self.staleAfterAtLeast, overusePeriod), Self.staleAfterAtMost) * Int64(staleBackoff)
    }

    /// Probes an estimate that has gone untested, one confirmed step at a time.
    ///
    /// When nothing has pushed the path to overuse, nor probed it, for ``staleAfter`` while the delay-based stage
    /// keeps the target (`delayLimited`) under the maximum: one cluster at 1.5× the estimate, without further
    /// probing. Its result is applied as any probe's, and then judged: when no overuse begins within ``confirmWindow``
    /// (3 s of sending at the new rate, which no token bucket's burst absorbs) and the estimate stayed 1.3× above its
    /// value before the probe, the step is confirmed and the next one may follow at once; when one does, the probe
    /// read a burst allowance rather than the path (a token-bucket shaper passes a 15 ms cluster untouched), AIMD's
    /// decrease undoes the step and the next stale probe waits twice as long (up to 8×). So a widened path is found in a few confirmed steps instead of the additive climb
    /// (≈ 50 kbit/s a second) that precedes AIMD's multiplicative phase, and a shaped one costs one 1.5× step.
    /// Returns whether a cluster was asked for.
    @discardableResult
    mutating func probeIfStale(
        lastOveruse: Int64?, delayLimited: Bool, now: Int64, into requests: inout [ProbeClusterRequest]
    ) -> Bool {
        if let probe = lastStaleProbe, !lastStaleProbeJudged {
            guard Nanoseconds.difference(now, probe) >= Self.confirmWindow else { return false }
            lastStaleProbeJudged = true
            if let lastOveruse, lastOveruse >= probe {
                staleConfirmed = false
                staleBackoff = min(staleBackoff * 2, Self.maximumStaleBackoff)
                statistics.staleProbesFailed += 1
            } else {
                // Held; the next step follows at once only when this one found room (the estimate rose and
                // stayed up), else the path is full and the estimate merely fresh again.
                staleConfirmed = estimate >= Self.chainThreshold * estimateAtStaleProbe
                staleBackoff = 1
                if staleConfirmed { statistics.staleProbesConfirmed += 1 }
            }
        }
        guard state == .complete, delayLimited, estimate < (1 - Self.uncertainty) * maximum else { return false }
        let tested = max(lastOveruse ?? Int64.min, lastProbeInitiated ?? Int64.min)
        let wait = staleConfirmed ? Self.confirmWindow : staleAfter
        guard tested == Int64.min || Nanoseconds.difference(now, tested) >= wait else { return false }
        staleConfirmed = false
        lastStaleProbe = now
        lastStaleProbeJudged = false
        estimateAtStaleProbe = estimate
        initiate(rates: (Self.staleScale * estimate, nil), probeFurther: false, now: now, into: &requests)
        return true
    }

    /// Times out a result that did not come.
    mutating func process(now: Int64) {
        if state == .waitingForResult, let lastProbeInitiated,
            Nanoseconds.difference(now, lastProbeInitiated) > Self.resultTimeout
        {
            state = .complete
        }
    }

    private mutating func initiate(
        rates: (Double, Double?), probeFurther: Bool, now: Int64, into requests: inout [ProbeClusterRequest]
    ) {
        var further = probeFurther
        var last = 0.0
        for candidate in [rates.0, rates.1 ?? -1] where candidate > 0 {
            var rate = candidate
            if rate >= maximum {
                rate = maximum
                further = false
            }
            guard rate.isFinite, rate > 0 else { continue }
            let bytes = Int((rate * Nanoseconds.seconds(Self.clusterDuration) / 8).rounded(.up))
            requests.append(
                ProbeClusterRequest(
                    id: nextID, bitrate: Int(bitrate: rate), minimumBytes: bytes, minimumPackets: Self.clusterPackets,
                    duration: .nanoseconds(Self.clusterDuration)))
            nextID = nextID == Int.max ? 1 : nextID + 1
            last = rate
            if !further { break }
        }
        lastProbeInitiated = now
        if further, last > 0 {
            state = .waitingForResult
            minimumToProbeFurther = Self.furtherThreshold * last
        } else {
            state = .complete
        }
    }
}
