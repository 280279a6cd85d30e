/// Nanosecond arithmetic shared by the estimator's stages: every stage works on `Int64` nanoseconds, converted once
/// at the facade, so that no stage can trap on an absurd instant from a peer.
enum Nanoseconds {
    static let perMillisecond: Int64 = 1_000_000
    static let perSecond: Int64 = 1_000_000_000

    /// A duration in whole nanoseconds, saturated to `Int64`.
    static func of(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowAgain { return seconds < 0 ? .min : .max }
        return total
    }

    /// `a - b`, saturated.
    static func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        if overflow { return b < 0 ? .max : .min }
        return value
    }

    /// `a + b`, saturated.
    static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        if overflow { return b < 0 ? .min : .max }
        return value
    }

    /// Nanoseconds as (fractional) milliseconds.
    static func milliseconds(_ value: Int64) -> Double { Double(value) / 1e6 }

    /// Nanoseconds as (fractional) seconds.
    static func seconds(_ value: Int64) -> Double { Double(value) / 1e9 }
}

extension Double {
    /// The value if finite, else `fallback`: no NaN or infinity leaves a stage.
    func finiteOr(_ fallback: Double) -> Double { isFinite ? self : fallback }
}

extension Int {
    /// A rate in bit/s as an `Int`: NaN and negatives to 0, anything over 10¹⁵ bit/s to 10¹⁵.
    init(bitrate: Double) {
        guard bitrate.isFinite, bitrate > 0 else {
            self = 0
            return
        }
        self = Int(Swift.min(bitrate, 1e15))
    }
}
