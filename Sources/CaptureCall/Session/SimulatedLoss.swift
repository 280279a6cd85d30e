/// Packets dropped on purpose, to exercise loss recovery: a share in percent and the seed of the generator that
/// picks them, so that a run can be repeated exactly (the same seed drops the same packets).
///
/// A receiver drops that share of what arrives (`capturer-probe receive --loss PCT --seed N`); a sender drops that
/// share of its first transmissions, and still answers NACKs from its history (`capturer-probe publish --loss`). It is
/// a description only; the generator that applies it is internal.
public struct SimulatedLoss: Sendable, Hashable, Codable {
    /// The share of packets dropped, in percent; values outside 0…100 (and NaN) are clamped when it is applied.
    public var percent: Double
    /// The seed of the generator (SplitMix64).
    public var seed: UInt64

    /// Describes a loss of `percent` percent of packets, picked by a generator started from `seed`.
    public init(percent: Double, seed: UInt64) {
        self.percent = percent
        self.seed = seed
    }
}
