public import CaptureCore

/// Why a key frame was requested.
public enum KeyFrameRequestReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// An RTCP Picture Loss Indication (RFC 4585).
    case pictureLossIndication
    /// An RTCP Full Intra Request (RFC 5104).
    case fullIntraRequest
    /// The application asked (a new receiver joined, a stream restarted, …).
    case application
}

/// Why the target bit rate changed.
public enum BitrateChangeReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// A receiver's estimate (RTCP REMB).
    case receiverEstimate
    /// A temporary maximum bit rate request (RTCP TMMBR, RFC 5104).
    case temporaryMaximum
    /// The sender's own estimate from loss and delay reports.
    case senderEstimate
    /// The application asked.
    case application
}

/// Something a ``SendPipeline`` did, reported on ``SendPipeline/events``.
public enum SendPipelineEvent: Sendable, Hashable {
    /// A key frame was requested; the next encoded frame is a key frame.
    case keyFrameRequested(KeyFrameRequestReason)
    /// The target bit rate changed to `appliedKbps` (`requestedKbps` clamped to the configured range).
    case bitrateChanged(requestedKbps: Int, appliedKbps: Int, reason: BitrateChangeReason)
    /// CPU-overuse adaptation changed the resolution level (0 = full); `maximum` is the largest size now requested.
    case resolutionChanged(level: Int, maximum: Dimensions, stepUp: Bool)
    /// The limitation of the sent video changed: its reason, the largest size now requested (`nil`: the camera's or
    /// the configured size) and the frame rate requested (`nil`: not lowered).
    case qualityLimitationChanged(reason: QualityLimitationReason, size: Dimensions?, fps: Double?)
    /// Frame dropping for congestion was turned on or off (``SendPipeline/setCongestionFrameDropping(_:)``).
    case congestionFrameDropping(Bool)
    /// A frame failed to adapt or encode (the pipeline goes on with the next frame).
    case encodeFailed(CaptureError)
    /// Simulcast: the layers were laid out for a new input size (the first frame, a CPU-overuse step, a camera
    /// change); `streams` are the new layers, lowest resolution first.
    case simulcastLayoutChanged(streams: [SimulcastStream])
    /// Simulcast: the allocator turned layer `index` on (with `kbps`) or off (0), on a new target or a new layout.
    case simulcastLayerChanged(index: Int, active: Bool, kbps: Int)
}
