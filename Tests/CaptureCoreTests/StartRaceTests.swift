import CaptureCore
import CaptureTestSupport
import Dispatch
import Testing

/// The window between a session starting and `startCapture` marking the capture running, driven by a scripted
/// backend so that each case happens every time rather than by thread timing.
@Suite("startCapture when the session ends or is stopped while starting", .timeLimit(.minutes(1)))
struct StartRaceTests {
    @Test("a session that fails after its first frames, before start returns: start succeeds, the error is told once")
    func failsWhileStarting() async throws {
        let failure = CaptureError(.malformedFile, "frame 3 is truncated", device: "scripted")
        let backend = ScriptedBackend([.frame, .frame, .end(failure)])
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        let stream = capturer.frames(bufferingNewest: 8)

        let configuration = try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        #expect(configuration.granted.dimensions == Dimensions(width: 64, height: 48))
        #expect(capturer.configuration == configuration)
        #expect(delegate.count == 2)
        #expect(delegate.stops.withLock { $0 } == [failure])
        #expect(capturer.captureState == .failed(failure))
        var streamed = 0
        for await _ in stream { streamed += 1 }
        #expect(streamed == 2)

        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        #expect(backend.stops.withLock { $0.sessions } == 1)
        #expect(delegate.stops.withLock { $0.count } == 1)
    }

    @Test("a source that ends cleanly while starting: start succeeds, the capture is idle, the end is told once")
    func endsWhileStarting() async throws {
        let backend = ScriptedBackend([.frame, .end(nil)])
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        #expect(delegate.count == 1)
        #expect(delegate.stops.withLock { $0 } == [nil])
        #expect(capturer.captureState == .idle)
        // A new start works at once (it awaits the ended session's release first), and ends the same way.
        try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        #expect(delegate.count == 2)
        #expect(delegate.stops.withLock { $0 } == [nil, nil])
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        #expect(backend.stops.withLock { $0.sessions } == 2)
    }

    @Test("stopCapture while start is in flight: start throws invalidState, no frame leaks out, the device is released")
    func stoppedWhileStarting() async throws {
        let backend = ScriptedBackend([.gate, .frame])
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        let start = Task { () async throws -> CaptureConfiguration in
            try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        }
        // Wait, suspended, until the session is inside start(), at the gate.
        await backend.entered.wait()
        #expect(capturer.captureState == .starting)
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        backend.open()
        let result = await start.result
        guard case .failure(let error) = result else {
            Issue.record("start succeeded after stopCapture: \(result)")
            return
        }
        #expect((error as? CaptureError)?.code == .invalidState, "\(error)")
        #expect(delegate.count == 0)
        #expect(capturer.captureState == .idle)
        #expect(backend.stops.withLock { $0.sessions } == 1)
        #expect(delegate.stops.withLock { $0 } == [nil])
    }
}
