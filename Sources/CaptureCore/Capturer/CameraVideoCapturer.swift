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

    private struct State {
        weak var delegate: (any CameraVideoCapturerDelegate)?
        var phase: CaptureState = .idle
        /// Bumped at every start and stop, so that events from an earlier session are ignored.
        var generation: UInt64 = 0
        var session: (any CaptureSession)?
        var cleanup: Task<Void, Never>?
        /// The stop under way, which concurrent ``stopCapture()`` calls wait for.
        var stopping: Task<Void, Never>?
        var configuration: CaptureConfiguration?
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
        /// While paused: the task that waits for the camera to return and resumes.
        var watcher: Task<Void, Never>?

        var isActive: Bool {
            switch phase {
            case .starting, .running, .paused: true
            default: false
            }
        }

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
    public var captureState: CaptureState { state.withLock { $0.phase } }

    /// What the running (or last) capture uses.
    public var configuration: CaptureConfiguration? { state.withLock { $0.configuration } }

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
        return try await start(backend: backend, device: device, format: format, size: size, fps: fps)
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
        backend: any CameraBackend, device: CaptureDevice, format: CaptureFormat, size: Dimensions, fps: Double
    ) async throws(CaptureError) -> CaptureConfiguration {
        let pendingCleanup = state.withLock { state -> Task<Void, Never>? in
            defer { state.cleanup = nil }
            return state.cleanup
        }
        await pendingCleanup?.value
        let metrics = CapturerMetrics(deviceID: device.id, factory: state.withLock { $0.metricsFactory })

        let prepared = state.withLock { state -> Result<(UInt64, CaptureSessionConfiguration), CaptureError> in
            guard !state.isActive, !(state.phase == .stopping) else {
                return .failure(
                    CaptureError(
                        .invalidState, "capture is \(state.phase); stop it first",
                        device: device.id))
            }
            state.phase = .starting
            state.generation += 1
            state.statistics = CaptureStatistics()
            state.metrics = metrics
            state.lastTimestamp = nil
            state.sequence = 0
            state.position = device.position
            state.sensorRotation = device.sensorRotation
            state.orientationRotation = CaptureRules.rotation(
                for: state.orientation, position: device.position, previous: state.orientationRotation)
            let configuration = CaptureSessionConfiguration(
                device: device, format: format, dimensions: size, fps: fps, output: state.output,
                bufferCount: state.bufferCount, paced: state.paced)
            return .success((state.generation, configuration))
        }
        let (generation, sessionConfiguration) = try prepared.get()

        let events = sessionEvents(generation)
        let session: any CaptureSession
        do throws(CaptureError) {
            session = try backend.makeSession(sessionConfiguration, events: events)
            // A stopCapture that ran since `prepared` found no session to stop; this one is not ours to keep.
            guard adopt(session, generation: generation) else {
                await session.stop()
                throw CaptureError(.invalidState, "capture was stopped while it was starting", device: device.id)
            }
            try await session.start()
        } catch {
            logger.debug("capture start failed", metadata: ["device": "\(device.id)", "error": "\(error)"])
            state.withLock { state in
                guard state.generation == generation else { return }
                state.session = nil
                state.phase = .failed(error)
            }
            throw error
        }
        let configuration = CaptureConfiguration(
            device: device, format: format, requestedDimensions: size, requestedFPS: fps, granted: session.granted,
            output: sessionConfiguration.output)
        let stillOurs = state.withLock { state -> Bool in
            // A later generation means stopCapture (or another start) took over while we were starting.
            guard state.generation == generation else { return false }
            // The session may already have ended on its own (end of file, a read error, a disconnect) after
            // starting: `ended` has moved the phase on and told the delegate and streams the real outcome. The start
            // itself succeeded, so keep that phase and report the configuration the frames were captured with.
            if case .starting = state.phase { state.phase = .running }
            state.configuration = configuration
            return true
        }
        guard stillOurs else {
            await session.stop()
            throw CaptureError(.invalidState, "capture was stopped while it was starting", device: device.id)
        }
        logger.debug(
            "capture started",
            metadata: [
                "device": "\(device.id)", "format": "\(format.pixelFormat)",
                "size": "\(configuration.granted.dimensions)", "fps": "\(configuration.granted.fps)",
            ])
        return configuration
    }

    /// Stops capturing and releases the device. Returns once no more frames will be delivered; the frame streams end.
    /// Calling it when idle does nothing; after a failure it returns the capturer to idle. Concurrent calls all return
    /// once the one stop they share has finished; the delegate hears of it once.
    public func stopCapture() async {
        let pending = state.withLock { state -> Task<Void, Never>? in
            if let stopping = state.stopping { return stopping }
            let cleanup = state.cleanup
            state.cleanup = nil
            switch state.phase {
            case .starting, .running, .paused:
                state.phase = .stopping
                state.generation += 1
                // While starting (or resuming), the session may not exist yet: the start in flight then sees the new
                // generation and stops its session itself.
                let session = state.session
                state.session = nil
                let watcher = state.watcher
                state.watcher = nil
                watcher?.cancel()
                let stopping = Task {
                    await watcher?.value
                    await self.finishStop(session: session, after: cleanup)
                }
                state.stopping = stopping
                return stopping
            case .failed:
                state.phase = .idle
                return cleanup
            case .idle, .stopping:
                return cleanup
            }
        }
        await pending?.value
    }

    /// The second half of ``stopCapture()``, run once per stop however many callers wait for it.
    private func finishStop(session: (any CaptureSession)?, after cleanup: Task<Void, Never>?) async {
        await cleanup?.value
        await session?.stop()
        // No start can begin while the phase is `.stopping`, so the phase and streams are still this stop's.
        let (streams, delegate) = state.withLock { state -> ([UInt64: Stream], (any CameraVideoCapturerDelegate)?) in
            state.phase = .idle
            state.stopping = nil
            defer { state.streams = [:] }
            return (state.streams, state.delegate)
        }
        for stream in streams.values { stream.continuation.finish() }
        logger.debug("capture stopped")
        delegate?.capturer(self, didStopWith: nil)
    }

    // MARK: Events from the session (capture thread)

    /// Makes `session` the capturer's when `generation` is still current; `false` when a stop or a newer start
    /// superseded it meanwhile (the caller then stops it).
    private func adopt(_ session: any CaptureSession, generation: UInt64) -> Bool {
        state.withLock { state in
            guard state.generation == generation else { return false }
            state.session = session
            return true
        }
    }

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
            guard state.generation == generation, state.isActive else { return nil }
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
            guard state.generation == generation, state.isActive else { return nil }
            state.statistics.count(reason)
            state.metrics?.frameDropped(reason)
            return .some(state.delegate)
        }
        guard let delegate else { return }
        delegate?.capturer(self, didDropFrameFor: reason)
    }

    private func skipped(_ count: Int, _ generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.isActive, count > 0 else { return }
            state.statistics.framesSkippedByDevice += count
            state.metrics?.framesSkippedByDevice(count)
        }
    }

    private func ended(_ error: CaptureError?, _ generation: UInt64) {
        if pauseIfResuming(error, generation) { return }
        let taken = state.withLock {
            state -> ((any CaptureSession)?, (any CameraVideoCapturerDelegate)?, [UInt64: Stream])? in
            guard state.generation == generation, state.isActive else { return nil }
            state.phase = error.map { .failed($0) } ?? .idle
            let session = state.session
            state.session = nil
            let streams = state.streams
            state.streams = [:]
            if let session {
                // Release the device in a task: the stop resumes when the capture thread, the one calling us, has finished.
                state.cleanup = Task { await session.stop() }
            }
            return (session, state.delegate, streams)
        }
        guard let (_, delegate, streams) = taken else { return }
        if let error {
            logger.info("capture failed", metadata: ["error": "\(error)"])
        } else {
            logger.debug("capture reached the end of its source")
        }
        for stream in streams.values { stream.continuation.finish() }
        delegate?.capturer(self, didStopWith: error)
    }
}

