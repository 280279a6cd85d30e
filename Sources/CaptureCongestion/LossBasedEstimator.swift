/// The loss-based limit: backs off on heavy loss, then climbs back by 8 % a second while loss is low.
///
/// ## What it is
///
/// Feedback's lost and received packets are accumulated until at least 20 packets were counted; each such window
/// gives a loss fraction (in 1/256ths, as RTCP's "fraction lost"). Rules, libwebrtc's v1
/// (`send_side_bandwidth_estimation.cc`):
///
/// - loss under 2 %: the limit may rise to 1.08 × the lowest limit of the last second + 1 kbit/s;
/// - 2–10 %: hold;
/// - over 10 %: the limit becomes `rate × (1 − loss/2)`, at most once per 300 ms + RTT and once per window.
///
/// ## Where this chooses differently, and why
///
/// - **Only a limit after a back-off.** In libwebrtc v1 the loss-based value *is* the target and every increase of
///   the delay-based estimate passes through its 8 %-a-second ramp (outside a 2 s start phase). Here the loss-based
///   limit exists only after a loss back-off and disappears once it climbs back to the other limits, so a probe
///   result mid-call takes effect at once, as with libwebrtc's v2 (on by default in Chrome).
/// - **Climbing back at the pace of the path.** While loss stays low, the limit may rise at once to 1.5 × the
///   acknowledged throughput (v2's ramp-up bound), not only by v1's 8 % a second: after a step down whose queue
///   overflow set the limit far under the new capacity, v1 takes 15 s or more to give the rate back.
/// - **Loss that does not react to the rate is not congestion.** v1 collapses to the minimum under 10 % random loss
///   (no window is ever under 2 %), which v2 avoids with its "inherent loss" model. This keeps a simple version of
///   that idea: an *inherent loss* estimate, a slow average (weight 1/16 per window, at most 20 %) of the loss
///   measured while the delay-based detector sees no overuse (a drop-tail queue that overflows builds delay first,
///   so its loss is counted as congestion). The rules above are applied to `loss − inherent`.
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct LossBasedEstimator {
    static let minimumPacketsPerWindow = 20
    static let lowLoss = 0.02
    static let highLoss = 0.10
    static let increaseInterval: Int64 = Nanoseconds.perSecond
    static let decreaseInterval: Int64 = 300 * Nanoseconds.perMillisecond
    static let inherentWeight = 1.0 / 16
    static let inherentMaximum = 0.2
    static let rampUpFactor = 1.5

    private var lost = 0
    private var expected = 0
    /// The limit in bit/s, or nil when loss limits nothing.
    private(set) var limit: Double?
    /// The last window's loss fraction (0...1).
    private(set) var lastLossFraction = 0.0
    /// The inherent (rate-independent) loss estimate (0...0.2).
    private(set) var inherentLoss = 0.0
    private var lastDecrease: Int64?
    private var decreasedThisWindow = false
    /// (instant, limit) pairs of the last second, increasing limits: the front is the minimum.
    private var history: [(time: Int64, rate: Double)] = []
    private var historyHead = 0

    init() { history.reserveCapacity(64) }

    /// Counts one feedback's packets; returns whether a window completed (then call ``update``).
    mutating func addPackets(lost: Int, total: Int, congested: Bool) -> Bool {
        guard total > 0, lost >= 0, lost <= total else { return false }
        self.lost += lost
        expected += total
        guard expected >= Self.minimumPacketsPerWindow else { return false }
        lastLossFraction = Double(min(255, (self.lost << 8) / expected)) / 256
        if !congested {
            let next = inherentLoss + Self.inherentWeight * (lastLossFraction - inherentLoss)
            inherentLoss = min(max(next, 0), Self.inherentMaximum)
        }
        self.lost = 0
        expected = 0
        decreasedThisWindow = false
        return true
    }

    /// Applies the rules at `now` for a sender at `rate` bit/s (the current target) under the other limits `upper`.
    mutating func update(rate: Double, upper: Double, acknowledged: Double?, rtt: Int64, now: Int64) {
        let loss = max(0, lastLossFraction - inherentLoss)
        if loss <= Self.lowLoss {
            if let limit {
                let base = minimumOfLastSecond(now: now) ?? limit
                // v2's ramp-up bound: with the loss gone, what the path carries (acknowledged) × 1.5 is allowed at
                // once; otherwise v1's 8 % a second.
                let raised = max(base * 1.08 + 1000, (acknowledged ?? 0) * Self.rampUpFactor)
                self.limit = raised >= upper ? nil : max(limit, raised)
            }
        } else if loss > Self.highLoss, !decreasedThisWindow {
            let wait = Nanoseconds.sum(Self.decreaseInterval, max(0, rtt))
            if lastDecrease.map({ Nanoseconds.difference(now, $0) >= wait }) ?? true {
                lastDecrease = now
                decreasedThisWindow = true
                let current = min(limit ?? rate, rate)
                limit = max(0, current * (1 - 0.5 * loss))
            }
        }
        if let limit { record(limit, now: now) } else { history.removeAll(keepingCapacity: true) }
    }

    private mutating func record(_ rate: Double, now: Int64) {
        // Drop entries older than a second, and later ones not lower than the new value.
        while historyHead < history.count,
            Nanoseconds.difference(now, history[historyHead].time) + Nanoseconds.perMillisecond
                > Self.increaseInterval
        {
            historyHead += 1
        }
        while history.count > historyHead, let last = history.last, last.rate >= rate { history.removeLast() }
        if historyHead > 32 {
            history.removeFirst(historyHead)
            historyHead = 0
        }
        history.append((now, rate))
    }

    private func minimumOfLastSecond(now: Int64) -> Double? {
        var index = historyHead
        while index < history.count,
            Nanoseconds.difference(now, history[index].time) + Nanoseconds.perMillisecond > Self.increaseInterval
        {
            index += 1
        }
        return index < history.count ? history[index].rate : nil
    }
}
