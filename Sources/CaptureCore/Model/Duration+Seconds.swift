extension Duration {
    /// The span in seconds, as the W3C webrtc-stats and JSON outputs give times.
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The span in milliseconds.
    package var inMilliseconds: Double { inSeconds * 1_000 }
}

extension Duration {
    /// The span in whole nanoseconds, for the monotonic-nanosecond clocks inside the sessions: negative spans are 0,
    /// spans past `UInt64.max` nanoseconds saturate.
    package var clampedNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflowAgain ? .max : total
    }
}
