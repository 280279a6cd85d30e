/// SplitMix64 (Steele, Lea and Flood): a 64-bit mixer used here only to expand a seed into generator state.
struct SplitMix64 {
    private var state: UInt64

    init(state: UInt64) {
        self.state = state
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// One independent pseudo-random stream: xoshiro256** (Blackman and Vigna), seeded through SplitMix64.
///
/// The implementation is our own and depends on nothing in the standard library's random API, whose algorithms are
/// not guaranteed to stay the same between releases: the same seed gives the same draws on every platform and
/// toolchain. Not cryptographic.
struct RandomStream {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// The stream numbered `stream` (the direction's creation order) of the generator family keyed by `seed`.
    init(seed: UInt64, stream: Int) {
        // The key is SplitMix64's (stream + 1)-th output for `seed`: distinct streams get unrelated states.
        var keyMixer = SplitMix64(state: seed &+ UInt64(truncatingIfNeeded: stream) &* 0x9E37_79B9_7F4A_7C15)
        var expander = SplitMix64(state: keyMixer.next())
        s0 = expander.next()
        s1 = expander.next()
        s2 = expander.next()
        s3 = expander.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 1 }  // The all-zero state is xoshiro's only fixed point.
    }

    mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, by: 7) &* 9
        let shifted = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= shifted
        s3 = rotateLeft(s3, by: 45)
        return result
    }

    /// A uniform value in [0, 1) with 53 random bits.
    mutating func nextUnitInterval() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability` (already clamped to 0...1). Draws nothing for 0 or 1, so a feature that
    /// is off does not consume randomness.
    mutating func chance(_ probability: Double) -> Bool {
        if probability <= 0 { return false }
        if probability >= 1 { return true }
        return nextUnitInterval() < probability
    }

    /// A uniform integer in 0...upperBound (multiply-high mapping; the bias is below 2⁻⁶⁴ × upperBound).
    mutating func uniform(through upperBound: UInt64) -> UInt64 {
        if upperBound == .max { return next() }
        return next().multipliedFullWidth(by: upperBound + 1).high
    }

    private func rotateLeft(_ value: UInt64, by count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