// MARK: Pause and resume (automaticallyResumes)

extension CameraVideoCapturer {
    /// The outcome of one attempt to start a replacement session.
    private enum Replacement {
        /// It runs: the configuration it captures with.
        case running(CaptureConfiguration)
        /// It did not start, or ended while starting; the error says why.
        case failed(CaptureError)
        /// A stop (or another switch) took over; nothing more to do.
        case superseded
    }

    /// For the session of `generation` ending with `error`: pauses a running capture whose camera went away when
    /// automatic resumption is on, and drops a resuming session that ended while the capture was still paused.
    /// Returns whether the end was handled here.
    private func pauseIfResuming(_ error: CaptureError?, _ generation: UInt64) -> Bool {
        enum Action {
            case none
            case handled
            case paused((any CameraVideoCapturerDelegate)?, CaptureError)
        }
        let action = state.withLock { state -> Action in
            guard state.generation == generation else { return .none }
            let releasing = { (state: inout State) in
                if let session = state.session {
                    state.session = nil
                    // Release the device in a task: the stop resumes when the capture thread, the one calling us, has finished.
                    state.cleanup = Task { await session.stop() }
                }
            }
            switch state.phase {
            case .paused:
                // A resumed session that failed while starting: the attempt sees its session gone and keeps waiting.
                releasing(&state)
                return .handled
            case .running:
                guard state.automaticallyResumes, let error, error.code == .deviceDisconnected,
                    let configuration = state.configuration
                else { return .none }
                state.phase = .paused(error)
                releasing(&state)
                state.watcher = Task { [weak self] in
                    await self?.watchForReturn(of: configuration, since: generation)
                }
                return .paused(state.delegate, error)
            default:
                return .none
            }
        }
        switch action {
        case .none: return false
        case .handled: return true
        case .paused(let delegate, let error):
            logger.info("camera gone; waiting for it to return", metadata: ["error": "\(error)"])
            delegate?.capturer(self, didPauseWith: error)
            return true
        }
    }

