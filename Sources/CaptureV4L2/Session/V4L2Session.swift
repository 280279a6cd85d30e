import CaptureCore
import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A capture session on one V4L2 node.
///
/// ``start()`` opens the node, sets the format (`VIDIOC_S_FMT`, reading back size, bytes per line and image size)
/// and rate (`VIDIOC_S_PARM`, reading back the granted interval), maps `bufferCount` buffers, queues them and
/// starts streaming (all on ``BlockingExecutor``), then starts the capture thread. ``stop()`` asks the thread to
/// finish and returns when the thread, having released every descriptor and mapping, resumes it. The running thread
/// keeps the session alive, so a session must be stopped (as the capturer always does) to release the device.
final class V4L2Session: CaptureSession {
    private enum Phase {
        case idle
        /// Opening the device on the blocking executor; `stopRequested` when a stop came meanwhile.
        case starting(stopRequested: Bool)
        case running
        case stopped
    }

    private struct State {
        var phase = Phase.idle
        var granted: GrantedFormat
        var loop: CaptureLoop?
    }

    let configuration: CaptureSessionConfiguration
    private let events: CaptureSessionEvents
    private let driver: any V4L2Driver
    private let conversion: FrameConversion
    private let logger: Logger
    private let stallTimeoutNs: UInt64?
    private let state: Locked<State>
    /// Finished once the device is released and no more events will be made: by the capture thread as its last act,
    /// by a start that failed or was overtaken by a stop, or by a stop before any start.
    private let released = Completion()

    init(
        configuration: CaptureSessionConfiguration, events: CaptureSessionEvents, driver: any V4L2Driver,
        conversion: FrameConversion, logger: Logger = Logger(label: "swift-camera-capture.v4l2"),
        stallTimeoutNs: UInt64? = nil
    ) {
        self.stallTimeoutNs = stallTimeoutNs
        self.configuration = configuration
        self.events = events
        self.driver = driver
        self.conversion = conversion
        self.logger = logger
        self.state = Locked(
            State(
                granted: GrantedFormat(
                    pixelFormat: configuration.format.pixelFormat, dimensions: configuration.dimensions,
                    fps: configuration.fps)))
    }

    var granted: GrantedFormat { state.withLock { $0.granted } }

    /// Frames the driver's sequence numbers show it skipped (read after ``stop()``).
    var driverSkippedFrames: Int { state.withLock { $0.loop?.driverSkippedFrames ?? 0 } }

    /// Whether delivered frames carry the driver's timestamps (after ``stop()``), and why not if they do not.
    var timestampSummary: (driver: Bool, reason: String?)? { state.withLock { $0.loop?.timestampSummary } }

    func start() async throws(CaptureError) {
        let node = configuration.device.node ?? ""
        let allowed = state.withLock { state -> Bool in
            guard case .idle = state.phase else { return false }
            state.phase = .starting(stopRequested: false)
            return true
        }
        guard allowed else {
            throw CaptureError(.invalidState, "the session was already started", device: node)
        }
        guard !node.isEmpty else {
            finishWithoutThread()
            throw CaptureError(.invalidArgument, "the device has no node path", device: configuration.device.id)
        }
        let stream: V4L2Stream
        do {
            let (configuration, driver) = (self.configuration, self.driver)
            stream = try await BlockingExecutor.shared.run { () throws(CaptureError) -> StreamBox in
                StreamBox(try V4L2Stream.start(node: node, configuration: configuration, driver: driver))
            }.stream
        } catch {
            finishWithoutThread()
            logger.debug("start failed", metadata: ["device": "\(node)", "error": "\(error)"])
            throw error
        }
        let format = stream.format
        let loop = CaptureLoop(
            stream: stream, output: configuration.output, bufferCount: stream.mappings.count, events: events,
            conversion: conversion, logger: logger, stallTimeoutNs: stallTimeoutNs)
        let overtaken = state.withLock { state -> Bool in
            guard case .starting(stopRequested: false) = state.phase else { return true }
            state.phase = .running
            state.granted = GrantedFormat(
                pixelFormat: format.pixelFormat, dimensions: format.dimensions, fps: stream.fps,
                bytesPerLine: format.bytesPerLine)
            state.loop = loop
            return false
        }
        if overtaken {
            let box = StreamBox(stream)
            await BlockingExecutor.shared.run { box.stream.close() }
            finishWithoutThread()
            throw CaptureError(.invalidState, "the session was stopped while it started", device: node)
        }
        logger.debug(
            "streaming",
            metadata: [
                "device": "\(node)", "format": "\(format.pixelFormat) \(format.dimensions)",
                "bytesPerLine": "\(format.bytesPerLine)", "fps": "\(stream.fps)", "buffers": "\(stream.mappings.count)",
            ])
        let thread = Thread { [loop, released] in
            nameCurrentThread("v4l2-capture")
            loop.run()
            released.finish()
        }
        thread.start()
    }

    /// Marks the session stopped with no capture thread to wait for, and lets every stop through.
    private func finishWithoutThread() {
        state.withLock { $0.phase = .stopped }
        released.finish()
    }

    func stop() async {
        let neverStarted = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return true
            case .starting:
                state.phase = .starting(stopRequested: true)
            case .running:
                state.loop?.stopRequested.store(true, ordering: .releasing)
            case .stopped:
                break
            }
            return false
        }
        if neverStarted { released.finish() }
        await released.wait()
        state.withLock { $0.phase = .stopped }
    }
}

/// Carries a freshly opened stream from the blocking executor's thread to the session.
private final class StreamBox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: the stream is made on the executor's thread and handed over once, through the
    // continuation that resumes the session's task (which orders the handover); after that exactly one thread uses it
    // at a time (the session until it starts the capture loop, then the loop's thread; or the executor's thread that
    // closes a stream a stop overtook).
    let stream: V4L2Stream
    init(_ stream: V4L2Stream) { self.stream = stream }
}
