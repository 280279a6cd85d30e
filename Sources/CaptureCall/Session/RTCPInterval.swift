/// When the next RTCP report is due: about once a second, randomised to 0.5…1.5 times the interval as RFC 3550
/// §6.3.1 asks (so that senders started together do not report in lockstep), the first one sooner.
struct RTCPInterval: Sendable {
    /// The nominal interval, in nanoseconds.
    let intervalNs: UInt64
    private var generator = SystemRandomNumberGenerator()
    /// When the next report is due, on the monotonic clock.
    private(set) var nextDueNs: UInt64

    /// Starts the schedule at `nowNs`: the first report is due after half an interval.
    init(intervalNs: UInt64 = 1_000_000_000, nowNs: UInt64) {
        self.intervalNs = max(1, intervalNs)
        nextDueNs = nowNs + self.intervalNs / 2
    }

    /// Whether a report is due at `nowNs`; when it is, schedules the next one.
    mutating func isDue(nowNs: UInt64) -> Bool {
        guard nowNs >= nextDueNs else { return false }
        let factor = Double.random(in: 0.5...1.5, using: &generator)
        nextDueNs = nowNs + UInt64(Double(intervalNs) * factor)
        return true
    }
}