    /// While paused: waits for the camera of `configuration` (same id) to be listed again, then resumes with the same
    /// format. Tries at once (it may never have gone from the list), then at every `added` or `changed` event for
    /// that id; a backend that cannot watch its devices is checked every 500 ms. Ends when resumed or stopped.
    private func watchForReturn(of configuration: CaptureConfiguration, since pausedGeneration: UInt64) async {
        let id = configuration.device.id
        guard let backend = provider.backend(for: configuration.device) else { return }
        // Watch first, then look: a camera that returns in between is then both listed and reported.
        let events = backend.deviceEvents()
        var generation = pausedGeneration
        let listed = { @Sendable in await BlockingExecutor.shared.run { backend.devices().first { $0.id == id } } }
        if let device = await listed(),
            await resume(on: device, configuration, &generation)
        {
            return
        }
        if let events {
            for await event in events where event.kind != .removed && event.device.id == id {
                if await resume(on: event.device, configuration, &generation) { return }
            }
        } else {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                guard !Task.isCancelled else { return }
                if let device = await listed(),
                    await resume(on: device, configuration, &generation)
                {
                    return
                }
            }
        }
    }

    /// One attempt to resume on `device` (the returned camera) with the format, size and rate of `previous`;
    /// `generation` is the paused capture's and is moved on by the attempt. Returns whether watching is over
    /// (resumed, or stopped meanwhile).
    private func resume(
        on device: CaptureDevice, _ previous: CaptureConfiguration, _ generation: inout UInt64
    ) async -> Bool {
        guard device.formats.contains(previous.format) else {
            logger.warning(
                "the camera returned without the format it captured in; not resuming",
                metadata: ["device": "\(device.id)", "format": "\(previous.format)"])
            return false
        }
        let expected = generation
        let outcome = await replaceSession(
            device: device, format: previous.format, size: previous.requestedDimensions, fps: previous.requestedFPS,
            when: { state in
                guard case .paused = state.phase, state.generation == expected else { return false }
                return true
            })
        switch outcome {
        case .superseded:
            return true
        case .failed(let error):
            generation = state.withLock { $0.generation }
            logger.debug("resume attempt failed; still waiting", metadata: ["error": "\(error)"])
            return false
        case .running(let configuration):
            logger.info("camera returned; capture resumed", metadata: ["device": "\(configuration.device.id)"])
            let delegate = state.withLock { $0.delegate }
            delegate?.capturer(self, didResumeWith: configuration)
            return true
        }
    }

    /// Starts a session on `device` in place of the capture's current one (none while paused; the caller has
    /// stopped it when switching), if `when` still holds, keeping the frame streams, the delegate, the statistics and
    /// the timestamp and sequence counters. Marks the capture running when the session starts.
    private func replaceSession(
        device: CaptureDevice, format: CaptureFormat, size: Dimensions, fps: Double,
        when allowed: @Sendable (State) -> Bool
    ) async -> Replacement {
        let pendingCleanup = state.withLock { state -> Task<Void, Never>? in
            defer { state.cleanup = nil }
            return state.cleanup
        }
        await pendingCleanup?.value
        guard let backend = provider.backend(for: device) else {
            return .failed(CaptureError(.deviceNotFound, "no backend serves the device", device: device.id))
        }
        let prepared = state.withLock { state -> (UInt64, CaptureSessionConfiguration)? in
            guard allowed(state) else { return nil }
            state.generation += 1
            state.position = device.position
            state.sensorRotation = device.sensorRotation
            state.orientationRotation = CaptureRules.rotation(
                for: state.orientation, position: device.position, previous: state.orientationRotation)
            let configuration = CaptureSessionConfiguration(
                device: device, format: format, dimensions: size, fps: fps, output: state.output,
                bufferCount: state.bufferCount, paced: state.paced)
            return (state.generation, configuration)
        }
        guard let (generation, sessionConfiguration) = prepared else { return .superseded }
        let session: any CaptureSession
        do throws(CaptureError) {
            session = try backend.makeSession(sessionConfiguration, events: sessionEvents(generation))
        } catch {
            return .failed(error)
        }
        guard adopt(session, generation: generation) else {
            await session.stop()
            return .superseded
        }
        do throws(CaptureError) {
            try await session.start()
        } catch {
            state.withLock { state in
                if state.generation == generation, state.session === session { state.session = nil }
            }
            await session.stop()
            return .failed(error)
        }
        let configuration = CaptureConfiguration(
            device: device, format: format, requestedDimensions: size, requestedFPS: fps, granted: session.granted,
            output: sessionConfiguration.output)
        let outcome = state.withLock { state -> Replacement in
            guard state.generation == generation else { return .superseded }
            // The session may have ended while starting (`pauseIfResuming` or `ended` took it).
            guard state.session === session else {
                return .failed(
                    CaptureError(.deviceDisconnected, "the camera went away while starting", device: device.id))
            }
            state.phase = .running
            state.configuration = configuration
            state.watcher = nil
            return .running(configuration)
        }
        if case .superseded = outcome { await session.stop() }
        return outcome
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
        let current = state.withLock { state -> (CaptureConfiguration, UInt64)? in
            switch state.phase {
            case .running, .paused:
                return state.configuration.map { ($0, state.generation) }
            default:
                return nil
            }
        }
        guard let (previous, generation) = current else {
            throw CaptureError(.invalidState, "switchCamera needs a running capture", device: device.id)
        }
        let request = FormatRequest(
            target: target ?? previous.requestedDimensions, fpsLimit: fpsLimit ?? previous.requestedFPS,
            preference: preference)
        guard let selection = selectFormat(on: device, for: request) else {
            throw CaptureError(
                .noUsableFormat, "\(device.name) offers no format the capturer can convert", device: device.id)
        }
        // Take the capture over: from the new generation on, the old session's frames and end are ignored.
        let taken = state.withLock { state -> (any CaptureSession)?? in
            guard state.generation == generation, state.isActive else { return nil }
            state.generation += 1
            state.watcher?.cancel()
            state.watcher = nil
            let session = state.session
            state.session = nil
            return .some(session)
        }
        guard let taken else {
            throw CaptureError(.invalidState, "a stop or another switch took over", device: device.id)
        }
        let switchGeneration = generation + 1
        // Returns when the old capture thread has finished: a frame it was delivering has been delivered by then.
        await taken?.stop()
        let stillOurs: @Sendable (State) -> Bool = { state in
            state.generation == switchGeneration && state.isActive
        }
        let started = await replaceSession(
            device: device, format: selection.format, size: selection.dimensions, fps: selection.fps, when: stillOurs)
        switch started {
        case .running(let configuration):
            logger.debug("switched camera", metadata: ["device": "\(device.id)"])
            return configuration
        case .superseded:
            throw CaptureError(.invalidState, "a stop or another switch took over", device: device.id)
        case .failed(let error):
            logger.info("switch failed; back to the previous camera", metadata: ["error": "\(error)"])
            let back = state.withLock { $0.generation }
            let restored = await replaceSession(
                device: previous.device, format: previous.format, size: previous.requestedDimensions,
                fps: previous.requestedFPS, when: { $0.generation == back && $0.isActive })
            if case .failed = restored { end(with: error, ifGeneration: back) }
            throw error
        }
    }

    /// Ends the capture with `error` as a failed session would, if `generation` is still current.
    private func end(with error: CaptureError, ifGeneration generation: UInt64) {
        let taken = state.withLock { state -> ((any CameraVideoCapturerDelegate)?, [UInt64: Stream])? in
            guard state.generation == generation, state.isActive else { return nil }
            state.phase = .failed(error)
            state.generation += 1
            if let session = state.session {
                state.session = nil
                state.cleanup = Task { await session.stop() }
            }
            defer { state.streams = [:] }
            return (state.delegate, state.streams)
        }
        guard let (delegate, streams) = taken else { return }
        for stream in streams.values { stream.continuation.finish() }
        delegate?.capturer(self, didStopWith: error)
    }
}
