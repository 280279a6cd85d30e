/// What the delay-based detector concluded from the one-way delay trend.
///
/// ## What it is
///
/// The three hypotheses of draft-ietf-rmcat-gcc-02 §5.4: the queue in front of the bottleneck is growing
/// (``overusing``), draining (``underusing``), or neither (``normal``).
///
/// ## Threading
///
/// A plain value.
public enum BandwidthUsage: Sendable, Hashable {
    /// The delay trend is within the adaptive threshold.
    case normal
    /// The delay has grown for long enough: the sender is above the bottleneck's rate.
    case overusing
    /// The delay is falling: a queue is draining.
    case underusing
}
