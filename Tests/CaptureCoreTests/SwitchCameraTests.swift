import CaptureCore
import Foundation
import Testing

@Suite("switchCamera on a running capture", .serialized)
struct SwitchCameraTests {
    static let size = Dimensions(width: 64, height: 48)

    static func twoCameras() -> PluggableBackend {
        PluggableBackend([
            PluggableBackend.camera("front", luma: 50, position: .front),
            PluggableBackend.camera("back", luma: 200, position: .back),
        ])
    }

    @Test("moves the capture to the other camera: same streams and delegate, no old frame after return, new rotation")
    func switches() async throws {
        let backend = Self.twoCameras()
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        // Landscape left: 180° on the front camera, 0° on the back one (WebRTC's rule).
        capturer.deviceOrientation = .landscapeLeft
        let collector = StreamCollector(capturer.frames(bufferingNewest: 1000))
        let first = try await capturer.startCapture(target: Self.size, position: .front)
        #expect(first.device.id == "front")
        #expect(await eventually { delegate.count >= 5 })

        let back = try #require(backend.devices().first { $0.id == "back" })
        let calledAt = MonotonicClock.nowNs()
        let switched = try await capturer.switchCamera(to: back)
        let returnedAt = MonotonicClock.nowNs()
        let atReturn = delegate.count
        #expect(switched.device.id == "back")
        #expect(capturer.configuration == switched)
        #expect(capturer.captureState == .running)
        #expect(await eventually { delegate.count >= atReturn + 5 })
        let frames = delegate.frames.withLock { $0 }
        let firstNew = try #require(frames.firstIndex { $0.luma == 200 })
        #expect(firstNew <= atReturn, "a frame was delivered at return that is not the new camera's")
        #expect(frames[firstNew...].allSatisfy { $0.luma == 200 }, "an old camera frame after the switch")
        #expect(frames[..<firstNew].allSatisfy { $0.luma == 50 && $0.rotation == .degrees180 })
        #expect(frames[firstNew...].allSatisfy { $0.rotation == .degrees0 })
        #expect(capturer.rotation == .degrees0)
        expectMonotonic(frames)
        let toFirst = Double(frames[firstNew].deliveredNs - calledAt) / 1e6
        print(
            "switchCamera: returned after \(String(format: "%.2f", Double(returnedAt - calledAt) / 1e6)) ms, "
                + "first new-camera frame \(String(format: "%.2f", toFirst)) ms after the call")

        await capturer.stopCapture()
        await collector.task.value
        #expect(collector.frames.withLock { $0.count } == delegate.count)
        #expect(delegate.stops.withLock { $0 } == [nil], "the delegate heard a stop before the real one")
        #expect(backend.counts.withLock { $0.started == 2 && $0.stopped == 2 })
    }

    @Test("switching back and forth five times keeps one stream and increasing timestamps")
    func backAndForth() async throws {
        let backend = Self.twoCameras()
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        try await capturer.startCapture(target: Self.size, position: .front)
        let devices = backend.devices()
        for round in 0..<5 {
            let before = delegate.count
            #expect(await eventually { delegate.count >= before + 2 })
            try await capturer.switchCamera(to: devices[(round + 1) % 2])
        }
        let before = delegate.count
        #expect(await eventually { delegate.count >= before + 2 })
        expectMonotonic(delegate.frames.withLock { $0 })
        await capturer.stopCapture()
        #expect(backend.counts.withLock { $0.started == 6 && $0.stopped == 6 })
    }

    @Test("switching while idle is invalidState")
    func idle() async throws {
        let backend = Self.twoCameras()
        let capturer = CameraVideoCapturer(provider: backend.provider)
        let error = await #expect(throws: CaptureError.self) {
            try await capturer.switchCamera(to: backend.devices()[1])
        }
        #expect(error?.code == .invalidState)
    }

    @Test("a switch to a camera that fails to start throws, and the capture goes on with the previous camera")
    func failedSwitchGoesBack() async throws {
        let backend = Self.twoCameras()
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        try await capturer.startCapture(target: Self.size, position: .front)
        #expect(await eventually { delegate.count >= 3 })
        backend.failNextStart.withLock { _ = $0.insert("back") }
        let error = await #expect(throws: CaptureError.self) {
            try await capturer.switchCamera(to: backend.devices()[1])
        }
        #expect(error?.code == .deviceNotFound)
        #expect(capturer.captureState == .running)
        #expect(capturer.configuration?.device.id == "front")
        let before = delegate.count
        #expect(await eventually { delegate.count >= before + 3 })
        #expect(delegate.frames.withLock { $0.allSatisfy { $0.luma == 50 } })
        expectMonotonic(delegate.frames.withLock { $0 })
        #expect(delegate.stops.withLock { $0.isEmpty })
        await capturer.stopCapture()
    }

    @Test("switching a paused capture (its camera unplugged) to another camera resumes on that one")
    func switchWhilePaused() async throws {
        let backend = Self.twoCameras()
        let delegate = HotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: backend.provider)
        capturer.automaticallyResumes = true
        try await capturer.startCapture(target: Self.size, position: .front)
        #expect(await eventually { delegate.count >= 3 })
        backend.unplug("front")
        #expect(await eventually { delegate.pauses.withLock { $0.count } == 1 })
        try await capturer.switchCamera(to: backend.devices()[0])
        #expect(capturer.configuration?.device.id == "back")
        let before = delegate.count
        #expect(await eventually { delegate.count >= before + 3 })
        backend.plug("front")
        try await Task.sleep(for: .milliseconds(50))
        #expect(capturer.configuration?.device.id == "back", "the old camera's return took the capture back")
        expectMonotonic(delegate.frames.withLock { $0 })
        await capturer.stopCapture()
        #expect(backend.watcherCount == 0)
    }
}
