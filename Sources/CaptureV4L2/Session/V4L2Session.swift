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
/// starts streaming, then starts the capture thread. ``stop()`` asks the thread to finish, joins it, and by then
/// every descriptor and mapping is released. The running thread keeps the session alive, so a session must be
/// stopped (as the capturer always does) to release the device.
final class V4L2Session: CaptureSession {
    private struct State {
        var phase = Phase.idle
        var granted: GrantedFormat
        var loop: CaptureLoop?
        var captureThread: pthread_t?
    }
    private enum Phase { case idle, running, stopped }

    let configuration: CaptureSessionConfiguration
    private let events: CaptureSessionEvents
    private let driver: any V4L2Driver
    private let conversion: FrameConversion
    private let logger: Logger
    private let stallTimeoutNs: UInt64?
    private let state: Locked<State>
    /// Signalled once when the capture thread has released the device and made its last event.
    private let finished = DispatchSemaphore(value: 0)

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

    func start() throws(CaptureError) {
        let node = configuration.device.node ?? ""
        let allowed = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard allowed else {
            throw CaptureError(.invalidState, "the session was already started", device: node)
        }
        guard !node.isEmpty else {
            state.withLock { $0.phase = .stopped }
            throw CaptureError(.invalidArgument, "the device has no node path", device: configuration.device.id)
        }
        let stream: V4L2Stream
        do {
            stream = try V4L2Stream.start(node: node, configuration: configuration, driver: driver)
        } catch {
            state.withLock { $0.phase = .stopped }
            logger.debug("start failed", metadata: ["device": "\(node)", "error": "\(error)"])
            throw error
        }
        let format = stream.format
        let loop = CaptureLoop(
            stream: stream, output: configuration.output, bufferCount: stream.mappings.count, events: events,
            conversion: conversion, logger: logger, stallTimeoutNs: stallTimeoutNs)
        state.withLock {
            $0.granted = GrantedFormat(
                pixelFormat: format.pixelFormat, dimensions: format.dimensions, fps: stream.fps,
                bytesPerLine: format.bytesPerLine)
            $0.loop = loop
        }
        logger.debug(
            "streaming",
            metadata: [
                "device": "\(node)", "format": "\(format.pixelFormat) \(format.dimensions)",
                "bytesPerLine": "\(format.bytesPerLine)", "fps": "\(stream.fps)", "buffers": "\(stream.mappings.count)",
            ])
        let thread = Thread { [self] in
            state.withLock { $0.captureThread = pthread_self() }
            loop.run()
            finished.signal()
        }
        thread.name = "V4L2Capture"
        thread.start()
    }

    func stop() {
        let (loop, captureThread) = state.withLock { state -> (CaptureLoop?, pthread_t?) in
            if state.phase == .idle { state.phase = .stopped }
            return (state.loop, state.captureThread)
        }
        guard let loop else { return }
        loop.stopRequested.store(true, ordering: .releasing)
        // Called from the capture thread itself (for example from the `ended` callback): it cannot join itself, and
        // it makes no further event once that callback returns.
        if let captureThread, pthread_equal(captureThread, pthread_self()) != 0 { return }
        finished.wait()
        finished.signal()  // Let any concurrent or later stop() pass too.
        state.withLock { $0.phase = .stopped }
    }
}
