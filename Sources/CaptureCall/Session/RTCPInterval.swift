internal import CaptureCore

/// When the next RTCP report is due: about once a second, randomised to 0.5…1.5 times the interval as RFC 3550
/// §6.3.1 asks (so that senders started together do not report in lockstep), the first one sooner.
///
/// The randomness is a SplitMix64 sequence seeded with the sender's SSRC, itself random in a real call: two senders
/// still report apart, and a test that fixes its SSRCs gets the same schedule every run (the virtual-time tests'
/// round-trip times, and so the congestion controller's figures, are deterministic).
struct RTCPInterval: Sendable {
    /// The nominal interval, in nanoseconds.
    let intervalNs: UInt64
    private var generator: SplitMix64
    /// When the next report is due, on the monotonic clock.
    private(set) var nextDueNs: UInt64

    /// Starts the schedule at `nowNs`: the first report is due after half an interval.
    init(intervalNs: UInt64 = 1_000_000_000, nowNs: UInt64, seed: UInt32) {
        self.intervalNs = max(1, intervalNs)
        generator = SplitMix64(state: UInt64(seed) | 0x5EED_0000_0000_0000)
        nextDueNs = nowNs + self.intervalNs / 2
    }

    /// Whether a report is due at `nowNs`; when it is, schedules the next one.
    mutating func isDue(nowNs: UInt64) -> Bool {
        guard nowNs >= nextDueNs else { return false }
        let factor = 0.5 + generator.nextUnit()
        nextDueNs = nowNs + UInt64(Double(intervalNs) * factor)
        return true
    }
}
