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
        var keyFrameRequested = false
        var pendingBitrateKbps: Int?
        var congestionDropping = false
        var statistics = SendPipelineStatistics()
        var encodeDelay: Duration?
        var injectedEncodeDuration: (@Sendable (_ frameIndex: Int) -> Duration?)?
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
    /// - Throws: `CaptureError` `invalidArgument` for a bad encoder configuration or bit-rate range, or the
    ///   `pthread_create` failure.
    public init(
        configuration: SendPipelineConfiguration = SendPipelineConfiguration(), sinks: [any EncodedFrameSink],
        logger: Logger = Logger(label: "CaptureCall.SendPipeline")
    ) throws(CaptureError) {
        guard configuration.minBitrateKbps >= 1, configuration.maxBitrateKbps >= configuration.minBitrateKbps else {
            throw CaptureError(
                .invalidArgument,
                "bit-rate range \(configuration.minBitrateKbps)…\(configuration.maxBitrateKbps) kbit/s is empty")
        }
        var encoderConfiguration = configuration.encoder
        encoderConfiguration.targetBitrateKbps = min(
            max(encoderConfiguration.targetBitrateKbps, configuration.minBitrateKbps), configuration.maxBitrateKbps)
        let encoder = try VP8Encoder(configuration: encoderConfiguration)
        self.configuration = configuration
        self.sinks = sinks
        self.logger = logger
        adapter = VideoAdapter(poolCapacity: 4)
        if let request = configuration.outputRequest {
            adapter.adaptOutputFormat(width: request.width, height: request.height, fps: request.fps)
        }
        var initial = State()
        initial.statistics.currentTargetKbps = encoderConfiguration.targetBitrateKbps
        state = ConditionLock(initial)
        (events, eventContinuation) = AsyncStream.makeStream(
            of: SendPipelineEvent.self, bufferingPolicy: .bufferingNewest(100))
        let worker = EncoderWorker(
            configuration: configuration, encoder: encoder, state: state, adapter: adapter, sinks: sinks,
            logger: logger, events: eventContinuation, finished: finished)
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

    /// Makes the next encoded frame a key frame.
    public func requestKeyFrame(reason: KeyFrameRequestReason) {
        let ignored = state.withLock { state -> Bool in
            guard !state.stopping else { return true }
            state.keyFrameRequested = true
            state.statistics.keyFramesRequested[reason, default: 0] += 1
            return false
        }
        guard !ignored else { return }
        logger.info("key frame requested", metadata: ["reason": "\(reason.rawValue)"])
        eventContinuation.yield(.keyFrameRequested(reason))
    }

    /// Sets the encoder's target bit rate, clamped to the configured range; the encoder thread applies it before
    /// the next frame (`vpx_codec_enc_config_set`, no key frame). The resolution and frame rate then follow it (see
    /// ``QualityScalerConfiguration``); only a size change makes a key frame. Thread-safe, cheap: a connection may call
    /// it several times a second.
    ///
    /// - Returns: The bit rate applied, in kbit/s.
    @discardableResult
    public func setTargetBitrate(kbps: Int, reason: BitrateChangeReason) -> Int {
        let applied = min(max(kbps, configuration.minBitrateKbps), configuration.maxBitrateKbps)
        let changed = state.withLock { state -> Bool in
            guard !state.stopping, state.statistics.currentTargetKbps != applied else { return false }
            state.statistics.currentTargetKbps = applied
            state.statistics.bitrateChanges += 1
            state.pendingBitrateKbps = applied
            return true
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
