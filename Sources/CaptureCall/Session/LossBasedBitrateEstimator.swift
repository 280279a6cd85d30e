/// The sender's own bit-rate estimate from the loss its receiver reports, by WebRTC's classic loss-based rule
/// (`SendSideBandwidthEstimation`): more than 10 % lost cuts the rate by half the loss fraction, less than 2 % lets it
/// grow by 8 % at most once a second, and anything between holds it. A receiver's REMB is a ceiling over it, never a
/// floor: Janus's REMB is the room's fixed bit rate, not an estimate of the path, so a narrow link is found only by
/// its loss.
struct LossBasedBitrateEstimator: Sendable, Hashable {
    /// The estimate in kbit/s, once the first report arrived.
    private(set) var estimateKbps: Int?
    private var lastIncreaseNs: UInt64?
    /// The lowest the estimate goes.
    let minimumKbps: Int

    init(minimumKbps: Int = 30) {
        self.minimumKbps = minimumKbps
    }

    /// Takes one report's loss fraction (0…1); `currentKbps` starts the estimate. Returns the new estimate when it
    /// changed.
    mutating func update(fractionLost: Double, currentKbps: Int, nowNs: UInt64) -> Int? {
        let current = estimateKbps ?? max(currentKbps, minimumKbps)
        var next = current
        if fractionLost > 0.10 {
            next = max(minimumKbps, Int(Double(current) * (1 - 0.5 * fractionLost)))
        } else if fractionLost < 0.02, lastIncreaseNs.map({ nowNs &- $0 >= 1_000_000_000 }) ?? true {
            next = Int(Double(current) * 1.08) + 1
            lastIncreaseNs = nowNs
        }
        let changed = next != estimateKbps
        estimateKbps = next
        return changed ? next : nil
    }
}
