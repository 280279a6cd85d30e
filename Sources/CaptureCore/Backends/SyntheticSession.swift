/// A stream of synthetic frames in the configured size, rate and layout (used by the synthetic camera and by
/// recorded devices).
package final class SyntheticSession: CaptureSession {
    private let configuration: CaptureSessionConfiguration
    private let events: CaptureSessionEvents
    private let loop: PacedFrameLoop
    private let pool: FrameBufferPool

    package init(configuration: CaptureSessionConfiguration, events: CaptureSessionEvents) throws(CaptureError) {
        let size = configuration.dimensions
        guard size.width > 0, size.height > 0, size.width <= 16384, size.height <= 16384 else {
            throw CaptureError(.invalidArgument, "frame size \(size) is out of range", device: configuration.device.id)
        }
        guard configuration.fps > 0, configuration.fps <= 1000 else {
            throw CaptureError(
                .invalidArgument, "frame rate \(configuration.fps) is out of range",
                device: configuration.device.id)
        }
        self.configuration = configuration
        self.events = events
        self.loop = PacedFrameLoop(fps: configuration.fps, paced: configuration.paced, name: "synthetic-camera")
        self.pool = FrameBufferPool(format: configuration.output, dimensions: size, capacity: 8)
    }

    package var granted: GrantedFormat {
        GrantedFormat(
            pixelFormat: configuration.format.pixelFormat, dimensions: configuration.dimensions,
            fps: configuration.fps)
    }

    package func start() async throws(CaptureError) {
        let size = configuration.dimensions
        let pattern = PatternBox(TestPattern(width: size.width, height: size.height))
        let events = self.events
        let pool = self.pool
        loop.start { index, captureTime in
            guard let buffer = pool.take() else {
                events.dropped(.poolExhausted)
                return .continue
            }
            pattern.draw(frame: index, captureTimeNs: captureTime, into: buffer)
            events.frame(buffer, captureTime)
            return .continue
        }
    }

    package func stop() async { await loop.stop() }
}

/// Holds the pattern's reusable rows for the capture thread.
private final class PatternBox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: the box is created before the loop starts and then used only by the loop's
    // single thread; no other thread touches it.
    private var pattern: TestPattern
    init(_ pattern: TestPattern) { self.pattern = pattern }
    func draw(frame: UInt64, captureTimeNs: UInt64, into buffer: VideoFrameBuffer) {
        pattern.draw(frame: frame, captureTimeNs: captureTimeNs, into: buffer)
    }
}
