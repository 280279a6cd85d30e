public import CaptureCore

/// What one simulcast layer of a ``SendPipeline`` has done so far (``SendPipelineStatistics/layers``), after the
/// per-encoding figures of W3C `RTCOutboundRtpStreamStats` (`frameWidth`, `frameHeight`, `framesEncoded`,
/// `keyFramesEncoded`, `bytesSent` before packetization, `targetBitrate`, `active`).
///
/// The counters belong to the layer's index and keep counting across layout changes (a CPU-overuse step that drops
/// the top layer and a later step that brings it back): a reader can take rates from the differences of two readings.
public struct SimulcastLayerStatistics: Sendable, Hashable, Codable {
    /// The layer's index: 0 is the lowest resolution (`EncodedFrame.simulcastIndex`).
    public var index: Int
    /// The layer's size and bit-rate bounds in the current layout.
    public var stream: SimulcastStream
    /// Whether the allocator has the layer on: it is encoded and sent.
    public var isActive = false
    /// The layer's share of the target bit rate, in kbit/s (0 when off).
    public var targetKbps = 0
    /// Frames encoded for the layer.
    public var framesEncoded = 0
    /// Encoded frames of the layer that are key frames.
    public var keyFrames = 0
    /// Bytes of VP8 frames encoded for the layer (before packetization).
    public var bytesEncoded = 0
    /// Frames libvpx's rate control dropped on the layer.
    public var droppedByRateControl = 0
    /// Times the allocator turned the layer on again after it had been off.
    public var activations = 0
    /// Times the allocator turned the layer off.
    public var deactivations = 0

    /// Creates zeroed statistics for layer `index` of `stream`.
    public init(index: Int, stream: SimulcastStream) {
        self.index = index
        self.stream = stream
    }

    /// The layer's coded size.
    public var dimensions: Dimensions { stream.dimensions }
}
