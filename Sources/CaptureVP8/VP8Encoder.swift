public import CaptureCore
internal import CVPX
import Logging

/// A libvpx VP8 encoder in WebRTC's real-time configuration, taking captured frames as they come.
///
/// NV12 frames are handed to libvpx as `VPX_IMG_FMT_NV12` and I420 frames as `VPX_IMG_FMT_I420`, both without a copy:
/// one `vpx_image_t` is pointed at each frame's planes. The encoder is (re)initialised on the first frame and whenever
/// the frame size or layout changes. Each output keeps its source frame's rotation and capture time, and gets a
/// 90 kHz RTP timestamp derived from the capture time. libvpx itself sees a pts that advances by one frame duration
/// (`90000 / fps`) per input frame, as in WebRTC, so its rate control works from the configured frame rate.
///
/// An encoder is not thread-safe: use it from one thread at a time (``VP8EncodingConsumer`` wraps one in a lock;
/// CaptureCall's `SendPipeline` owns one on its encoder thread).
public final class VP8Encoder {
    /// The configuration in force (``setRates(bitrateKbps:fps:)`` updates its bit rate and frame rate).
    public private(set) var configuration: VP8EncoderConfiguration
    /// The frame size the encoder is currently initialised for, or `nil` before the first frame.
    public private(set) var currentDimensions: Dimensions?
    /// The frame layout the encoder is currently initialised for, or `nil` before the first frame.
    public private(set) var currentFormat: OutputPixelFormat?
    /// How many times libvpx was initialised (the first frame, then each size or layout change).
    public private(set) var initializationCount = 0

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let encoderConfig: UnsafeMutablePointer<vpx_codec_enc_cfg_t>
    private let image: UnsafeMutablePointer<vpx_image_t>
    private var initialized = false
    private var pts: Int64 = 0
    private var keyFrameRequested = false
    /// The last encoded frame's bytes, whose buffer the next frame reuses (see ``encode(_:forceKeyFrame:)``).
    private var output: [UInt8] = []
    /// Capture time of the last frame that produced output since (re)initialisation.
    private var lastOutputTimeNs: UInt64?
    /// With temporal layers: the next frame's place in the pattern, frames since the last key frame, and whether
    /// `golden` still holds that key frame (no layer-1 frame since).
    private var patternPosition = 0
    private var framesSinceKeyFrame = 0
    private var goldenHoldsKeyFrame = true
    private let logger = Logger(label: "CaptureVP8.VP8Encoder")

    /// Creates an encoder; libvpx is initialised when the first frame arrives.
    ///
    /// - Throws: `CaptureError` `invalidArgument` when the configuration is out of range.
    public init(configuration: VP8EncoderConfiguration = VP8EncoderConfiguration()) throws(CaptureError) {
        try configuration.validate()
        self.configuration = configuration
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        encoderConfig = .allocate(capacity: 1)
        encoderConfig.initialize(to: vpx_codec_enc_cfg_t())
        image = .allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
    }

    deinit {
        if initialized { vpx_codec_destroy(context) }
        context.deallocate()
        encoderConfig.deallocate()
        image.deallocate()
    }

    /// Asks for the next frame to be a key frame (`VPX_EFLAG_FORCE_KF`), as when a receiver reports loss.
    public func requestKeyFrame() {
        keyFrameRequested = true
    }

