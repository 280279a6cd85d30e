public import CaptureConversion
public import CaptureCore
internal import CaptureVP8
public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The send side of a call: adapts captured frames, encodes the newest one on a dedicated encoder thread and hands
/// each encoded frame to its sinks (an RTP sender, an IVF file, …), as WebRTC's `VideoStreamEncoder` does.
///
/// ```swift
/// let pipeline = try SendPipeline(configuration: SendPipelineConfiguration(), sinks: [IVFFileSink(path: "out.ivf")])
/// let capturer = CameraVideoCapturer(delegate: pipeline)
/// try await capturer.startCapture(target: Dimensions(width: 640, height: 480))
/// …
/// await capturer.stopCapture()
/// await pipeline.stop()
/// ```
///
/// The capture thread (``capturer(_:didCapture:)``) runs the ``VideoAdapter`` step (crop, scale, frame-rate drop)
/// and puts the frame in a one-slot mailbox; a frame still waiting there is replaced and counted as
/// ``SendPipelineStatistics/droppedAtEncoderQueue``. The capture thread only takes a short lock: it never waits for
/// the encoder or the network, so at most one frame waits and one is encoded, and the camera's buffers keep flowing.
///
/// The encoder thread always encodes the newest frame, applies key-frame and bit-rate requests between frames, and
/// measures the encode time: when it stays above 85 % of the frame interval the resolution steps down (3/4, 1/2, …),
/// when it stays below 50 % it steps back up (see ``OveruseConfiguration``). The resolution, and then the frame rate,
/// also follow the target bit rate (see ``QualityScalerConfiguration``): the lower of the two resolutions wins, and
/// ``SendPipelineStatistics/qualityLimitationReason`` says which limits. Every control is thread-safe, logged,
/// counted in ``statistics`` and reported on ``events``.
///
/// ## Simulcast
/// With ``SendPipelineConfiguration/simulcast`` set, the encoder thread encodes each frame as up to three layers
/// (``SimulcastLayout``: 1280x720 gives 320x180, 640x360 and 1280x720), each with its own `VP8Encoder` and
/// `EncodedFrame.simulcastIndex`, lowest first. Lower layers are scaled from the layer above into
/// reused buffers (libyuv, bilinear). ``setTargetBitrate(kbps:reason:)`` is shared among the layers by a
/// ``SimulcastRateAllocator``; a layer it turns off is not encoded, and one it turns back on starts with a key frame.
/// ``requestKeyFrame(reason:simulcastIndex:)`` may name one layer. The bandwidth resolution steps
/// (``QualityScalerConfiguration``) are off, as in libwebrtc; CPU-overuse steps still scale the input, and the layers
/// are laid out again for the new size (their number may change). ``SendPipelineStatistics/layers`` has each layer's
/// figures.
public final class SendPipeline: CameraVideoCapturerDelegate {
    /// A frame waiting for the encoder.
    struct PendingFrame {
        var frame: VideoFrame
        /// Time since the previous frame put in the mailbox (0 for the first).
        var intervalNs: Int64
        /// The captured frame's size, before the video adapter.
        var inputDimensions: Dimensions
    }

    /// Everything the capture thread, the controls and the encoder thread share.
    struct State {
        var pending: PendingFrame?
        var stopping = false
        var lastTimestampNs: UInt64?
        /// The layers a key frame is requested on: bit `i` for simulcast layer `i` (bit 0: the single stream).
        var keyFrameLayers: UInt32 = 0
        var pendingBitrateKbps: Int?
        /// The last target asked for, before clamping: a new simulcast layout clamps it to its own range.
        var requestedTargetKbps: Int
        /// What ``SendPipeline/setTargetBitrate(kbps:reason:)`` clamps to.
        var bitrateRange: ClosedRange<Int>
        /// The current simulcast layout's ``SimulcastLayout/paddingTargetKbps`` (0 without simulcast).
        var paddingTargetKbps = 0
        var congestionDropping = false
        var statistics = SendPipelineStatistics()
        var encodeDelay: Duration?
        var injectedEncodeDuration: (@Sendable (_ frameIndex: Int) -> Duration?)?

        init(requestedTargetKbps: Int, bitrateRange: ClosedRange<Int>) {
            self.requestedTargetKbps = requestedTargetKbps
            self.bitrateRange = bitrateRange
        }
    }

    /// The configuration the pipeline was created with.
    public let configuration: SendPipelineConfiguration
    /// Changes the pipeline made (key-frame requests, bit-rate and resolution changes, failures); ends at ``stop()``.
    /// Keeps the newest 100 events when not read.
    public let events: AsyncStream<SendPipelineEvent>

