import CaptureCore

/// A camera backend whose session does, inside `start()`, exactly what a test scripts: deliver some frames, end on
/// its own, or wait at a gate until the test opens it. It makes the windows around `startCapture` deterministic
/// instead of a matter of thread timing.
final class ScriptedBackend: CameraBackend {
    /// What the session does inside `start()`, in order.
    enum Step: Sendable {
        /// Deliver one frame.
        case frame
        /// End the session with this error (`nil`: a clean end of the source).
        case end(CaptureError?)
        /// Finish ``ScriptedBackend/entered`` and wait (suspended, holding no thread) until ``ScriptedBackend/open()``.
        case gate
    }

    let kind = CaptureDevice.Kind.recorded
    let device = CaptureDevice(
        id: "scripted", name: "Scripted camera", kind: .recorded,
        formats: [CaptureFormat(.yu12, 64, 48, fps: [30])])
    let script: [Step]
    /// Finished when a session reaches a `.gate` step.
    let entered = Completion()
    private let gate = Completion()
    /// How many sessions were stopped, and how many times in all `stop()` was called.
    let stops = Locked((sessions: 0, calls: 0))

    init(_ script: [Step]) { self.script = script }

    var provider: CameraProvider { CameraProvider(backends: [self]) }

    /// Lets a session waiting at a `.gate` step go on.
    func open() { gate.finish() }

    func devices() -> [CaptureDevice] { [device] }
    func canConvert(_ pixelFormat: PixelFormat) -> Bool { pixelFormat == .yu12 }

    func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        Session(backend: self, configuration: configuration, events: events)
    }

    private final class Session: CaptureSession {
        let backend: ScriptedBackend
        let events: CaptureSessionEvents
        let pool: FrameBufferPool
        let granted: GrantedFormat
        let stopped = Locked(false)

        init(backend: ScriptedBackend, configuration: CaptureSessionConfiguration, events: CaptureSessionEvents) {
            self.backend = backend
            self.events = events
            pool = FrameBufferPool(format: configuration.output, dimensions: configuration.dimensions, capacity: 4)
            granted = GrantedFormat(
                pixelFormat: configuration.format.pixelFormat, dimensions: configuration.dimensions,
                fps: configuration.fps)
        }

        func start() async throws(CaptureError) {
            var timestamp: UInt64 = 1_000
            for step in backend.script {
                switch step {
                case .frame:
                    guard let buffer = pool.take() else {
                        events.dropped(.poolExhausted)
                        continue
                    }
                    events.frame(buffer, timestamp)
                    timestamp += 33_000_000
                case .end(let error):
                    events.ended(error)
                case .gate:
                    backend.entered.finish()
                    await backend.gate.wait()
                }
            }
        }

        func stop() async {
            let first = stopped.withLock { stopped in
                defer { stopped = true }
                return !stopped
            }
            backend.stops.withLock { stops in
                stops.calls += 1
                if first { stops.sessions += 1 }
            }
        }
    }
}
