/// SplitMix64 (Steele, Lea and Flood): a small, fast, seedable generator, for what must repeat from a seed (simulated
/// loss, the RTCP schedule's jitter, randomized tests) and never for keys or anything an attacker could exploit.
///
/// Our own implementation: the standard library's generators make no promise that one seed gives the same draws from
/// one release to the next. (CaptureNetworkSimulator keeps its own, to depend on nothing.)
package struct SplitMix64: RandomNumberGenerator, Sendable, Hashable, Codable {
    /// The state; the seed at first.
    package var state: UInt64

    /// A generator from `state`.
    package init(state: UInt64) {
        self.state = state
    }

    /// The next 64 bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// The next value, uniform in `[0, 1)` (53 bits).
    package mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }
}
