/// How a total bit rate is shared among simulcast layers: what ``SimulcastRateAllocator/allocate(totalKbps:)``
/// returns (libwebrtc's `VideoBitrateAllocation` for VP8 simulcast).
public struct SimulcastAllocation: Sendable, Hashable, Codable {
    /// One layer's share.
    public struct Layer: Sendable, Hashable, Codable {
        /// The layer's bit rate, in kbit/s; 0 when the layer is off (not encoded, not sent).
        public var kbps: Int
        /// The cumulative target of each temporal layer, in kbit/s, as libvpx's `ts_target_bitrate` takes it: the
        /// base layer, the base plus layer 1, …; the last is ``kbps``. One entry per temporal layer; empty when the
        /// layer is off. Splits: one layer 100 %; two 60/40 % (cumulative 60, 100); three 40/20/40 % (cumulative 40,
        /// 60, 100), each rounded to a whole kbit/s (`SimulcastRateAllocator::DefaultTemporalLayerAllocation`).
        public var temporalTargetsKbps: [Int]

        /// Creates a layer's share.
        public init(kbps: Int, temporalTargetsKbps: [Int]) {
            self.kbps = kbps
            self.temporalTargetsKbps = temporalTargetsKbps
        }

        /// Whether the layer is sent.
        public var isActive: Bool { kbps > 0 }
    }

    /// The layers' shares, lowest resolution first, one per stream of the allocator.
    public var layers: [Layer]
    /// Whether the total was too low for every layer (libwebrtc's `is_bw_limited`): some layer is off for want of
    /// its minimum.
    public var isBandwidthLimited: Bool

    /// Creates an allocation.
    public init(layers: [Layer], isBandwidthLimited: Bool) {
        self.layers = layers
        self.isBandwidthLimited = isBandwidthLimited
    }

    /// The sum of the layers' bit rates, in kbit/s (at most the total allocated, less when the active layers are
    /// full).
    public var totalKbps: Int { layers.reduce(0) { $0 + $1.kbps } }

    /// How many layers are on (always a prefix: the lowest ``activeLayerCount`` layers).
    public var activeLayerCount: Int { layers.prefix { $0.isActive }.count }

    /// libwebrtc's cumulative temporal split of `kbps` over `temporalLayers` (1…3) layers: the cumulative fraction
    /// (0.4, 0.6, 1.0 for three; 0.6, 1.0 for two; `float`, as in libwebrtc) of `kbps`, rounded, for each layer.
    public static func cumulativeTemporalTargets(kbps: Int, temporalLayers: Int) -> [Int] {
        guard kbps > 0 else { return [] }
        let fractions: [Float] =
            switch temporalLayers {
            case ...1: [1.0]
            case 2: [0.6, 1.0]
            default: [0.4, 0.6, 1.0]
            }
        // libwebrtc: `static_cast<uint32_t>(bitrate_kbps * fraction + 0.5)` in float; later layers never fall below
        // an earlier one.
        var targets: [Int] = []
        targets.reserveCapacity(fractions.count)
        for fraction in fractions {
            let value = Int(Float(kbps) * fraction + 0.5)
            targets.append(min(kbps, max(targets.last ?? 0, value)))
        }
        return targets
    }
}
