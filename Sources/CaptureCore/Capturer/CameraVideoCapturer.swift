public import CoreMetrics
public import Logging

/// Captures frames from a camera and hands them, timestamped and tagged with their rotation, to a delegate and to
/// asynchronous streams: the Linux counterpart of WebRTC's `RTCCameraVideoCapturer`.
///
/// ```swift
/// let capturer = CameraVideoCapturer(delegate: self, provider: .system)
/// try await capturer.startCapture(target: Dimensions(width: 1280, height: 720))
/// capturer.deviceOrientation = .portrait
/// …
/// await capturer.stopCapture()
/// ```
///
/// The capturer lists the provider's cameras, picks one by position, a format by nearest size (then frame rate, then
/// pixel-format preference) and a frame rate (the format's highest up to a limit, 30 by default) — see
/// ``CaptureRules`` — and delivers NV12 (default) or I420 frames from pooled buffers. All members are thread-safe.
public final class CameraVideoCapturer: Sendable {
    private struct Stream {
        var continuation: AsyncStream<VideoFrame>.Continuation
        var drops: DropCounter
    }

    /// A session as the lifecycle holds it: compared by identity.
    private struct SessionRef: Sendable, Equatable {
        let session: any CaptureSession
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.session === rhs.session }
    }

    private typealias Lifecycle = CaptureLifecycle<SessionRef, Task<Void, Never>>

    private struct State {
        weak var delegate: (any CameraVideoCapturerDelegate)?
        /// The phase, its session, generation and watcher: what start, stop, switch and the sessions' ends do.
        var lifecycle = Lifecycle()
        var orientation: DeviceOrientation = .unknown
        var orientationRotation: VideoRotation = .degrees0
        var position: CameraPosition?
        var sensorRotation: VideoRotation = .degrees0
        var output: OutputPixelFormat = .nv12
        var bufferCount = 4
        var paced = true
        var lastTimestamp: UInt64?
        var sequence: UInt64 = 0
        var statistics = CaptureStatistics()
        var metricsFactory: any MetricsFactory = MetricsSystem.factory
        var metrics: CapturerMetrics?
        var streams: [UInt64: Stream] = [:]
        var nextStreamID: UInt64 = 0
        var automaticallyResumes = false

        var frameRotation: VideoRotation { orientationRotation.adding(sensorRotation) }
    }

    /// The cameras this capturer can use.
    public let provider: CameraProvider
    private let logger: Logger
    private let state: Locked<State>

    /// Creates a capturer. `provider` lists the cameras (``CameraProvider/builtIn`` has the synthetic camera only;
    /// the V4L2 module's `CameraProvider.system` has the real cameras, with the synthetic one as a fallback).
    public init(
        delegate: (any CameraVideoCapturerDelegate)? = nil, provider: CameraProvider = .builtIn,
        logger: Logger = Logger(label: "CameraCapture")
    ) {
        var initial = State()
        initial.delegate = delegate
        self.provider = provider
        self.logger = logger
        self.state = Locked(initial)
    }

    // MARK: Settings and status

    /// Receives frames and events (held weakly).
    public var delegate: (any CameraVideoCapturerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The cameras the provider offers now.
    public func captureDevices() -> [CaptureDevice] { provider.devices() }

    /// The current state.
    public var captureState: CaptureState { state.withLock { $0.lifecycle.state } }

    /// What the running (or last) capture uses.
    public var configuration: CaptureConfiguration? { state.withLock { $0.lifecycle.configuration } }

    /// Counters since the last start.
    public var statistics: CaptureStatistics { state.withLock { $0.statistics } }

    /// Where the capturer's swift-metrics metrics (component `capturer`, see ``CaptureMetricsScope``) are made:
    /// `MetricsSystem.factory` (a no-op until the app bootstraps a backend) unless set; takes effect at the next
    /// start.
    public var metricsFactory: any MetricsFactory {
        get { state.withLock { $0.metricsFactory } }
        set { state.withLock { $0.metricsFactory = newValue } }
    }

    /// The orientation of the device holding the camera; sets the rotation of the following frames
    /// (``CaptureRules/rotation(for:position:previous:)``). Face up, face down and unknown keep the previous rotation.
    public var deviceOrientation: DeviceOrientation {
        get { state.withLock { $0.orientation } }
        set {
            state.withLock { state in
                state.orientation = newValue
                if let position = state.position {
                    state.orientationRotation = CaptureRules.rotation(
                        for: newValue, position: position, previous: state.orientationRotation)
                }
            }
        }
    }

    /// The rotation carried by the frames now: the orientation-derived rotation plus the sensor's mounting rotation.
    public var rotation: VideoRotation { state.withLock { $0.frameRotation } }

    /// The layout of delivered frames (NV12 by default); takes effect at the next start.
    public var outputPixelFormat: OutputPixelFormat {
        get { state.withLock { $0.output } }
        set { state.withLock { $0.output = newValue } }
    }

    /// How many driver buffers a V4L2 capture queues (4 by default; fewer means less latency); next start.
    public var bufferCount: Int {
        get { state.withLock { $0.bufferCount } }
        set { state.withLock { $0.bufferCount = min(max(newValue, 2), 32) } }
    }

    /// Whether the synthetic, recorded and file cameras pace frames at the frame rate (default), or deliver them as
    /// fast as the delegate takes them (for throughput runs); next start.
    public var isPaced: Bool {
        get { state.withLock { $0.paced } }
        set { state.withLock { $0.paced = newValue } }
    }

    /// Whether a capture whose camera is unplugged waits for the same camera (same ``CaptureDevice/id``) to return
    /// and resumes in the same format (`true`), or ends with `deviceDisconnected` (`false`, the default).
    ///
    /// While it waits, ``captureState`` is ``CaptureState/paused(_:)``, the delegate has heard
    /// ``CameraVideoCapturerDelegate/capturer(_:didPauseWith:)``, and the frame streams stay open. The capturer
    /// watches the provider's ``CameraProvider/deviceEvents()`` (backends that cannot watch are checked every
    /// 500 ms) and, when the camera is back, starts it again with the format, size and rate of the interrupted
    /// capture; the delegate then hears ``CameraVideoCapturerDelegate/capturer(_:didResumeWith:)``. Timestamps stay
    /// strictly increasing across the gap and sequence numbers go on. A camera that returns without that format is
    /// not resumed (the capturer keeps waiting and logs why). ``stopCapture()`` while paused ends the capture
    /// cleanly. Takes effect at the next disconnection.
    public var automaticallyResumes: Bool {
        get { state.withLock { $0.automaticallyResumes } }
        set { state.withLock { $0.automaticallyResumes = newValue } }
    }

    /// What the rules pick on `device` for `request`, among the formats its backend can convert.
    public func selectFormat(on device: CaptureDevice, for request: FormatRequest) -> FormatSelection? {
        CaptureRules.selectFormat(from: device.formats, for: request) { provider.canConvert($0, on: device) }
    }

    /// The device the rules pick for `position`: the first at that position, else the first; devices with no
    /// convertible format are skipped.
    public func selectDevice(position: CameraPosition = .front) -> CaptureDevice? {
        let usable = captureDevices().filter { device in
            device.formats.contains { provider.canConvert($0.pixelFormat, on: device) }
        }
        return CaptureRules.selectDevice(from: usable, position: position) { _ in true }
    }

    // MARK: Frames as a stream

    /// Frames as an asynchronous sequence that keeps only the newest `bufferingNewest` frames when the consumer is
    /// slow (counting what it dropped) and ends when capture stops. Create it before or after starting.
    public func frames(bufferingNewest: Int = 2) -> VideoFrameStream {
        let (stream, continuation) = AsyncStream.makeStream(
            of: VideoFrame.self, bufferingPolicy: .bufferingNewest(max(1, bufferingNewest)))
        let drops = DropCounter()
        let id = state.withLock { state in
            defer { state.nextStreamID += 1 }
            state.streams[state.nextStreamID] = Stream(continuation: continuation, drops: drops)
            return state.nextStreamID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return VideoFrameStream(stream: stream, drops: drops)
    }

    // MARK: Start and stop

    /// Starts capturing from `device` in `format` at `fps`. For a format with a size range, `dimensions` picks the
    /// size (default: the size nearest 1280x720 in the range).
    ///
    /// - Returns: what the device granted (the frame rate may differ from `fps`).
    /// - Throws: ``CaptureError``: `invalidState` when already capturing or when ``stopCapture()`` ran before the
    ///   start completed, `formatNotSupported` for a format the device does not list, or the backend's error (device
    ///   not found, busy, permission denied, …).
    ///
    /// A session that started and then ended on its own before this call returned (a file that ends or fails after
    /// its first frames, a camera unplugged at once) is a successful start: the call returns the configuration, and
    /// the end is reported once, as it is at any other time, through the delegate's
    /// ``CameraVideoCapturerDelegate/capturer(_:didStopWith:)``, the end of the frame streams and ``captureState``
    /// (`.failed` with the real error, or `.idle` at a clean end). Throwing here instead would report the same
    /// failure twice, and would call frames the delegate has already received the output of a failed start.
    @discardableResult
    public func startCapture(
        device: CaptureDevice, format: CaptureFormat, fps: Double, dimensions: Dimensions? = nil
    ) async throws(CaptureError) -> CaptureConfiguration {
        guard let backend = provider.backend(for: device) else {
            throw CaptureError(.deviceNotFound, "no backend serves \(device.kind.rawValue) devices", device: device.id)
        }
        guard device.formats.contains(format) else {
            throw CaptureError(.formatNotSupported, "\(device.name) does not offer \(format)", device: device.id)
        }
        guard backend.canConvert(format.pixelFormat) else {
            throw CaptureError(
                .noUsableFormat, "frames in \(format.pixelFormat) cannot be converted", device: device.id)
        }
        guard fps.isFinite, fps > 0 else {
            throw CaptureError(.invalidArgument, "frame rate must be positive, not \(fps)", device: device.id)
        }
        let size =
            dimensions.map { format.size.nearest(to: $0) }
            ?? format.size.nearest(to: Dimensions(width: 1280, height: 720))
        if let dimensions, !format.size.contains(dimensions) {
            throw CaptureError(.formatNotSupported, "\(format) does not offer \(dimensions)", device: device.id)
        }
        return try await start(device: device, format: format, size: size, fps: fps)
    }

    /// Starts capturing with the rules: picks the device at `position` (else the first), the format nearest
    /// `target`, and the frame rate up to `fpsLimit`.
    @discardableResult
    public func startCapture(
        target: Dimensions, position: CameraPosition = .front, fpsLimit: Double = 30,
        preference: [PixelFormat] = PixelFormat.defaultPreference
    ) async throws(CaptureError) -> CaptureConfiguration {
        // Listing cameras asks each node with ioctls, which a slow device can hold up: off the cooperative pool.
        let selected = await BlockingExecutor.shared.run { [self] in selectDevice(position: position) }
        guard let device = selected else {
            throw CaptureError(.deviceNotFound, "no camera with a usable format was found")
        }
        return try await startCapture(device: device, target: target, fpsLimit: fpsLimit, preference: preference)
    }

    /// Starts capturing from `device`, with the rules picking the format nearest `target` and the frame rate.
    @discardableResult
    public func startCapture(
        device: CaptureDevice, target: Dimensions, fpsLimit: Double = 30,
        preference: [PixelFormat] = PixelFormat.defaultPreference
    ) async throws(CaptureError) -> CaptureConfiguration {
        let request = FormatRequest(target: target, fpsLimit: fpsLimit, preference: preference)
        guard let selection = selectFormat(on: device, for: request) else {
            throw CaptureError(
                .noUsableFormat, "\(device.name) offers no format the capturer can convert",
                device: device.id)
        }
        return try await startCapture(
            device: device, format: selection.format, fps: selection.fps, dimensions: selection.dimensions)
    }

    private func start(
        device: CaptureDevice, format: CaptureFormat, size: Dimensions, fps: Double
    ) async throws(CaptureError) -> CaptureConfiguration {
        let plan = Lifecycle.SessionPlan(device: device, format: format, dimensions: size, fps: fps)
        let metrics = CapturerMetrics(deviceID: device.id, factory: state.withLock { $0.metricsFactory })
        let actions = try state.withLock { state throws(CaptureError) -> [Lifecycle.Action] in
            let actions = try state.lifecycle.start(plan)
            state.statistics = CaptureStatistics()
            state.metrics = metrics
            state.lastTimestamp = nil
            state.sequence = 0
            return actions
        }
        switch await run(actions) {
        case .running(let configuration):
            logger.debug(
                "capture started",
                metadata: [
                    "device": "\(device.id)", "format": "\(format.pixelFormat)",
                    "size": "\(configuration.granted.dimensions)", "fps": "\(configuration.granted.fps)",
                ])
            return configuration
        case .failed(let error):
            logger.debug("capture start failed", metadata: ["device": "\(device.id)", "error": "\(error)"])
            throw error
        case .superseded, nil:
            throw CaptureError(.invalidState, "capture was stopped while it was starting", device: device.id)
        }
    }

    /// Stops capturing and releases the device. Returns once no more frames will be delivered; the frame streams end.
    /// Calling it when idle does nothing; after a failure it returns the capturer to idle. Concurrent calls all return
    /// once the one stop they share has finished; the delegate hears of it once.
    public func stopCapture() async {
        await run(state.withLock { $0.lifecycle.stop() })
    }
}

// MARK: Switching cameras

extension CameraVideoCapturer {
    /// Moves a running (or paused) capture to `device`, as WebRTC's `switchCamera` does, without ending it: the
    /// delegate and the frame streams carry on, timestamps stay strictly increasing and sequence numbers go on, and
    /// the rotation follows the new camera's position and sensor rotation.
    ///
    /// The format is chosen on `device` by the rules for the size and frame rate the capture asked for (override
    /// with `target` and `fpsLimit`). The current camera is stopped first (its capture thread finished), so once this
    /// returns no frame of it arrives; the new camera's first frame follows as soon as it delivers one.
    ///
    /// - Returns: what the new camera granted.
    /// - Throws: ``CaptureError``: `invalidState` when not capturing (or when a stop or another switch took over),
    ///   `noUsableFormat` when `device` offers nothing the capturer can convert, or the new camera's start error. A
    ///   failed switch goes back to the previous camera; if that fails too the capture ends with the switch's error
    ///   (``CameraVideoCapturerDelegate/capturer(_:didStopWith:)``, the frame streams end).
    @discardableResult
    public func switchCamera(
        to device: CaptureDevice, target: Dimensions? = nil, fpsLimit: Double? = nil,
        preference: [PixelFormat] = PixelFormat.defaultPreference
    ) async throws(CaptureError) -> CaptureConfiguration {
        guard let previous = state.withLock({ $0.lifecycle.switchable }) else {
            throw CaptureError(.invalidState, "switchCamera needs a running capture", device: device.id)
        }
        let request = FormatRequest(
            target: target ?? previous.requestedDimensions, fpsLimit: fpsLimit ?? previous.requestedFPS,
            preference: preference)
        guard let selection = selectFormat(on: device, for: request) else {
            throw CaptureError(
                .noUsableFormat, "\(device.name) offers no format the capturer can convert", device: device.id)
        }
        let plan = Lifecycle.SessionPlan(
            device: device, format: selection.format, dimensions: selection.dimensions, fps: selection.fps)
        // From here on the old session's frames and end are ignored; it is stopped (its capture thread finished, so
        // a frame it was delivering has been delivered) before the new one opens.
        let actions = try state.withLock { state throws(CaptureError) in try state.lifecycle.switchTo(plan) }
        switch await run(actions) {
        case .running(let configuration):
            logger.debug("switched camera", metadata: ["device": "\(device.id)"])
            return configuration
        case .failed(let error):
            logger.info("switch failed; back to the previous camera", metadata: ["error": "\(error)"])
            throw error
        case .superseded, nil:
            throw CaptureError(.invalidState, "a stop or another switch took over", device: device.id)
        }
    }
}

// MARK: Carrying out the lifecycle's actions

extension CameraVideoCapturer {
    /// Carries out `actions` in order, waiting where they say to; returns the outcome of the last session opened.
    @discardableResult
    private func run(_ actions: [Lifecycle.Action]) async -> Lifecycle.Outcome? {
        var outcome: Lifecycle.Outcome?
        for action in actions {
            switch action {
            case .open(let plan, let generation, let after):
                outcome = await open(plan, generation: generation, after: after)
            case .stop(let ref):
                await stopAndReport(ref)
            case .cancel(let watcher):
                // A watcher's resumption under way stops its superseded session before the watcher returns.
                watcher.cancel()
                await watcher.value
            case .finishStop(let done):
                await run(state.withLock { $0.lifecycle.stopFinished(done) })
            case .wait(let done):
                await done.wait()
            case .release, .watch, .notify, .finishStreams, .complete:
                perform([action])
            }
        }
        return outcome
    }

    /// Carries out `actions` without waiting (the caller may be a capture thread): what needs waiting runs in a task.
    private func perform(_ actions: [Lifecycle.Action]) {
        for action in actions {
            switch action {
            case .release(let ref):
                // Released in a task: the stop returns when the capture thread, possibly the caller, has finished.
                // The session is stopped even if the capturer is gone meanwhile.
                Task { [weak self] in
                    await ref.session.stop()
                    self?.state.withLock { $0.lifecycle.released(ref) }
                }
            case .watch(let configuration, let since):
                let watcher = Task { [weak self] () -> Void in
                    await self?.watchForReturn(of: configuration, since: since)
                }
                perform(state.withLock { $0.lifecycle.watcherStarted(watcher, since: since) })
            case .cancel(let watcher):
                watcher.cancel()
            case .notify(let notice):
                notify(notice)
            case .finishStreams:
                let streams = state.withLock { state in
                    defer { state.streams = [:] }
                    return state.streams
                }
                for stream in streams.values { stream.continuation.finish() }
            case .complete(let done):
                done.finish()
            case .open, .stop, .finishStop, .wait:
                Task { [weak self] in await self?.run([action]) }
            }
        }
    }

    /// Stops the session and reports it released.
    private func stopAndReport(_ ref: SessionRef) async {
        await ref.session.stop()
        state.withLock { $0.lifecycle.released(ref) }
    }

    private func notify(_ notice: Lifecycle.Notice) {
        let delegate = state.withLock { $0.delegate }
        switch notice {
        case .stopped(nil):
            logger.debug("capture stopped")
            delegate?.capturer(self, didStopWith: nil)
        case .stopped(let error?):
            logger.info("capture failed", metadata: ["error": "\(error)"])
            delegate?.capturer(self, didStopWith: error)
        case .paused(let error):
            logger.info("camera gone; waiting for it to return", metadata: ["error": "\(error)"])
            delegate?.capturer(self, didPauseWith: error)
        case .resumed(let configuration):
            logger.info("camera returned; capture resumed", metadata: ["device": "\(configuration.device.id)"])
            delegate?.capturer(self, didResumeWith: configuration)
        }
    }

    /// Opens a session for `plan` as the attempt of `generation`: the one place a session is prepared, for a start, a
    /// resumption and a switch. Waits for the sessions in `after` to release their cameras first. Returns the
    /// attempt's outcome once what followed from it (a switch going back to its previous camera) is done.
    private func open(
        _ plan: Lifecycle.SessionPlan, generation: UInt64, after: [SessionRef]
    ) async -> Lifecycle.Outcome {
        for ref in after { await stopAndReport(ref) }
        let device = plan.device
        guard let backend = provider.backend(for: device) else {
            let error = CaptureError(
                .deviceNotFound, "no backend serves \(device.kind.rawValue) devices", device: device.id)
            return await report(
                state.withLock { $0.lifecycle.sessionFailed(nil, generation: generation, error: error) })
        }
        let prepared = state.withLock { state -> CaptureSessionConfiguration? in
            guard state.lifecycle.isOpening(generation: generation) else { return nil }
            state.position = device.position
            state.sensorRotation = device.sensorRotation
            state.orientationRotation = CaptureRules.rotation(
                for: state.orientation, position: device.position, previous: state.orientationRotation)
            return CaptureSessionConfiguration(
                device: device, format: plan.format, dimensions: plan.dimensions, fps: plan.fps, output: state.output,
                bufferCount: state.bufferCount, paced: state.paced)
        }
        guard let configuration = prepared else { return .superseded }
        let ref: SessionRef
        do throws(CaptureError) {
            ref = SessionRef(session: try backend.makeSession(configuration, events: sessionEvents(generation)))
        } catch {
            return await report(
                state.withLock { $0.lifecycle.sessionFailed(nil, generation: generation, error: error) })
        }
        let made = state.withLock { $0.lifecycle.sessionMade(ref, generation: generation) }
        if let outcome = made.outcome {
            await run(made.actions)
            return outcome
        }
        do throws(CaptureError) {
            try await ref.session.start()
        } catch {
            return await report(
                state.withLock { $0.lifecycle.sessionFailed(ref, generation: generation, error: error) })
        }
        let captured = CaptureConfiguration(
            device: device, format: plan.format, requestedDimensions: plan.dimensions, requestedFPS: plan.fps,
            granted: ref.session.granted, output: configuration.output)
        return await report(
            state.withLock { $0.lifecycle.sessionStarted(ref, generation: generation, configuration: captured) })
    }

    /// Carries out a report's actions and returns its outcome.
    private func report(_ step: Lifecycle.Step) async -> Lifecycle.Outcome {
        await run(step.actions)
        return step.outcome ?? .superseded
    }
}

// MARK: Events from the session (capture thread)

extension CameraVideoCapturer {
    private func sessionEvents(_ generation: UInt64) -> CaptureSessionEvents {
        CaptureSessionEvents(
            frame: { [weak self] buffer, timestamp in self?.deliver(buffer, timestamp, generation) },
            dropped: { [weak self] reason in self?.dropped(reason, generation) },
            ended: { [weak self] error in self?.ended(error, generation) },
            skipped: { [weak self] count in self?.skipped(count, generation) })
    }

    private func deliver(_ buffer: VideoFrameBuffer, _ timestamp: UInt64, _ generation: UInt64) {
        let taken = state.withLock {
            state -> (VideoFrame, (any CameraVideoCapturerDelegate)?, [UInt64: Stream], CapturerMetrics?)? in
            guard state.lifecycle.delivers(generation: generation) else { return nil }
            state.statistics.framesCaptured += 1
            var timestamp = timestamp
            let adjusted = state.lastTimestamp.map { timestamp <= $0 } ?? false
            if adjusted, let last = state.lastTimestamp {
                timestamp = last + 1
                state.statistics.timestampsAdjusted += 1
            }
            state.metrics?.frameCaptured(timestampAdjusted: adjusted)
            state.lastTimestamp = timestamp
            let frame = VideoFrame(
                buffer: buffer, rotation: state.frameRotation, timestampNs: timestamp, sequenceNumber: state.sequence)
            state.sequence += 1
            state.statistics.framesDelivered += 1
            return (frame, state.delegate, state.streams, state.metrics)
        }
        guard let (frame, delegate, streams, metrics) = taken else { return }
        // A driver may stamp a frame slightly ahead of the clock (vivid stamps the ideal end of exposure).
        metrics?.frameDelivered(
            latencyNs: MonotonicClock.elapsedNs(from: frame.timestampNs, to: MonotonicClock.nowNs()))
        delegate?.capturer(self, didCapture: frame)
        for stream in streams.values {
            if case .dropped = stream.continuation.yield(frame) { stream.drops.increment() }
        }
    }

    private func dropped(_ reason: FrameDropReason, _ generation: UInt64) {
        let delegate = state.withLock { state -> (any CameraVideoCapturerDelegate)?? in
            guard state.lifecycle.delivers(generation: generation) else { return nil }
            state.statistics.count(reason)
            state.metrics?.frameDropped(reason)
            return .some(state.delegate)
        }
        guard let delegate else { return }
        delegate?.capturer(self, didDropFrameFor: reason)
    }

    private func skipped(_ count: Int, _ generation: UInt64) {
        state.withLock { state in
            guard state.lifecycle.delivers(generation: generation), count > 0 else { return }
            state.statistics.framesSkippedByDevice += count
            state.metrics?.framesSkippedByDevice(count)
        }
    }

    private func ended(_ error: CaptureError?, _ generation: UInt64) {
        let actions = state.withLock { state in
            state.lifecycle.sessionEnded(
                generation: generation, error: error, automaticallyResumes: state.automaticallyResumes)
        }
        if error == nil, !actions.isEmpty { logger.debug("the session reached the end of its source") }
        perform(actions)
    }
}

// MARK: Waiting for a camera to return (automaticallyResumes)

extension CameraVideoCapturer {
    /// While paused: waits for the camera of `configuration` (same id) to be listed again, then resumes with the same
    /// format. Tries at once (it may never have gone from the list), then at every `added` or `changed` event for
    /// that id; a backend that cannot watch its devices is checked every 500 ms. Ends when resumed, stopped or
    /// cancelled.
    private func watchForReturn(of configuration: CaptureConfiguration, since: UInt64) async {
        let id = configuration.device.id
        guard let backend = provider.backend(for: configuration.device) else { return }
        // Watch first, then look: a camera that returns in between is then both listed and reported.
        let events = backend.deviceEvents()
        let listed = { @Sendable in await BlockingExecutor.shared.run { backend.devices().first { $0.id == id } } }
        if let device = await listed(), await resume(on: device, since: since) { return }
        if let events {
            for await event in events where event.kind != .removed && event.device.id == id {
                if await resume(on: event.device, since: since) { return }
            }
        } else {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                guard !Task.isCancelled else { return }
                if let device = await listed(), await resume(on: device, since: since) { return }
            }
        }
    }

    /// One attempt to resume the pause `since` on `device` (the returned camera). Returns whether watching is over
    /// (resumed, or no longer paused).
    private func resume(on device: CaptureDevice, since: UInt64) async -> Bool {
        guard !Task.isCancelled else { return true }
        switch state.withLock({ $0.lifecycle.deviceReturned(device, since: since) }) {
        case .over:
            return true
        case .busy:
            return false
        case .formatMissing:
            logger.warning(
                "the camera returned without the format it captured in; not resuming",
                metadata: ["device": "\(device.id)"])
            return false
        case .attempt(let actions):
            switch await run(actions) {
            case .running, .superseded, nil:
                return true
            case .failed(let error):
                logger.debug("resume attempt failed; still waiting", metadata: ["error": "\(error)"])
                return false
            }
        }
    }
}
