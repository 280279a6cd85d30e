/// Drops a fixed share of arriving packets at random, reproducibly: the same seed drops the same packets.
///
/// It applies a ``SimulatedLoss`` (the public description) for a receiver or a sender: sequence gaps, dropped frames,
/// PLI and the sender's key frame. The generator is SplitMix64, so a run can be repeated exactly.
package struct PacketLossSimulator: Sendable, Hashable, Codable {
    /// The share of packets dropped, in percent (0…100).
    package let lossPercent: Double
    /// The seed the generator started from.
    package let seed: UInt64
    private var state: UInt64

    /// Creates a simulator dropping `lossPercent` percent of packets (clamped to 0…100), starting from `seed`.
    package init(lossPercent: Double, seed: UInt64) {
        self.lossPercent = lossPercent.isFinite ? min(100, max(0, lossPercent)) : 0
        self.seed = seed
        self.state = seed
    }

    /// Creates the simulator `loss` describes.
    package init(_ loss: SimulatedLoss) {
        self.init(lossPercent: loss.percent, seed: loss.seed)
    }

    /// Whether the next packet is dropped. Advances the generator once per call, whatever the answer.
    package mutating func shouldDrop() -> Bool {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        // 53 random bits as a uniform value in [0, 100).
        let uniform = Double(z >> 11) / Double(1 << 53) * 100
        return uniform < lossPercent
    }
}
