public import CaptureCore
public import CaptureVP8
import Logging

/// An ``EncodedFrameSink`` that writes the frames to an IVF file (vpxdec and ffmpeg read it).
///
/// The file is created at the first frame, with that frame's size, and completed (frame count) by ``finish()``.
/// Errors are counted and the last one kept; they never stop the pipeline. After a failed write the sink keeps
/// trying with the following frames; after a failed creation it tries again at the next frame.
public final class IVFFileSink: EncodedFrameSink {
    /// What the sink has done so far.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Frames written to the file.
        public var framesWritten = 0
        /// Frames that could not be written (or the file not created or completed).
        public var failures = 0

        /// Creates zeroed statistics.
        public init() {}
    }

    private struct State {
        var writer: IVFWriter?
        var statistics = Statistics()
        var lastError: CaptureError?
        var finished = false
    }

    /// The file's path.
    public let path: String
    /// The file's time base.
    public let timebase: IVFTimebase
    private let state = Locked(State())
    private let logger: Logger

    /// Creates a sink writing to `path` (created, or truncated, at the first frame) with `timebase`.
    public init(path: String, timebase: IVFTimebase = .frameIndex(fps: 30), logger: Logger? = nil) {
        self.path = path
        self.timebase = timebase
        self.logger = logger ?? Logger(label: "CaptureCall.IVFFileSink")
    }

    /// Counters so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The most recent error, if any.
    public var lastError: CaptureError? { state.withLock { $0.lastError } }

    /// Appends the frame to the file (creating it at the first frame). Ignored after ``finish()``.
    public func consume(_ frame: EncodedFrame) {
        state.withLock { state in
            guard !state.finished else { return }
            do throws(CaptureError) {
                if state.writer == nil {
                    state.writer = try IVFWriter(path: path, dimensions: frame.dimensions, timebase: timebase)
                }
                try state.writer?.write(frame)
                state.statistics.framesWritten += 1
            } catch {
                record(error, in: &state)
            }
        }
    }

    /// Completes the file's header. Idempotent.
    public func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            do throws(CaptureError) {
                try state.writer?.close()
            } catch {
                record(error, in: &state)
            }
            state.writer = nil
        }
    }

    private func record(_ error: CaptureError, in state: inout State) {
        if state.lastError == nil {
            logger.warning("IVF writing failed", metadata: ["path": "\(path)", "error": "\(error)"])
        }
        state.statistics.failures += 1
        state.lastError = error
    }
}
