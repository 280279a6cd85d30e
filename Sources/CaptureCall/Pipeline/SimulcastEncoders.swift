internal import CaptureConversion
internal import CaptureCore
internal import CaptureVP8

/// The simulcast layers of a ``SendPipeline``'s encoder thread: one `VP8Encoder` per layer, the layout of the current
/// input size, the rate allocator, and a reused buffer per lower layer for its scaled copy.
///
/// Owned by the encoder thread (``EncoderWorker``); not thread-safe.
///
/// Per frame: the top layer takes the frame as it is (or a centred crop of it when the layout rounded its size down),
/// each lower layer a bilinear 2:1 scale of the layer above into its buffer (libyuv), then the active layers are
/// encoded lowest first and each output handed on at once. Nothing is allocated per frame once the buffers exist,
/// beyond what each `VP8Encoder.encode` allocates (nothing while the sinks let the previous frame's bytes go).
///
/// Each encoder has the pipeline's VP8 settings with the simulcast temporal layers, except that the lowest layer of
/// several runs without the denoiser, as in libwebrtc (`VP8E_SET_NOISE_SENSITIVITY` on its two highest encoders only).
///
/// ## Where this differs from libwebrtc
/// libwebrtc's `LibvpxVp8Encoder` encodes all layers in one `vpx_codec_encode` call of libvpx's multi-resolution
/// encoder (`vpx_codec_enc_init_multi`), which makes a key frame on every layer whenever one is needed and hands the
/// top layer out first. Here each layer has an encoder of its own, as in libwebrtc's `SimulcastEncoderAdapter`: a key
/// frame is made only on the layer that needs one (a PLI names one SSRC), and the lowest layer, the one every viewer
/// can take, goes out first.
final class SimulcastEncoders {
    /// One layer's encoder and scaling buffer.
    private final class Layer {
        var encoder: VP8Encoder
        /// The pool its scaled (or cropped) copy comes from; recreated when the size or layout changes.
        var pool: FrameBufferPool?
        /// The allocator's share, in kbit/s; 0 when off.
        var kbps = 0
        /// This frame's picture for the layer, held only while the frame is encoded.
        var image: VideoFrameBuffer?

        init(encoder: VP8Encoder) { self.encoder = encoder }
    }

    /// What one layer did with the last frame.
    struct Outcome {
        var encoded = false
        var isKeyFrame = false
        var bytes = 0
        var droppedByRateControl = false
        var failed = false
    }

    /// A layer turned on or off by an allocation.
    struct Switch {
        var index: Int
        var active: Bool
        var kbps: Int
    }

    private let configuration: SimulcastConfiguration
    private let layers: [Layer]
    /// The encoder configuration's denoiser setting (the lowest layer's when it is the only one).
    private let noiseSensitivity: Int
    /// The layout for the current input size, or `nil` before the first frame.
    private(set) var layout: SimulcastLayout?
    private var allocator: SimulcastRateAllocator?
    /// The last allocation (for the current layout).
    private(set) var allocation: SimulcastAllocation?
    /// The total target in force, in kbit/s.
    private(set) var totalKbps: Int
    /// What each layer did with the last frame (index = layer).
    private(set) var outcomes: [Outcome]

    /// Creates the encoders (libvpx itself starts on each layer's first frame).
    ///
    /// - Throws: `CaptureError` `invalidArgument` for a bad simulcast or encoder configuration.
    init(
        configuration: SimulcastConfiguration, encoder: VP8EncoderConfiguration, initialKbps: Int
    ) throws(CaptureError) {
        try configuration.validate()
        var layerConfiguration = encoder
        layerConfiguration.temporalLayers = configuration.temporalLayers
        layerConfiguration.targetBitrateKbps = max(1, initialKbps)
        var layers: [Layer] = []
        for _ in 0..<SimulcastLayout.maxLayerLimit {
            layers.append(Layer(encoder: try VP8Encoder(configuration: layerConfiguration)))
        }
        self.configuration = configuration
        self.layers = layers
        noiseSensitivity = encoder.noiseSensitivity
        totalKbps = max(1, initialKbps)
        outcomes = Array(repeating: Outcome(), count: SimulcastLayout.maxLayerLimit)
    }

    /// The layout `input` gets with this configuration.
    func layout(for input: Dimensions) -> SimulcastLayout {
        SimulcastLayout(
            input: input, maxLayers: configuration.maxLayers, temporalLayers: configuration.temporalLayers)
    }

    /// Lays the layers out as `layout` (from ``layout(for:)``), with a fresh allocator (libwebrtc makes a new one
    /// whenever it reconfigures the encoder, so the first allocation has no hysteresis), and allocates `totalKbps`.
    ///
    /// - Returns: Every layer's state, as switches.
    func relayout(to layout: SimulcastLayout, totalKbps: Int) -> [Switch] {
        self.layout = layout
        allocator = SimulcastRateAllocator(streams: layout.streams)
        allocation = nil
        for layer in layers { layer.pool = nil }
        // libwebrtc: the denoiser on the highest two encoders only, so off on the lowest of two or three.
        let lowestNoise = layout.streams.count > 1 ? 0 : noiseSensitivity
        var configuration = layers[0].encoder.configuration
        if configuration.noiseSensitivity != lowestNoise {
            configuration.noiseSensitivity = lowestNoise
            // The configuration was valid with another noise sensitivity, and 0 is always valid.
            if let encoder = try? VP8Encoder(configuration: configuration) {
                layers[0].encoder = encoder
                layers[0].kbps = 0
            }
        }
        return setTarget(kbps: totalKbps)
    }