    let state: ConditionLock<State>
    let adapter: VideoAdapter
    let sinks: [any EncodedFrameSink]
    let logger: Logger
    let eventContinuation: AsyncStream<SendPipelineEvent>.Continuation
    /// Finished by the encoder thread as its last act, once the sinks are finished and ``events`` has ended.
    private let finished = Completion()

    /// Creates the pipeline and starts its encoder thread.
    ///
    /// - Parameters:
    ///   - configuration: Encoder settings, bit-rate range, output request, rotation and overuse settings.
    ///   - sinks: Where encoded frames go, in this order, on the encoder thread.
    ///   - logger: Where controls and failures are logged.
    /// - Throws: `CaptureError` `invalidArgument` for a bad encoder, simulcast configuration or bit-rate range, or
    ///   the `pthread_create` failure.
    public init(
        configuration: SendPipelineConfiguration = SendPipelineConfiguration(), sinks: [any EncodedFrameSink],
        logger: Logger = Logger(label: "CaptureCall.SendPipeline")
    ) throws(CaptureError) {
        guard configuration.minBitrateKbps >= 1, configuration.maxBitrateKbps >= configuration.minBitrateKbps else {
            throw CaptureError(
                .invalidArgument,
                "bit-rate range \(configuration.minBitrateKbps)…\(configuration.maxBitrateKbps) kbit/s is empty")
        }
        var range = configuration.minBitrateKbps...configuration.maxBitrateKbps
        var paddingTarget = 0
        var simulcast: SimulcastEncoders?
        if let simulcastConfiguration = configuration.simulcast {
            // Until the first frame gives the input size, the range of the largest size the adapter may give.
            if let request = configuration.outputRequest, request.width > 0, request.height > 0 {
                let size = Dimensions(width: request.width, height: request.height)
                let layout = SimulcastLayout(
                    input: size, maxLayers: simulcastConfiguration.maxLayers,
                    temporalLayers: simulcastConfiguration.temporalLayers)
                range = layout.bitrateRange
                paddingTarget = layout.paddingTargetKbps
            }
            simulcast = try SimulcastEncoders(
                configuration: simulcastConfiguration, encoder: configuration.encoder,
                initialKbps: Self.clamp(configuration.encoder.targetBitrateKbps, to: range))
        }
        var encoderConfiguration = configuration.encoder
        encoderConfiguration.targetBitrateKbps = Self.clamp(encoderConfiguration.targetBitrateKbps, to: range)
        let encoder = try VP8Encoder(configuration: encoderConfiguration)
        self.configuration = configuration
        self.sinks = sinks
        self.logger = logger
        adapter = VideoAdapter(poolCapacity: 4)
        if let request = configuration.outputRequest {
            adapter.adaptOutputFormat(width: request.width, height: request.height, fps: request.fps)
        }
        var initial = State(requestedTargetKbps: configuration.encoder.targetBitrateKbps, bitrateRange: range)
        initial.statistics.currentTargetKbps = encoderConfiguration.targetBitrateKbps
        initial.paddingTargetKbps = paddingTarget
        state = ConditionLock(initial)
        (events, eventContinuation) = AsyncStream.makeStream(
            of: SendPipelineEvent.self, bufferingPolicy: .bufferingNewest(100))
        let worker = EncoderWorker(
            configuration: configuration, encoder: encoder, simulcast: simulcast, state: state, adapter: adapter,
            sinks: sinks, logger: logger, events: eventContinuation, finished: finished)
        try EncoderWorker.start(worker)
    }

    deinit {
        // The encoder thread holds what it needs (not the pipeline): told to stop, it finishes the sinks itself.
        requestStop()
    }

    /// Counters so far.
    public var statistics: SendPipelineStatistics { state.withLock { $0.statistics } }

    /// The current output request of the video adapter (the configured one, scaled by CPU-overuse and bandwidth steps,
    /// its frame rate lowered by bandwidth steps).
    public var outputRequest: VideoAdapter.OutputFormatRequest? { adapter.request }

    /// The range ``setTargetBitrate(kbps:reason:)`` clamps to, in kbit/s: without simulcast, the configured
    /// ``SendPipelineConfiguration/minBitrateKbps`` … ``SendPipelineConfiguration/maxBitrateKbps``; with simulcast,
    /// that of the current layout (``SimulcastLayout/bitrateRange``: the lowest layer's min … every lower layer's
    /// target plus the top layer's max, libwebrtc's `GetTotalMaxBitrate`). Before the first frame under simulcast, the
    /// layout of ``SendPipelineConfiguration/outputRequest``'s size if there is one, else the configured range.
    ///
    /// A connection reads it to bound its bandwidth estimate; it changes when the input size does (a CPU-overuse step
    /// lowers it).
    public var bitrateRange: ClosedRange<Int> { state.withLock { $0.bitrateRange } }

