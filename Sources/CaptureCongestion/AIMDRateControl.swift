#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The delay-based rate: additive-increase, multiplicative-decrease driven by the overuse detector.
///
/// ## What it is
///
/// A state machine (draft-ietf-rmcat-gcc-02 §5.5): *increase* while the detector says normal, *decrease* once on
/// overuse, then *hold* (also while underusing, so the queue drains) until normal again.
///
/// - **Decrease** to 0.85 × the acknowledged throughput (less 5 kbit/s, so the new rate is really under the link),
///   or to 0.85 × the link-capacity estimate if that is lower than the throughput-based value would leave it; never
///   up. The throughput is recorded in the ``LinkCapacityEstimator``.
/// - **Increase** multiplicatively, ×1.08 per second (pro rata, at least 1 kbit/s), while there is no capacity
///   estimate; additively near it, by about one packet per response time (`avgPacketBits / (RTT + 100 ms)` per
///   second, at least 4 kbit/s per second; packets of a 30 fps frame split at 1200 bytes).
/// - Never above `1.5 × acknowledged + 10 kbit/s` (it does not lower the rate when already above that limit).
/// - **Queue drain** (not in libwebrtc, see ``QueueDelayEstimator``): the decrease also subtracts
///   `throughput × queueDelay / 1 s`, never going under 0.4 × the value above.
/// - A further decrease while still overusing waits `clamp(RTT, 10, 200) ms`, or happens at once if the throughput
///   fell under half the estimate.
///
/// ## libwebrtc
///
/// Follows `remote_bitrate_estimator/aimd_rate_control.cc` (its defaults, without field trials). Differences: no
/// ALR handling (this module assumes camera video, which is never application-limited for long), no network
/// state estimate input, and the queue drain above.
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct AIMDRateControl {
    enum State: Equatable { case hold, increase, decrease }

    static let beta = 0.85
    static let drainTimeSeconds = 1.0
    static let drainFloor = 0.4
    static let minIncreaseRatePerSecond = 4000.0
    static let initialRTT: Int64 = 200 * Nanoseconds.perMillisecond

    private(set) var estimate: Double
    private(set) var state = State.hold
    private(set) var linkCapacity = LinkCapacityEstimator()
    private var lastChange: Int64?
    private var latestThroughput: Double?
    var minimum: Double
    var rtt: Int64 = initialRTT

    /// A controller starting at `start` bit/s, never going under `minimum`.
    init(start: Double, minimum: Double) {
        self.minimum = minimum
        self.estimate = max(start, minimum)
    }

    /// Sets the estimate directly (a probe result, the start rate).
    mutating func setEstimate(_ bitrate: Double, now: Int64) {
        guard bitrate.isFinite else { return }
        estimate = max(bitrate, minimum)
        lastChange = now
    }

    /// Whether an overuse now may lower the estimate again (see the type's notes).
    func timeToReduceFurther(now: Int64, throughput: Double) -> Bool {
        let interval = min(max(rtt, 10 * Nanoseconds.perMillisecond), 200 * Nanoseconds.perMillisecond)
        if let lastChange, Nanoseconds.difference(now, lastChange) >= interval { return true }
        if lastChange == nil { return true }
        return throughput < 0.5 * estimate
    }

    /// Applies the detector's state with the acknowledged throughput (bit/s, nil if not yet measured).
    ///
    /// `queueDelay` (ns) is the standing queue measured by ``QueueDelayEstimator``: a decrease also subtracts the rate
    /// that drains it within a second, down to 0.4 × the plain decrease.
    mutating func update(usage: BandwidthUsage, throughput: Double?, now: Int64, queueDelay: Int64 = 0) {
        if let throughput, throughput.isFinite, throughput >= 0 { latestThroughput = throughput }
        let measured = latestThroughput ?? estimate
        switch usage {
        case .overusing: if state != .decrease { state = .decrease }
        case .normal:
            if state == .hold {
                lastChange = now
                state = .increase
            }
        case .underusing: state = .hold
        }

        var next = estimate
        switch state {
        case .hold: break
        case .increase:
            if measured > linkCapacity.upperBound { linkCapacity.reset() }
            let limit = 1.5 * measured + 10_000
            if estimate < limit {
                let elapsed = lastChange.map { Nanoseconds.seconds(max(0, Nanoseconds.difference(now, $0))) }
                let increased: Double
                if linkCapacity.hasEstimate {
                    increased = estimate + nearMaxIncreasePerSecond * (elapsed ?? 0)
                } else {
                    let alpha = elapsed.map { pow(1.08, min($0, 1)) } ?? 1.08
                    increased = estimate + max(estimate * (alpha - 1), 1000)
                }
                next = min(increased, limit)
            }
            lastChange = now
        case .decrease:
            var decreased = measured * Self.beta
            if decreased > 5000 { decreased -= 5000 }
            if decreased > estimate, let capacity = linkCapacity.estimate { decreased = Self.beta * capacity }
            let queueSeconds = min(max(Nanoseconds.seconds(queueDelay), 0), 1)
            decreased = max(decreased * Self.drainFloor, decreased - measured * queueSeconds / Self.drainTimeSeconds)
            if decreased < estimate { next = decreased }
            if measured < linkCapacity.lowerBound { linkCapacity.reset() }
            linkCapacity.onOveruseDetected(throughput: measured)
            state = .hold
            lastChange = now
        }
        estimate = max(next.finiteOr(estimate), minimum)
    }

    /// The additive increase near the capacity, bit/s per second.
    var nearMaxIncreasePerSecond: Double {
        let frameBits = estimate / 30
        let packetsPerFrame = max(1, (frameBits / (1200 * 8)).rounded(.up))
        let averagePacketBits = frameBits / packetsPerFrame
        let responseSeconds = Nanoseconds.seconds(rtt) + 0.1
        return max(Self.minIncreaseRatePerSecond, (averagePacketBits / responseSeconds).finiteOr(0))
    }
}
