public import CaptureCore

/// Simulcast in a ``SendPipeline``: up to three encodings of each frame at halving resolutions, each with its own
/// VP8 encoder, bit rate and temporal layers, so that an SFU can forward each viewer the layer its link carries
/// (``SendPipelineConfiguration/simulcast``).
///
/// The layers follow the input size as libwebrtc lays them out (``SimulcastLayout``): 1280x720 gives 320x180,
/// 640x360 and 1280x720; 640x480 gives 320x240 and 640x480; 320x180 gives one layer. The target bit rate is shared
/// among them by a ``SimulcastRateAllocator``.
///
/// ## Defaults (libwebrtc)
/// Three layers, as Chromium publishes to an SFU, and three temporal layers in each (`kDefaultNumTemporalLayers`, VP8
/// L1T3), so an SFU can also thin each layer to 15 or 7.5 fps.
public struct SimulcastConfiguration: Sendable, Hashable, Codable {
    /// The most layers to send, 1 to 3; the input size may allow fewer.
    public var maxLayers: Int
    /// Temporal layers in every layer, 1 to 3 (L1T1, L1T2, L1T3). Replaces the encoder configuration's
    /// `VP8EncoderConfiguration.temporalLayers`.
    public var temporalLayers: Int

    /// Creates a configuration; the defaults are libwebrtc's.
    public init(maxLayers: Int = 3, temporalLayers: Int = 3) {
        self.maxLayers = maxLayers
        self.temporalLayers = temporalLayers
    }

    /// Checks the ranges.
    ///
    /// - Throws: `CaptureError` `invalidArgument` naming the bad field.
    public func validate() throws(CaptureError) {
        guard (1...SimulcastLayout.maxLayerLimit).contains(maxLayers) else {
            throw CaptureError(.invalidArgument, "simulcast layers must be 1, 2 or 3, got \(maxLayers)")
        }
        guard (1...3).contains(temporalLayers) else {
            throw CaptureError(.invalidArgument, "simulcast temporal layers must be 1, 2 or 3, got \(temporalLayers)")
        }
    }
}