    /// The rate, kbit/s, a connection should pad its sending up to (at most its estimate): with simulcast, the current
    /// layout's ``SimulcastLayout/paddingTargetKbps`` (every lower layer's target and 1.2 × the top layer's minimum),
    /// so that the estimate can grow until every layer is on; 0 without simulcast. Changes with the layout, like
    /// ``bitrateRange``. Thread-safe.
    public var paddingTargetKbps: Int { state.withLock { $0.paddingTargetKbps } }

    /// Makes the next encoded frame a key frame: on every layer, or with `simulcastIndex` on that simulcast layer
    /// only (0 is the lowest resolution; without simulcast the one stream is layer 0).
    ///
    /// Counted by reason and reported on ``events`` whatever the index. A layer the current layout does not have
    /// (a CPU-overuse step dropped it, or an index out of range) makes no key frame; neither does a layer that is
    /// off, but a layer starts with a key frame whenever the allocator turns it back on.
    ///
    /// Thread-safe; applied before the next frame is encoded.
    ///
    /// - Parameters:
    ///   - reason: Why (counted in ``SendPipelineStatistics/keyFramesRequested``).
    ///   - simulcastIndex: The layer a PLI or FIR named by its SSRC, or `nil` for every layer.
    public func requestKeyFrame(reason: KeyFrameRequestReason, simulcastIndex: Int? = nil) {
        let mask: UInt32 =
            switch simulcastIndex {
            case nil: .max
            case let index? where (0..<32).contains(index): 1 << UInt32(index)
            default: 0
            }
        let ignored = state.withLock { state -> Bool in
            guard !state.stopping else { return true }
            state.keyFrameLayers |= mask
            state.statistics.keyFramesRequested[reason, default: 0] += 1
            return false
        }
        guard !ignored else { return }
        if let simulcastIndex {
            logger.info(
                "key frame requested", metadata: ["reason": "\(reason.rawValue)", "layer": "\(simulcastIndex)"])
        } else {
            logger.info("key frame requested", metadata: ["reason": "\(reason.rawValue)"])
        }
        eventContinuation.yield(.keyFrameRequested(reason))
    }

    /// Sets the encoder's target bit rate, clamped to ``bitrateRange``; the encoder thread applies it before the next
    /// frame (`vpx_codec_enc_config_set`, no key frame). The resolution and frame rate then follow it (see
    /// ``QualityScalerConfiguration``); only a size change makes a key frame. Thread-safe, cheap: a connection may call
    /// it several times a second.
    ///
    /// With simulcast the target is shared among the layers by a ``SimulcastRateAllocator``: each layer's encoder
    /// gets its share (and its temporal split); a layer whose share is 0 is not encoded at all, and a layer turned
    /// back on starts with a key frame. A later layout (a new input size) clamps the last requested target to its
    /// own range.
    ///
    /// - Returns: The bit rate applied, in kbit/s.
    @discardableResult
    public func setTargetBitrate(kbps: Int, reason: BitrateChangeReason) -> Int {
        let (applied, changed) = state.withLock { state -> (Int, Bool) in
            let applied = Self.clamp(kbps, to: state.bitrateRange)
            guard !state.stopping else { return (applied, false) }
            state.requestedTargetKbps = kbps
            guard state.statistics.currentTargetKbps != applied else { return (applied, false) }
            state.statistics.currentTargetKbps = applied
            state.statistics.bitrateChanges += 1
            state.pendingBitrateKbps = applied
            return (applied, true)
        }
        if changed {
            logger.info(
                "target bit rate changed",
                metadata: ["requested": "\(kbps)", "applied": "\(applied)", "reason": "\(reason.rawValue)"])
            eventContinuation.yield(.bitrateChanged(requestedKbps: kbps, appliedKbps: applied, reason: reason))
        }
        return applied
    }

