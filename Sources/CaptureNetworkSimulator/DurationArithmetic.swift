extension Duration {
    /// The span in whole nanoseconds (truncated toward zero), saturated to the range of `Int64`.
    var saturatedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowAgain { return seconds < 0 ? .min : .max }
        return total
    }

    /// The time `bytes` take to cross a link of `bitsPerSecond` (> 0), exact to the attosecond (truncated).
    static func serialization(bytes: Int, bitsPerSecond: Int) -> Duration {
        let (bits, overflow) = bytes.multipliedReportingOverflow(by: 8)
        return .seconds(overflow ? Int.max : bits) / bitsPerSecond
    }
}
