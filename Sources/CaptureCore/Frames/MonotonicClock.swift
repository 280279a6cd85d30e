#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`), the time base of every frame timestamp.
public enum MonotonicClock {
    /// Now, in nanoseconds since an arbitrary point (boot).
    public static func nowNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// `endNs − startNs`, or 0 when `endNs` is earlier (a driver's timestamp ahead of the clock, or a time read on
    /// another thread just after `endNs`) rather than a difference wrapped to almost 2⁶⁴.
    public static func elapsedNs(from startNs: UInt64, to endNs: UInt64) -> UInt64 { endNs &- min(endNs, startNs) }

    /// Sleeps until the monotonic clock reaches `deadlineNs` (retrying when interrupted).
    public static func sleep(untilNs deadlineNs: UInt64) {
        var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        // blocking: the primitive itself; every caller marks where it runs.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
