/// Which input decided the target bitrate.
///
/// ## What it is
///
/// The target is the minimum of the delay-based estimate, the loss-based limit, the receiver's ceiling (REMB or
/// TMMBR) and the configured maximum, and never under the configured minimum; this names the term that won, for
/// statistics (libwebrtc's `qualityLimitationReason` "bandwidth" covers all but the configured maximum).
///
/// ## Threading
///
/// A plain value.
public enum TargetLimitation: Sendable, Hashable {
    /// No feedback yet: the target is the start rate.
    case start
    /// The delay-based (AIMD) estimate.
    case delayBased
    /// The delay-based estimate, last set by a probe result.
    case probe
    /// The loss-based limit after a back-off on loss.
    case lossBased
    /// The receiver's ceiling (REMB, TMMBR).
    case receiverCeiling
    /// The configured maximum.
    case configuredMaximum
    /// The configured minimum (every estimate was lower).
    case configuredMinimum
}