    /// Changes the target bit rate and frame rate of a running encoder (`vpx_codec_enc_config_set`).
    ///
    /// - Throws: `CaptureError` `invalidArgument` for a bit rate below 1 kbit/s or a frame rate below 1 (as WebRTC
    ///   rejects), or the libvpx error when libvpx refuses the change.
    public func setRates(bitrateKbps: Int, fps: Double) throws(CaptureError) {
        var updated = configuration
        updated.targetBitrateKbps = bitrateKbps
        updated.framerate = fps
        try updated.validate()
        configuration = updated
        guard initialized else { return }
        encoderConfig.pointee.rc_target_bitrate = UInt32(bitrateKbps)
        setLayerTargets(totalKbps: bitrateKbps)
        let status = vpx_codec_enc_config_set(context, encoderConfig)
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .invalidArgument, "VP8 rate change refused", status: status, context: context,
                call: "vpx_codec_enc_config_set")
        }
        try control(VP8E_SET_MAX_INTRA_BITRATE_PCT, configuration.resolvedMaxIntraBitratePercent)
    }

    /// Encodes one frame.
    ///
    /// - Returns: The encoded frame, or `nil` when libvpx's rate control dropped it (`rc_dropframe_thresh`).
    /// - Throws: `CaptureError` `conversionFailed` when libvpx fails to initialise or encode (for example a frame
    ///   too small or with odd chroma strides), `invalidArgument` for a frame libvpx cannot take.
    public func encode(_ frame: VideoFrame, forceKeyFrame: Bool = false) throws(CaptureError) -> EncodedFrame? {
        let buffer = frame.buffer
        if currentDimensions != buffer.dimensions || currentFormat != buffer.format {
            try initialize(dimensions: buffer.dimensions, format: buffer.format)
        }
        wrap(buffer)
        var flags: vpx_enc_frame_flags_t = 0
        var wantsKeyFrame = forceKeyFrame || keyFrameRequested
        let pattern = configuration.temporalPattern
        var layerFrame: VP8TemporalPattern.Frame?
        if pattern.layers > 1 {
            let interval = configuration.keyFrameInterval
            if interval > 0, framesSinceKeyFrame >= interval { wantsKeyFrame = true }
            // A key frame is layer 0 and restarts the pattern (the first frame after initialisation is one).
            let frame = wantsKeyFrame ? pattern.frame(at: 0) : pattern.frame(at: patternPosition)
            layerFrame = frame
            if !wantsKeyFrame { flags |= Self.flags(for: frame) }
            try control(VP8E_SET_TEMPORAL_LAYER_ID, frame.layer)
        }
        if wantsKeyFrame { flags |= vpx_enc_frame_flags_t(CVPX_EFLAG_FORCE_KF) }
        let duration = configuration.frameDuration
        let forceOutput = try overrideFrameDropping(at: frame.timestampNs)
        let status = vpx_codec_encode(
            context, image, vpx_codec_pts_t(pts), UInt(duration), flags, UInt(CVPX_DL_REALTIME))
        pts += Int64(duration)
        if forceOutput { try setFrameDropThreshold(configuration.frameDropThreshold) }
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .conversionFailed, "VP8 encoding failed", status: status, context: context,
                call: "vpx_codec_encode")
        }

        // The bytes reuse one buffer: once the caller has let the previous frame go, removeAll(keepingCapacity:) finds
        // the buffer unshared and empties it in place, so a frame costs no allocation; a caller that still holds the
        // previous frame keeps its bytes, and this frame gets a buffer of its own (copy on write).
        output.removeAll(keepingCapacity: true)
        var isKeyFrame = false
        var isDroppable = false
        var iterator: vpx_codec_iter_t? = nil
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let coded = packet.pointee.data.frame
            guard let base = coded.buf, coded.sz > 0 else { continue }
            output.append(contentsOf: UnsafeRawBufferPointer(start: base, count: Int(coded.sz)))
            if coded.flags & vpx_codec_frame_flags_t(CVPX_FRAME_IS_KEY) != 0 { isKeyFrame = true }
            if coded.flags & vpx_codec_frame_flags_t(CVPX_FRAME_IS_DROPPABLE) != 0 { isDroppable = true }
        }
        let temporalLayer = layerFrame.map { advancePattern(after: $0, producedOutput: !output.isEmpty, isKeyFrame) }
        guard !output.isEmpty else { return nil }
        if isKeyFrame { keyFrameRequested = false }
        lastOutputTimeNs = frame.timestampNs

        var qp: Int32 = -1
        if cvpx_codec_control_int_ptr(context, Int32(VP8E_GET_LAST_QUANTIZER.rawValue), &qp) != VPX_CODEC_OK {
            qp = -1
        }
        return EncodedFrame(
            bytes: output, isKeyFrame: isKeyFrame,
            rtpTimestamp: EncodedFrame.rtpTimestamp(fromNanoseconds: frame.timestampNs),
            captureTimeNs: frame.timestampNs, rotation: frame.rotation, dimensions: buffer.dimensions, qp: Int(qp),
            isDroppable: isDroppable, temporalLayer: temporalLayer)
    }

    /// libvpx's flags for a frame of the pattern: what it must not reference or update (`altref` is never updated,
    /// so it keeps the last key frame).
    private static func flags(for frame: VP8TemporalPattern.Frame) -> vpx_enc_frame_flags_t {
        var flags = vpx_enc_frame_flags_t(CVPX_EFLAG_NO_UPD_ARF)
        if !frame.referencesGolden { flags |= vpx_enc_frame_flags_t(CVPX_EFLAG_NO_REF_GF) }
        if !frame.updatesLast { flags |= vpx_enc_frame_flags_t(CVPX_EFLAG_NO_UPD_LAST) }
        if !frame.updatesGolden { flags |= vpx_enc_frame_flags_t(CVPX_EFLAG_NO_UPD_GF) }
        return flags
    }

    /// Moves the pattern on after a frame (a dropped frame still takes its place, as in libwebrtc) and returns the
    /// frame's marking: a key frame is layer 0 and restarts the pattern; layer 1 references only layer 0 and is a
    /// layer sync; layer 2 is one while `golden` still holds the key frame.
    private func advancePattern(
        after frame: VP8TemporalPattern.Frame, producedOutput: Bool, _ isKeyFrame: Bool
    ) -> VP8TemporalLayerInfo {
        if producedOutput, isKeyFrame {
            patternPosition = 1
            framesSinceKeyFrame = 1
            goldenHoldsKeyFrame = true
            return VP8TemporalLayerInfo(index: 0, isLayerSync: false)
        }
        patternPosition += 1
        if patternPosition >= configuration.temporalPattern.layerIDs.count { patternPosition = 0 }
        framesSinceKeyFrame += 1
        let sync = frame.layer == 1 || (frame.layer == 2 && goldenHoldsKeyFrame)
        if producedOutput, frame.updatesGolden { goldenHoldsKeyFrame = false }
        return VP8TemporalLayerInfo(index: frame.layer, isLayerSync: sync)
    }

    /// The cumulative per-layer targets (`ts_target_bitrate`) for a total of `totalKbps`, with temporal layers.
    private func setLayerTargets(totalKbps: Int) {
        let pattern = configuration.temporalPattern
        guard pattern.layers > 1 else { return }
        Self.store(pattern.cumulativeTargetsKbps(totalKbps: totalKbps), in: &encoderConfig.pointee.ts_target_bitrate)
    }

    /// Writes `values` into the first slots of one of libvpx's fixed `unsigned int` arrays (a tuple in Swift); the
    /// values never outnumber the slots (at most 4 against `VPX_TS_MAX_PERIODICITY` 16, 3 against
    /// `VPX_TS_MAX_LAYERS` 5), and `count` bounds them anyway.
    private static func store<Tuple>(_ values: [Int], in tuple: inout Tuple) {
        let count = MemoryLayout<Tuple>.size / MemoryLayout<UInt32>.stride
        withUnsafeMutablePointer(to: &tuple) { pointer in
            pointer.withMemoryRebound(to: UInt32.self, capacity: count) { slots in
                for (index, value) in values.prefix(count).enumerated() { slots[index] = UInt32(clamping: value) }
            }
        }
    }

    /// Configures libvpx's temporal scalability (`ts_*`) for ``VP8EncoderConfiguration/temporalLayers`` > 1.
    private func configureTemporalLayers() {
        let pattern = configuration.temporalPattern
        guard pattern.layers > 1 else { return }
        encoderConfig.pointee.ts_number_layers = UInt32(pattern.layers)
        encoderConfig.pointee.ts_periodicity = UInt32(pattern.layerIDs.count)
        Self.store(pattern.layerIDs, in: &encoderConfig.pointee.ts_layer_id)
        Self.store(pattern.rateDecimators, in: &encoderConfig.pointee.ts_rate_decimator)
        setLayerTargets(totalKbps: configuration.targetBitrateKbps)
        // Key frames come from the encoder's own count, so that each is on layer 0.
        encoderConfig.pointee.kf_mode = VPX_KF_DISABLED
        patternPosition = 0
        framesSinceKeyFrame = 0
        goldenHoldsKeyFrame = true
    }

    /// WebRTC's maximum frame-drop interval: after ``VP8EncoderConfiguration/maxFrameDropIntervalMs`` without output,
    /// turns libvpx's frame dropping off for this frame. Returns whether it did (the caller restores it).
    private func overrideFrameDropping(at timestampNs: UInt64) throws(CaptureError) -> Bool {
        guard let intervalMs = configuration.maxFrameDropIntervalMs, configuration.frameDropThreshold > 0,
            let last = lastOutputTimeNs, timestampNs >= last, timestampNs - last >= UInt64(intervalMs) * 1_000_000
        else { return false }
        logger.info("forcing a VP8 frame: no output for \((timestampNs - last) / 1_000_000) ms")
        try setFrameDropThreshold(0)
        return true
    }

    private func setFrameDropThreshold(_ threshold: Int) throws(CaptureError) {
        encoderConfig.pointee.rc_dropframe_thresh = UInt32(threshold)
        let status = vpx_codec_enc_config_set(context, encoderConfig)
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .conversionFailed, "VP8 frame-drop threshold change refused", status: status,
                context: context, call: "vpx_codec_enc_config_set")
        }
    }

    /// Points the reused `vpx_image_t` at the frame's planes (no copy, no allocation).
    private func wrap(_ buffer: VideoFrameBuffer) {
        let y = UnsafeMutablePointer(mutating: buffer.plane(0))
        let fmt = buffer.format == .nv12 ? VPX_IMG_FMT_NV12 : VPX_IMG_FMT_I420
        // With a data pointer, vpx_img_wrap only fills in the struct; we then set the real planes and strides.
        vpx_img_wrap(image, fmt, UInt32(buffer.width), UInt32(buffer.height), 1, y)
        withUnsafeMutablePointer(to: &image.pointee.planes) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { planes in
                planes[0] = y
                switch buffer.format {
                case .nv12:
                    let uv = UnsafeMutablePointer(mutating: buffer.plane(1))
                    planes[1] = uv
                    planes[2] = uv + 1
                case .i420:
                    planes[1] = UnsafeMutablePointer(mutating: buffer.plane(1))
                    planes[2] = UnsafeMutablePointer(mutating: buffer.plane(2))
                }
            }
        }
        withUnsafeMutablePointer(to: &image.pointee.stride) { tuple in
            tuple.withMemoryRebound(to: Int32.self, capacity: 4) { strides in
                strides[0] = Int32(buffer.stride(0))
                strides[1] = Int32(buffer.stride(1))
                // libvpx requires equal U and V strides: NV12 shares one plane, I420 buffers are laid out alike.
                strides[2] = Int32(buffer.format == .nv12 ? buffer.stride(1) : buffer.stride(2))
            }
        }
    }

    /// (Re)initialises libvpx for frames of `dimensions` in `format`, with the WebRTC settings.
    private func initialize(dimensions: Dimensions, format: OutputPixelFormat) throws(CaptureError) {
        guard dimensions.width >= 2, dimensions.height >= 2, dimensions.width <= 16383, dimensions.height <= 16383
        else {
            throw CaptureError(.invalidArgument, "VP8 cannot encode \(dimensions) frames (2…16383 pixels a side)")
        }
        if initialized {
            vpx_codec_destroy(context)
            initialized = false
        }
        currentDimensions = nil
        currentFormat = nil
        lastOutputTimeNs = nil
        let config = configuration
        var status = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), encoderConfig, 0)
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .conversionFailed, "libvpx has no VP8 defaults", status: status, context: nil,
                call: "vpx_codec_enc_config_default")
        }
        let threads = config.resolvedThreads(for: dimensions)
        encoderConfig.pointee.g_w = UInt32(dimensions.width)
        encoderConfig.pointee.g_h = UInt32(dimensions.height)
        encoderConfig.pointee.g_timebase = vpx_rational_t(num: 1, den: Int32(VP8EncoderConfiguration.clockRate))
        encoderConfig.pointee.g_lag_in_frames = 0
        encoderConfig.pointee.g_pass = VPX_RC_ONE_PASS
        encoderConfig.pointee.rc_end_usage = VPX_CBR
        encoderConfig.pointee.g_error_resilient = config.resolvedErrorResilient ? CVPX_ERROR_RESILIENT_DEFAULT : 0
        encoderConfig.pointee.g_threads = UInt32(threads)
        encoderConfig.pointee.rc_target_bitrate = UInt32(config.targetBitrateKbps)
        encoderConfig.pointee.rc_min_quantizer = UInt32(config.minQuantizer)
        encoderConfig.pointee.rc_max_quantizer = UInt32(config.maxQuantizer)
        encoderConfig.pointee.rc_undershoot_pct = UInt32(config.undershootPercent)
        encoderConfig.pointee.rc_overshoot_pct = UInt32(config.overshootPercent)
        encoderConfig.pointee.rc_buf_initial_sz = UInt32(config.bufferInitialMs)
        encoderConfig.pointee.rc_buf_optimal_sz = UInt32(config.bufferOptimalMs)
        encoderConfig.pointee.rc_buf_sz = UInt32(config.bufferSizeMs)
        encoderConfig.pointee.rc_dropframe_thresh = UInt32(config.frameDropThreshold)
        encoderConfig.pointee.rc_resize_allowed = config.resizeAllowed ? 1 : 0
        if config.keyFrameInterval > 0 {
            encoderConfig.pointee.kf_mode = VPX_KF_AUTO
            encoderConfig.pointee.kf_max_dist = UInt32(config.keyFrameInterval)
        } else {
            encoderConfig.pointee.kf_mode = VPX_KF_DISABLED
        }
        configureTemporalLayers()

        status = cvpx_codec_enc_init(context, vpx_codec_vp8_cx(), encoderConfig, 0)
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .conversionFailed, "VP8 encoder initialisation failed for \(dimensions)", status: status,
                context: context, call: "vpx_codec_enc_init")
        }
        initialized = true
        try control(VP8E_SET_CPUUSED, config.resolvedCpuUsed(for: dimensions))
        try control(VP8E_SET_NOISE_SENSITIVITY, config.noiseSensitivity)
        try control(VP8E_SET_STATIC_THRESHOLD, config.staticThreshold)
        try control(VP8E_SET_TOKEN_PARTITIONS, config.tokenPartitions.trailingZeroBitCount)
        try control(VP8E_SET_MAX_INTRA_BITRATE_PCT, config.resolvedMaxIntraBitratePercent)
        try control(VP8E_SET_SCREEN_CONTENT_MODE, 0)
        currentDimensions = dimensions
        currentFormat = format
        initializationCount += 1
        logger.debug(
            "VP8 encoder initialised",
            metadata: [
                "size": "\(dimensions)", "layout": "\(format)", "threads": "\(threads)",
                "kbps": "\(config.targetBitrateKbps)", "fps": "\(config.roundedFramerate)",
                "temporalLayers": "\(config.temporalLayers)",
            ])
    }

    private func control(_ id: vp8e_enc_control_id, _ value: Int) throws(CaptureError) {
        let status = cvpx_codec_control_int(context, Int32(id.rawValue), Int32(value))
        guard status == VPX_CODEC_OK else {
            throw vpxError(
                .invalidArgument, "libvpx refused control \(id.rawValue) = \(value)", status: status,
                context: context, call: "vpx_codec_control")
        }
    }
}
