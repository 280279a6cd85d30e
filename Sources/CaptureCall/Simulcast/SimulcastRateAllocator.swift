/// Shares a total target bit rate among simulcast layers the way libwebrtc does, and remembers which layers were on
/// (libwebrtc's `SimulcastRateAllocator`, camera content, no field trials).
///
/// ```swift
/// var allocator = SimulcastRateAllocator(streams: layout.streams)
/// let allocation = allocator.allocate(totalKbps: 1_000)  // 150 + 700 kbit/s, the 1280x720 layer off
/// ```
///
/// A value with state (the hysteresis): one owner calls ``allocate(totalKbps:)``, in order. In a ``SendPipeline`` the
/// encoder thread owns it and makes a new one whenever the layout changes.
///
/// ## The rules (libwebrtc `simulcast_rate_allocator.cc`, `DistributeAllocationToSimulcastLayers`)
/// 1. The total is raised to the lowest layer's min: the lowest layer is always sent.
/// 2. Layers are filled bottom-up, each up to its target. A layer is on only if what is left is at least its min;
///    when it is not, it and every layer above it are off.
/// 3. A layer that was off at the previous allocation needs ``hysteresisFactor`` × its min (at most its target) to
///    come back on. The first allocation has no hysteresis (it may be a reconfiguration of layers already on).
/// 4. What is left goes to the top active layer, up to its max; anything beyond is not allocated.
/// 5. Each active layer's rate is split over its temporal layers (``SimulcastAllocation/Layer/temporalTargetsKbps``).
///
/// ## Where this differs from libwebrtc
/// Rates are whole kbit/s (libwebrtc allocates bit/s; its stream bounds are whole kbit/s anyway). There is no stable
/// rate (`WebRTC-StableTargetRate`), no per-layer `active` flag from the application, and no screenshare hysteresis
/// (1.35).
public struct SimulcastRateAllocator: Sendable, Hashable {
    /// The layers, lowest resolution first.
    public let streams: [SimulcastStream]
    /// How much more than its min a layer that was off needs to come back on (libwebrtc:
    /// `video_hysteresis_factor`, 1.2).
    public let hysteresisFactor: Double
    /// Which layers the previous allocation turned on; `nil` before the first.
    private var enabled: [Bool]?

    /// Creates an allocator for `streams` (lowest resolution first).
    public init(streams: [SimulcastStream], hysteresisFactor: Double = 1.2) {
        self.streams = streams
        self.hysteresisFactor = hysteresisFactor.isFinite ? max(1, hysteresisFactor) : 1.2
    }

    /// Which layers are on after the last allocation (all `false` before the first).
    public var activeLayers: [Bool] { enabled ?? Array(repeating: false, count: streams.count) }

    /// Shares `totalKbps` among the layers (see the rules above) and remembers which are on.
    public mutating func allocate(totalKbps: Int) -> SimulcastAllocation {
        var layers = streams.map { _ in SimulcastAllocation.Layer(kbps: 0, temporalTargetsKbps: []) }
        guard let lowest = streams.first else { return SimulcastAllocation(layers: [], isBandwidthLimited: false) }
        let firstAllocation = enabled == nil
        let previous = enabled ?? Array(repeating: true, count: streams.count)
        var now = Array(repeating: false, count: streams.count)
        var left = max(max(0, totalKbps), lowest.minKbps)
        var top = 0
        var limited = false
        for (index, stream) in streams.enumerated() {
            var needed = Double(stream.minKbps)
            if !firstAllocation, !previous[index] {
                needed = min(hysteresisFactor * needed, Double(stream.targetKbps))
            }
            guard Double(left) >= needed else {
                limited = true
                break
            }
            top = index
            now[index] = true
            let rate = min(left, stream.targetKbps)
            layers[index].kbps = rate
            left -= rate
        }
        if left > 0 {
            let extra = min(left, max(0, streams[top].maxKbps - layers[top].kbps))
            layers[top].kbps += extra
        }
        for index in layers.indices {
            layers[index].temporalTargetsKbps = SimulcastAllocation.cumulativeTemporalTargets(
                kbps: layers[index].kbps, temporalLayers: streams[index].temporalLayers)
        }
        enabled = now
        return SimulcastAllocation(layers: layers, isBandwidthLimited: limited)
    }
}
