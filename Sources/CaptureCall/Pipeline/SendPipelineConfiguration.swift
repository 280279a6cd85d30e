public import CaptureConversion
public import CaptureVP8

/// How a ``SendPipeline`` adapts and encodes frames.
public struct SendPipelineConfiguration: Sendable, Hashable, Codable {
    /// The VP8 encoder settings; its target bit rate is the initial target.
    public var encoder: VP8EncoderConfiguration
    /// The lowest bit rate ``SendPipeline/setTargetBitrate(kbps:reason:)`` applies, in kbit/s (without simulcast;
    /// with it, the layout sets the range: see ``SendPipeline/bitrateRange``).
    public var minBitrateKbps: Int
    /// The highest bit rate ``SendPipeline/setTargetBitrate(kbps:reason:)`` applies, in kbit/s (without simulcast;
    /// with it, the layout sets the range: see ``SendPipeline/bitrateRange``).
    public var maxBitrateKbps: Int
    /// The largest size and frame rate to send (WebRTC's `VideoAdapter` request), or `nil` for the camera's.
    public var outputRequest: VideoAdapter.OutputFormatRequest?
    /// Whether to rotate the pixels upright before encoding and send rotation 0, as WebRTC does when the far end
    /// did not negotiate the video-orientation extension (CVO). Otherwise the rotation travels as a tag.
    public var rotatePixels: Bool
    /// CPU-overuse adaptation.
    public var overuse: OveruseConfiguration
    /// Bandwidth adaptation: the resolution and frame rate follow the target bit rate. Off under simulcast, as in
    /// libwebrtc: the allocator turns layers off instead.
    public var qualityScaling: QualityScalerConfiguration
    /// Simulcast: several encodings of each frame at halving resolutions, or `nil` (the default) for one stream. See
    /// ``SimulcastConfiguration``.
    public var simulcast: SimulcastConfiguration?

    /// Creates a configuration. `maxBitrateKbps` defaults to the larger of 2500 and the encoder's target.
    public init(
        encoder: VP8EncoderConfiguration = VP8EncoderConfiguration(), minBitrateKbps: Int = 50,
        maxBitrateKbps: Int? = nil, outputRequest: VideoAdapter.OutputFormatRequest? = nil, rotatePixels: Bool = false,
        overuse: OveruseConfiguration = OveruseConfiguration(),
        qualityScaling: QualityScalerConfiguration = QualityScalerConfiguration(),
        simulcast: SimulcastConfiguration? = nil
    ) {
        self.encoder = encoder
        self.minBitrateKbps = minBitrateKbps
        self.maxBitrateKbps = maxBitrateKbps ?? max(2500, encoder.targetBitrateKbps)
        self.outputRequest = outputRequest
        self.rotatePixels = rotatePixels
        self.overuse = overuse
        self.qualityScaling = qualityScaling
        self.simulcast = simulcast
    }
}
