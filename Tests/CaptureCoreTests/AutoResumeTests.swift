import CaptureCore
import Foundation
import Testing

/// A delegate that records frames (with their luma), stops, pauses and resumes.
final class HotplugDelegate: CameraVideoCapturerDelegate {
    struct Seen: Sendable {
        var timestampNs: UInt64
        var sequence: UInt64
        var luma: UInt8
        var rotation: VideoRotation
        var deliveredNs: UInt64
    }
    let frames = Locked<[Seen]>([])
    let stops = Locked<[CaptureError?]>([])
    let pauses = Locked<[CaptureError]>([])
    let resumes = Locked<[CaptureConfiguration]>([])

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let luma = frame.buffer.withUnsafeBytes(plane: 0) { $0[0] }
        let seen = Seen(
            timestampNs: frame.timestampNs, sequence: frame.sequenceNumber, luma: luma, rotation: frame.rotation,
            deliveredNs: MonotonicClock.nowNs())
        frames.withLock { $0.append(seen) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        stops.withLock { $0.append(error) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didPauseWith error: CaptureError) {
        pauses.withLock { $0.append(error) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didResumeWith configuration: CaptureConfiguration) {
        resumes.withLock { $0.append(configuration) }
    }
    var count: Int { frames.withLock { $0.count } }
}

/// Waits (without blocking the cooperative pool) until `condition` holds, 5 s at most; returns whether it did.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Collects a frame stream until it ends, in a task; `ended` says whether it has.
final class StreamCollector: Sendable {
    let frames = Locked<[VideoFrame]>([])
    let ended = Locked(false)
    let task: Task<Void, Never>

    init(_ stream: VideoFrameStream) {
        let frames = self.frames
        let ended = self.ended
        task = Task {
            for await frame in stream { frames.withLock { $0.append(frame) } }
            ended.withLock { $0 = true }
        }
    }
}

/// Strictly increasing timestamps and consecutive sequence numbers.
func expectMonotonic(_ frames: [HotplugDelegate.Seen], sourceLocation: SourceLocation = #_sourceLocation) {
    let increasing = zip(frames.dropFirst(), frames).allSatisfy { $0.timestampNs > $1.timestampNs }
    #expect(increasing, "timestamps not strictly increasing", sourceLocation: sourceLocation)
    let consecutive = zip(frames.dropFirst(), frames).allSatisfy { $0.sequence == $1.sequence + 1 }
    #expect(consecutive, "sequence numbers not consecutive", sourceLocation: sourceLocation)
}

@Suite("Auto-resume after an unplugged camera returns", .serialized)
struct AutoResumeTests {
    static let size = Dimensions(width: 64, height: 48)

    @Test("unplug pauses (streams open), replug of the same id resumes in the same format; timestamps keep increasing")
    func pauseAndResume() async throws {
        let backend = PluggableBackend([PluggableBackend.camera("cam-a", luma: 50)])
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        capturer.automaticallyResumes = true
        let collector = StreamCollector(capturer.frames(bufferingNewest: 1000))
        let started = try await capturer.startCapture(target: Self.size)
        #expect(await eventually { delegate.count >= 5 })

        backend.unplug("cam-a")
        #expect(await eventually { delegate.pauses.withLock { $0.count } == 1 })
        #expect(delegate.pauses.withLock { $0.first?.code } == .deviceDisconnected)
        guard case .paused(let error) = capturer.captureState else {
            Issue.record("not paused: \(capturer.captureState)")
            return
        }
        #expect(error.code == .deviceDisconnected)
        let beforeGap = delegate.count
        try await Task.sleep(for: .milliseconds(100))
        #expect(delegate.count == beforeGap, "frames while the camera was away")
        #expect(!collector.ended.withLock { $0 }, "the frame stream ended while paused")
        #expect(delegate.stops.withLock { $0.isEmpty })

        let pluggedAt = MonotonicClock.nowNs()
        backend.plug("cam-a")
        #expect(await eventually { delegate.resumes.withLock { $0.count } == 1 })
        #expect(await eventually { delegate.count >= beforeGap + 5 })
        #expect(capturer.captureState == .running)
        let resumed = try #require(delegate.resumes.withLock { $0.first })
        #expect(resumed.format == started.format)
        #expect(resumed.granted == started.granted)
        #expect(capturer.configuration == resumed)
        let frames = delegate.frames.withLock { $0 }
        let firstAfter = frames[beforeGap]
        print(
            "auto-resume: first frame \(String(format: "%.1f", Double(firstAfter.deliveredNs - pluggedAt) / 1e6)) ms "
                + "after the replug; \(beforeGap) frames before the gap, \(frames.count - beforeGap) after")
        expectMonotonic(frames)

        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        await collector.task.value
        #expect(collector.ended.withLock { $0 })
        #expect(collector.frames.withLock { $0.count } == delegate.count)
        #expect(delegate.stops.withLock { $0 } == [nil])
        #expect(backend.counts.withLock { $0.started == $0.stopped && $0.started == 2 })
        #expect(backend.watcherCount == 0, "the device watch was not released")
    }

    @Test("without auto-resume an unplug ends the capture with deviceDisconnected, as before")
    func withoutAutoResume() async throws {
        let backend = PluggableBackend([PluggableBackend.camera("cam-a", luma: 50)])
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        let collector = StreamCollector(capturer.frames())
        try await capturer.startCapture(target: Self.size)
        #expect(await eventually { delegate.count >= 3 })
        backend.unplug("cam-a")
        await collector.task.value
        #expect(delegate.stops.withLock { $0.map { $0?.code } } == [.deviceDisconnected])
        #expect(delegate.pauses.withLock { $0.isEmpty })
        guard case .failed(let error) = capturer.captureState else {
            Issue.record("not failed: \(capturer.captureState)")
            return
        }
        #expect(error.code == .deviceDisconnected)
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
    }

    @Test("stopCapture while paused ends cleanly: idle, streams end, told once, a later replug resumes nothing")
    func stopWhilePaused() async throws {
        let backend = PluggableBackend([PluggableBackend.camera("cam-a", luma: 50)])
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        capturer.automaticallyResumes = true
        let collector = StreamCollector(capturer.frames())
        try await capturer.startCapture(target: Self.size)
        #expect(await eventually { delegate.count >= 3 })
        backend.unplug("cam-a")
        #expect(await eventually { delegate.pauses.withLock { $0.count } == 1 })
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        await collector.task.value
        #expect(delegate.stops.withLock { $0 } == [nil])
        #expect(backend.watcherCount == 0)
        backend.plug("cam-a")
        try await Task.sleep(for: .milliseconds(100))
        #expect(delegate.resumes.withLock { $0.isEmpty })
        #expect(capturer.captureState == .idle)
        #expect(backend.counts.withLock { $0.started == 1 && $0.stopped == 1 })
    }

    @Test("a backend that cannot watch its devices is checked every 500 ms; a failed first attempt keeps waiting")
    func pollingFallback() async throws {
        let backend = PluggableBackend([PluggableBackend.camera("cam-a", luma: 50)], watches: false)
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        capturer.automaticallyResumes = true
        try await capturer.startCapture(target: Self.size)
        #expect(await eventually { delegate.count >= 3 })
        backend.unplug("cam-a")
        #expect(await eventually { delegate.pauses.withLock { $0.count } == 1 })
        let beforeGap = delegate.count
        backend.failNextStart.withLock { _ = $0.insert("cam-a") }
        backend.plug("cam-a")
        #expect(await eventually { delegate.resumes.withLock { $0.count } == 1 })
        #expect(await eventually { delegate.count >= beforeGap + 3 })
        #expect(backend.failNextStart.withLock { $0.isEmpty }, "the failing attempt was not made")
        expectMonotonic(delegate.frames.withLock { $0 })
        await capturer.stopCapture()
        #expect(delegate.stops.withLock { $0 } == [nil])
        #expect(backend.counts.withLock { $0.started == $0.stopped })
    }

    @Test("a second unplug after resuming pauses again and the camera resumes again")
    func twoGaps() async throws {
        let backend = PluggableBackend([PluggableBackend.camera("cam-a", luma: 50)])
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        capturer.automaticallyResumes = true
        try await capturer.startCapture(target: Self.size)
        for round in 1...2 {
            let before = delegate.count
            #expect(await eventually { delegate.count >= before + 3 })
            backend.unplug("cam-a")
            #expect(await eventually { delegate.pauses.withLock { $0.count } == round })
            backend.plug("cam-a")
            #expect(await eventually { delegate.resumes.withLock { $0.count } == round })
        }
        let before = delegate.count
        #expect(await eventually { delegate.count >= before + 3 })
        expectMonotonic(delegate.frames.withLock { $0 })
        await capturer.stopCapture()
        #expect(backend.counts.withLock { $0.started == 3 && $0.stopped == 3 })
    }
}

@Suite("CameraProvider.deviceEvents")
struct ProviderDeviceEventsTests {
    @Test("merges the backends that watch; cancelling the consumer releases every backend's watch")
    func mergesAndReleases() async throws {
        let first = PluggableBackend([PluggableBackend.camera("one", luma: 1)])
        let second = PluggableBackend([PluggableBackend.camera("two", luma: 2)])
        let fixed = PluggableBackend([PluggableBackend.camera("fixed", luma: 3)], watches: false)
        let provider = CameraProvider(backends: [first, second, fixed])
        let seen = Locked<[String]>([])
        let consumer = Task {
            for await event in provider.deviceEvents() {
                seen.withLock { $0.append("\(event.kind) \(event.device.id)") }
            }
        }
        #expect(await eventually { first.watcherCount == 1 && second.watcherCount == 1 })
        first.unplug("one")
        second.unplug("two")
        second.plug("two")
        #expect(await eventually { seen.withLock { $0.count } == 3 })
        #expect(Set(seen.withLock { $0 }) == ["removed one", "removed two", "added two"])
        consumer.cancel()
        await consumer.value
        #expect(await eventually { first.watcherCount == 0 && second.watcherCount == 0 })
    }

    @Test("with no backend that watches, the stream ends at once")
    func endsAtOnce() async {
        let provider = CameraProvider.builtIn
        var count = 0
        for await _ in provider.deviceEvents() { count += 1 }
        #expect(count == 0)
    }
}
