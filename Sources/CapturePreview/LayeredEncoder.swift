public import CaptureCall

/// What ``ViewerFanout`` needs of the shared simulcast encoder: the controls it passes the viewers' requests on to,
/// the range of its target, and its layers' figures for the viewers' selectors. `SendPipeline` is one; tests use a
/// stand-in.
///
/// Every member may be called from any thread (the encoder thread, the viewers' driver threads), and must not call
/// back into the fan-out.
protocol LayeredEncoder: EncoderControl {
    /// The range the target bit rate is clamped to, in kbit/s.
    var bitrateRange: ClosedRange<Int> { get }
    /// The layers now, lowest resolution first (empty without simulcast or before the first frame).
    var layers: [SimulcastLayerStatistics] { get }
}

extension SendPipeline: LayeredEncoder {
    var layers: [SimulcastLayerStatistics] { statistics.layers }
}

/// A weak reference to the shared encoder: it holds the fan-out as its sink.
struct WeakLayeredEncoder {
    weak var encoder: (any LayeredEncoder)?
}

extension ViewerLayerSelector.Layer {
    /// A layer's figures from the encoder's: an active layer needs its share of the target (what the allocator gives
    /// it, so what it sends), at least its minimum; an inactive one its target (what it would get under a higher
    /// layer).
    public init(_ layer: SimulcastLayerStatistics) {
        self.init(
            isActive: layer.isActive,
            needKbps: layer.isActive ? max(layer.targetKbps, layer.stream.minKbps) : layer.stream.targetKbps)
    }
}
