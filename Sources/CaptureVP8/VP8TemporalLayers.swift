/// What a VP8 frame is in a temporally scalable stream: its layer, and whether a receiver may start decoding that
/// layer at it.
///
/// ## RFC 7741
/// The RTP packetizer writes ``index`` as the payload descriptor's TID and ``isLayerSync`` as its Y bit, and counts
/// TL0PICIDX over the frames of layer 0.
public struct VP8TemporalLayerInfo: Sendable, Hashable, Codable {
    /// The temporal layer, 0 (the base) to 2.
    public var index: Int
    /// Y: the frame references only base-layer frames (or is a key frame), so a receiver that has dropped this
    /// layer may start decoding it again here.
    public var isLayerSync: Bool

    /// Creates the marking of one frame.
    public init(index: Int, isLayerSync: Bool) {
        self.index = index
        self.isLayerSync = isLayerSync
    }
}

/// VP8 temporal scalability as libwebrtc configures it (`default_temporal_layers.cc`, `scalabilityMode` L1T1, L1T2
/// and L1T3): the layer pattern, each frame's references and updates, and the rate split.
///
/// ## The patterns
/// - **One layer (L1T1):** every frame references and updates `last`.
/// - **Two layers (L1T2):** `0 1`. Layer 0 references and updates `last`; layer 1 references `last` and updates
///   nothing (it is droppable, and a layer sync). Rates 60/40 %.
/// - **Three layers (L1T3):** `0 2 1 2`. Layer 0 references and updates `last`; layer 1 references `last` and
///   updates `golden` (a layer sync); layer 2 references `last` and `golden` and updates nothing. Rates 40/20/40 %
///   (cumulative 40, 60 and 100 %).
///
/// No frame after a key frame updates `altref`, so it stays the last key frame, which every layer may reference.
/// A key frame is always layer 0 and restarts the pattern. Dropping layer 2 halves the frame rate, dropping layers
/// 1 and 2 quarters it, and what is left decodes without error.
///
/// ## Where this differs from libwebrtc
/// libwebrtc's layer 1 also references `golden` (the previous layer-1 frame) and marks a layer sync only every few
/// patterns; here layer 1 references only layer 0, so every layer-1 frame is a sync point (a receiver can move up
/// to 15 fps at any layer-1 frame), at a small cost in compression.
public struct VP8TemporalPattern: Sendable, Hashable {
    /// How a frame uses libvpx's three reference buffers.
    public struct Frame: Sendable, Hashable {
        /// The frame's temporal layer.
        public var layer: Int
        /// Whether it may predict from `golden`.
        public var referencesGolden: Bool
        /// Whether it replaces `last`.
        public var updatesLast: Bool
        /// Whether it replaces `golden`.
        public var updatesGolden: Bool

        /// Describes one frame of a pattern.
        public init(layer: Int, referencesGolden: Bool, updatesLast: Bool, updatesGolden: Bool) {
            self.layer = layer
            self.referencesGolden = referencesGolden
            self.updatesLast = updatesLast
            self.updatesGolden = updatesGolden
        }
    }

    /// The number of temporal layers, 1 to 3.
    public let layers: Int

    /// A pattern of `layers` (clamped to 1…3).
    public init(layers: Int) {
        self.layers = min(3, max(1, layers))
    }

    /// The tables, by number of layers (index 0: one layer). Stored once: the encoder reads them every frame.
    private static let layerIDTable: [[Int]] = [[0], [0, 1], [0, 2, 1, 2]]
    private static let rateDecimatorTable: [[Int]] = [[1], [2, 1], [4, 2, 1]]
    private static let rateFractionTable: [[Double]] = [[1], [0.6, 1], [0.4, 0.6, 1]]

    /// The layer of each frame of the pattern, in order (libvpx's `ts_layer_id`).
    public var layerIDs: [Int] { Self.layerIDTable[layers - 1] }

    /// How many times the frame rate of each layer divides the full rate (libvpx's `ts_rate_decimator`).
    public var rateDecimators: [Int] { Self.rateDecimatorTable[layers - 1] }

    /// The share of the bit rate of each layer and those below it (libwebrtc's split; libvpx's `ts_target_bitrate`
    /// takes these cumulative figures).
    public var cumulativeRateFractions: [Double] { Self.rateFractionTable[layers - 1] }

    /// The cumulative target of each layer, in kbit/s, for a stream of `totalKbps` (each at least 1).
    public func cumulativeTargetsKbps(totalKbps: Int) -> [Int] {
        cumulativeRateFractions.map { max(1, Int((Double(totalKbps) * $0).rounded())) }
    }

    /// The references and updates of the frame at `position` in the pattern (taken modulo its length).
    public func frame(at position: Int) -> Frame {
        let ids = layerIDs
        let layer = ids[((position % ids.count) + ids.count) % ids.count]
        switch (layers, layer) {
        case (_, 0):
            return Frame(layer: 0, referencesGolden: false, updatesLast: true, updatesGolden: false)
        case (2, _):
            return Frame(layer: 1, referencesGolden: false, updatesLast: false, updatesGolden: false)
        case (_, 1):
            return Frame(layer: 1, referencesGolden: false, updatesLast: false, updatesGolden: true)
        default:
            return Frame(layer: 2, referencesGolden: true, updatesLast: false, updatesGolden: false)
        }
    }
}
