import CaptureCore

/// A small deterministic generator (CaptureCore's SplitMix64), so that randomized tests reproduce their failures.
public struct SeededGenerator: RandomNumberGenerator {
    private var mixer: SplitMix64

    /// Creates a generator from a seed.
    public init(state: UInt64) {
        mixer = SplitMix64(state: state)
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { mixer.next() }
}
