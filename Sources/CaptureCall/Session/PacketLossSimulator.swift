internal import CaptureCore

/// Drops a fixed share of arriving packets at random, reproducibly: the same seed drops the same packets.
///
/// It applies a ``SimulatedLoss`` (the public description) for a receiver or a sender: sequence gaps, dropped frames,
/// PLI and the sender's key frame. The generator is SplitMix64, so a run can be repeated exactly.
package struct PacketLossSimulator: Sendable, Hashable, Codable {
    /// The share of packets dropped, in percent (0…100).
    package let lossPercent: Double
    /// The seed the generator started from.
    package let seed: UInt64
    private var generator: SplitMix64

    /// Creates a simulator dropping `lossPercent` percent of packets (clamped to 0…100), starting from `seed`.
    package init(lossPercent: Double, seed: UInt64) {
        self.lossPercent = lossPercent.isFinite ? min(100, max(0, lossPercent)) : 0
        self.seed = seed
        generator = SplitMix64(state: seed)
    }

    /// Creates the simulator `loss` describes.
    package init(_ loss: SimulatedLoss) {
        self.init(lossPercent: loss.percent, seed: loss.seed)
    }

    /// Whether the next packet is dropped. Advances the generator once per call, whatever the answer.
    package mutating func shouldDrop() -> Bool {
        // 53 random bits as a uniform value in [0, 100).
        generator.nextUnit() * 100 < lossPercent
    }
}