    /// Turns frame dropping for congestion on or off: while on, the encoder thread drops every frame it takes before
    /// encoding it (counted in ``SendPipelineStatistics/droppedForCongestion``). A connection turns it on while its
    /// pacer queue or congestion window is full, and off when it drains.
    ///
    /// Thread-safe; takes effect from the next frame the encoder takes. Logged and reported on ``events`` when it
    /// changes.
    ///
    /// ## Where this differs from libwebrtc
    /// libwebrtc's congestion-window pushback drops frames in `VideoStreamEncoder` from a fill level it is fed; here the
    /// connection decides and only the on/off switch crosses over.
    public func setCongestionFrameDropping(_ drop: Bool) {
        let changed = state.withLock { state -> Bool in
            guard !state.stopping, state.congestionDropping != drop else { return false }
            state.congestionDropping = drop
            return true
        }
        guard changed else { return }
        logger.info("congestion frame dropping \(drop ? "on" : "off")")
        eventContinuation.yield(.congestionFrameDropping(drop))
    }

    /// Stops the pipeline: drops any waiting frame and tells the encoder thread to end. That thread delivers the frame
    /// it is encoding to the sinks, finishes every sink, ends ``events`` and, as its last act, resumes this call.
    /// Idempotent (every call returns once the thread has ended); frames that arrive later are ignored.
    ///
    /// ## Threading
    /// The wait holds no thread: call it from any task.
    public func stop() async {
        requestStop()
        await finished.wait()
    }

    /// Marks the pipeline stopping and wakes the encoder thread; the first call logs whether a frame was waiting.
    private func requestStop() {
        // Signalling: the encoder thread waits for a frame or for `stopping`.
        let dropped = state.withLock(signalling: true) { state -> Bool? in
            guard !state.stopping else { return nil }
            state.stopping = true
            defer { state.pending = nil }
            return state.pending != nil
        }
        if let dropped { logger.debug("send pipeline stopping", metadata: ["waiting frame dropped": "\(dropped)"]) }
    }

    // MARK: Test hooks

    /// A delay the encoder thread sleeps before each encode (counted in the encode time), to simulate a slow encoder.
    package var encodeDelayForTesting: Duration? {
        get { state.withLock { $0.encodeDelay } }
        set { state.withLock { $0.encodeDelay = newValue } }
    }

    /// Replaces the measured encode duration fed to the overuse detector: called with the index of each frame the
    /// encoder takes (0, 1, …); `nil` from it keeps the measured duration.
    package func injectEncodeDurationsForTesting(_ duration: (@Sendable (_ frameIndex: Int) -> Duration?)?) {
        state.withLock { $0.injectedEncodeDuration = duration }
    }

    // MARK: CameraVideoCapturerDelegate

    /// Adapts the frame and puts it in the encoder's mailbox (replacing a frame still waiting there).
    public func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let running = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.statistics.framesReceived += 1
            return true
        }
        guard running else { return }
        let adapted: VideoFrameBuffer
        do throws(CaptureError) {
            switch try adapter.adapt(frame.buffer, timestampNs: frame.timestampNs) {
            case .frame(let buffer):
                adapted = buffer
            case .dropped:
                state.withLock { $0.statistics.droppedByAdapter += 1 }
                return
            }
        } catch {
            Self.reportFailure(error, stage: "adapt", state: state, logger: logger, events: eventContinuation)
            return
        }
        let output = VideoFrame(
            buffer: adapted, rotation: frame.rotation, timestampNs: frame.timestampNs,
            sequenceNumber: frame.sequenceNumber)
        state.withLock(signalling: true) { state in  // the encoder thread waits for `pending`
            guard !state.stopping else { return }
            let interval = state.lastTimestampNs.map { Int64(clamping: frame.timestampNs) &- Int64(clamping: $0) }
            state.lastTimestampNs = frame.timestampNs
            if state.pending != nil { state.statistics.droppedAtEncoderQueue += 1 }
            state.pending = PendingFrame(
                frame: output, intervalNs: interval ?? 0, inputDimensions: frame.buffer.dimensions)
        }
    }

    /// `kbps` within `range`.
    static func clamp(_ kbps: Int, to range: ClosedRange<Int>) -> Int {
        min(max(kbps, range.lowerBound), range.upperBound)
    }

    /// Counts a failed frame, logs the first of a run and reports it on ``events``.
    static func reportFailure(
        _ error: CaptureError, stage: String, state: ConditionLock<State>, logger: Logger,
        events: AsyncStream<SendPipelineEvent>.Continuation
    ) {
        let count = state.withLock { state -> Int in
            state.statistics.encodeFailures += 1
            return state.statistics.encodeFailures
        }
        if count == 1 || count.isMultiple(of: 100) {
            logger.warning("send pipeline frame failed", metadata: ["stage": "\(stage)", "error": "\(error)"])
        }
        events.yield(.encodeFailed(error))
    }
}
