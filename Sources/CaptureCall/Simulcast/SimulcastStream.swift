public import CaptureCore

/// One simulcast encoding: its size and its bit-rate bounds (libwebrtc's `webrtc::VideoStream` for a simulcast layer,
/// as `cricket::GetSimulcastConfig` fills it).
///
/// A value, made by ``SimulcastLayout`` and read by ``SimulcastRateAllocator``; nothing here runs on a thread of its
/// own.
///
/// ## The rates
/// - ``minKbps``: the least the layer is sent at; below it the allocator turns the layer off.
/// - ``targetKbps``: what the layer gets when a higher layer is also sent (the allocator fills every layer up to its
///   target, bottom-up).
/// - ``maxKbps``: what the layer may take when it is the top active layer (the allocator gives the top active layer
///   what is left, up to this).
///
/// The rates are whole kbit/s, truncated from libwebrtc's bit/s figures the way its `VideoCodecInitializer` fills
/// `SimulcastStream.minBitrate`/`targetBitrate`/`maxBitrate`.
public struct SimulcastStream: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The coded size of the layer.
    public var dimensions: Dimensions
    /// The lowest bit rate the layer is sent at, in kbit/s.
    public var minKbps: Int
    /// The bit rate the layer gets while a higher layer is sent too, in kbit/s.
    public var targetKbps: Int
    /// The highest bit rate the layer gets as the top active layer, in kbit/s.
    public var maxKbps: Int
    /// The layer's temporal layers, 1 to 3 (VP8 L1T1, L1T2, L1T3).
    public var temporalLayers: Int

    /// Creates a stream description.
    public init(dimensions: Dimensions, minKbps: Int, targetKbps: Int, maxKbps: Int, temporalLayers: Int) {
        self.dimensions = dimensions
        self.minKbps = minKbps
        self.targetKbps = targetKbps
        self.maxKbps = maxKbps
        self.temporalLayers = temporalLayers
    }

    /// `"640x360 150/500/700 kbit/s L1T3"` (min/target/max).
    public var description: String {
        "\(dimensions) \(minKbps)/\(targetKbps)/\(maxKbps) kbit/s L1T\(temporalLayers)"
    }
}
