import CaptureCore

/// Plays one replay file on a paced (or unpaced) thread, converting each frame with `FrameConverter` into a pooled
/// buffer.
final class ReplaySession: CaptureSession {
    private let source: ReplaySource
    private let configuration: CaptureSessionConfiguration
    private let events: CaptureSessionEvents
    private let loopAtEnd: Bool
    private let loop: PacedFrameLoop
    /// The open file, used by the loop thread while it runs and closed by `stop()` after the thread has finished.
    private let state = Locked<PlayState?>(nil)

    /// The open file, the next frame to play, and how many frames in a row failed to convert.
    private struct PlayState {
        var index: ReplayIndex
        var position: Int
        var corruptInARow = 0
    }

    init(source: ReplaySource, configuration: CaptureSessionConfiguration, events: CaptureSessionEvents, loop: Bool) {
        self.source = source
        self.configuration = configuration
        self.events = events
        self.loopAtEnd = loop
        self.loop = PacedFrameLoop(fps: configuration.fps, paced: configuration.paced, name: "replay-camera")
    }

    var granted: GrantedFormat {
        GrantedFormat(pixelFormat: source.pixelFormat, dimensions: source.dimensions, fps: configuration.fps)
    }

    func start() async throws(CaptureError) {
        let source = self.source
        let state = self.state
        // The index is opened inside the lock: it holds the stream's JPEG decoder (not Sendable), which so belongs to
        // the locked state from the start and is used only by the loop thread below. Opening and indexing the file
        // are blocking reads, so they run on the blocking executor.
        let frames = try await BlockingExecutor.shared.run { () throws(CaptureError) -> Int in
            try state.withLock { state throws(CaptureError) -> Int in
                let index = try ReplayIndex(source)
                let frames = index.frameCount
                state = PlayState(index: index, position: 0)
                return frames
            }
        }
        let pool = FrameBufferPool(format: configuration.output, dimensions: configuration.dimensions, capacity: 8)
        let events = self.events
        let loopAtEnd = self.loopAtEnd
        // Events are made inside the lock: only this thread takes it while the loop runs (stop() takes it after
        // joining the thread), so a consumer running in `events.frame` never contends with anything.
        loop.start { _, captureTime in
            state.withLock { state -> PacedFrameLoop.Step in
                guard var playing = state else {
                    events.ended(CaptureError(.invalidState, "the replay file is closed"))
                    return .finish
                }
                state = nil  // moved out and back, so the frame buffer is not copied on write
                defer { state = playing }
                if playing.position == frames {
                    guard loopAtEnd else {
                        events.ended(nil)
                        return .finish
                    }
                    playing.position = 0
                }
                guard let buffer = pool.take() else {
                    events.dropped(.poolExhausted)
                    return .continue
                }
                let position = playing.position
                playing.position += 1
                switch playing.index.play(position, into: buffer) {
                case .converted:
                    playing.corruptInARow = 0
                    events.frame(buffer, captureTime)
                    return .continue
                case .corrupt:
                    events.dropped(.conversionFailed)
                    playing.corruptInARow += 1
                    // A whole pass of the file without one frame: none ever will (a file is not a camera that may
                    // recover), so the stream ends with the reason instead of dropping forever.
                    guard playing.corruptInARow < frames else {
                        events.ended(
                            CaptureError(
                                .conversionFailed,
                                "none of the \(frames) frames of \(source.path) converts as \(source.pixelFormat) "
                                    + "\(source.dimensions) (corrupt, or another size or format)"))
                        return .finish
                    }
                    return .continue
                case .failed(let error):
                    events.ended(error)
                    return .finish
                }
            }
        }
    }

    func stop() async {
        await loop.stop()
        state.withLock { state in
            try? state?.index.close()
            state = nil
        }
    }
}