    /// Shares `kbps` among the layers: each active layer's encoder gets its rate (`setRates`); a layer turned on
    /// starts with a key frame; a layer turned off is no longer encoded.
    ///
    /// - Returns: The layers turned on or off (every layer at the first allocation of a layout).
    func setTarget(kbps: Int) -> [Switch] {
        totalKbps = kbps
        guard var allocator, let layout else { return [] }
        let allocation = allocator.allocate(totalKbps: kbps)
        self.allocator = allocator
        let first = self.allocation == nil
        self.allocation = allocation
        var switches: [Switch] = []
        for (index, share) in allocation.layers.enumerated() {
            let layer = layers[index]
            let wasActive = layer.kbps > 0
            if share.isActive, share.kbps != layer.kbps {
                // Rejected only below 1 kbit/s, which an active share never is; a failure keeps the old rate.
                try? layer.encoder.setRates(bitrateKbps: share.kbps, fps: layer.encoder.configuration.framerate)
            }
            if share.isActive, !wasActive { layer.encoder.requestKeyFrame() }
            layer.kbps = share.kbps
            if first || wasActive != share.isActive {
                switches.append(Switch(index: index, active: share.isActive, kbps: share.kbps))
            }
        }
        for layer in layers[layout.streams.count...] { layer.kbps = 0 }
        return switches
    }

    /// Asks for a key frame on each layer whose bit is set in `mask` (bit 0: the lowest layer).
    func requestKeyFrames(mask: UInt32) {
        for (index, layer) in layers.enumerated() where mask & (1 << UInt32(index)) != 0 {
            layer.encoder.requestKeyFrame()
        }
    }

    /// Makes each layer's picture and encodes the active layers, lowest first, handing each output to `deliver`
    /// as soon as it is made; ``outcomes`` tells what each layer did.
    ///
    /// - Parameter failure: Called for each layer that failed to scale or encode (the others go on).
    func encode(
        _ frame: VideoFrame, deliver: (EncodedFrame) -> Void, failure: (CaptureError, _ stage: String) -> Void
    ) {
        for index in outcomes.indices { outcomes[index] = Outcome() }
        guard let layout else { return }
        let count = layout.streams.count
        defer { for layer in layers { layer.image = nil } }
        // Pictures, top-down: the top layer is the frame (cropped if its size was rounded down), each lower one a
        // 2:1 scale of the one above.
        for index in stride(from: count - 1, through: 0, by: -1) {
            let size = layout.streams[index].dimensions
            let source = index == count - 1 ? frame.buffer : layers[index + 1].image
            guard let source else { break }
            if source.dimensions == size {
                layers[index].image = source
                continue
            }
            do throws(CaptureError) {
                layers[index].image = try scaled(source, to: size, layer: layers[index], crop: index == count - 1)
            } catch {
                outcomes[index].failed = true
                failure(error, "simulcast scale")
                break
            }
        }
        for index in 0..<count where layers[index].kbps > 0 {
            guard let image = layers[index].image else { continue }
            let input = VideoFrame(
                buffer: image, rotation: frame.rotation, timestampNs: frame.timestampNs,
                sequenceNumber: frame.sequenceNumber)
            do throws(CaptureError) {
                guard var encoded = try layers[index].encoder.encode(input) else {
                    outcomes[index].droppedByRateControl = true
                    continue
                }
                encoded.simulcastIndex = index
                outcomes[index].encoded = true
                outcomes[index].isKeyFrame = encoded.isKeyFrame
                outcomes[index].bytes = encoded.bytes.count
                deliver(encoded)
            } catch {
                outcomes[index].failed = true
                failure(error, "simulcast encode")
            }
        }
    }

    /// `source` scaled (the top layer: centre-cropped) into the layer's pooled buffer of `size`, in the source's layout.
    private func scaled(
        _ source: VideoFrameBuffer, to size: Dimensions, layer: Layer, crop: Bool
    ) throws(CaptureError) -> VideoFrameBuffer {
        if layer.pool?.dimensions != size || layer.pool?.format != source.format {
            layer.pool = FrameBufferPool(format: source.format, dimensions: size, capacity: 2)
        }
        guard let output = layer.pool?.take() else {
            throw CaptureError(.invalidState, "no free buffer for the \(size) simulcast layer")
        }
        let region =
            crop
            ? CropRect(
                x: (source.width - size.width) / 2, y: (source.height - size.height) / 2, width: size.width,
                height: size.height)
            : CropRect(source.dimensions)
        try FrameTransformer.cropAndScale(source, crop: region, into: output, filter: .bilinear)
        return output
    }
}
