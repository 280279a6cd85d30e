/// A value out of range in a ``LinkConfiguration``, thrown by ``LinkConfiguration/validate()``.
///
/// `field` names the property, with its path for nested values (`"burstLoss.badToGood"`, `"schedule[2].rate"`).
public enum LinkConfigurationError: Error, Hashable, Sendable {
    /// A delay, jitter or offset below zero.
    case negativeDuration(field: String, value: Duration)
    /// A probability outside `0...1`, or NaN.
    case probabilityOutOfRange(field: String, value: Double)
    /// A rate below 1 bit per second.
    case nonPositiveRate(field: String, value: Int)
    /// A queue capacity or per-packet overhead below zero.
    case negativeByteCount(field: String, value: Int)
}
