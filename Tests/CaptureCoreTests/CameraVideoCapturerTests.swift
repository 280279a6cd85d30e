import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@Suite("CameraVideoCapturer with the synthetic camera", .serialized)
struct CameraVideoCapturerTests {
    @Test("I420 output has three 64-byte-aligned planes with aligned strides, odd sizes included")
    func i420Layout() {
        let buffer = VideoFrameBuffer(format: .i420, width: 641, height: 479)
        #expect(buffer.planes.count == 3)
        #expect(buffer.planes.map(\.rowBytes) == [641, 321, 321])
        #expect(buffer.planes.map(\.rows) == [479, 240, 240])
        #expect(buffer.planes.allSatisfy { $0.stride % 64 == 0 && $0.offset % 64 == 0 })
        let nv12 = VideoFrameBuffer(format: .nv12, width: 641, height: 479)
        #expect(nv12.planes.map(\.rowBytes) == [641, 642])
    }

    @Test("the frame stream delivers, keeps the newest frames for a slow consumer, counts drops, ends at stop")
    func stream() async throws {
        let capturer = CameraVideoCapturer()
        capturer.isPaced = false
        let stream = capturer.frames(bufferingNewest: 2)
        try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        var received = 0
        var last: UInt64 = 0
        for await frame in stream {
            #expect(frame.timestampNs > last)
            last = frame.timestampNs
            received += 1
            if received == 5 {
                try await Task.sleep(for: .milliseconds(100))  // a slow consumer
            }
            if received == 10 { break }
        }
        #expect(received == 10)
        #expect(stream.droppedFrames > 0, "an unpaced camera outruns a consumer that sleeps")

        // A consumer still waiting on a stream sees it end when capture stops.
        // Stop only once it has consumed a frame (within a generous deadline: instrumented builds are slow), so the
        // test checks that a live consumer's stream ends, not how many frames fit in a fixed sleep.
        let second = capturer.frames(bufferingNewest: 1)
        let seen = Locked(0)
        let consumer = Task {
            for await _ in second { seen.withLock { $0 += 1 } }
            return seen.withLock { $0 }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while seen.withLock({ $0 }) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        await capturer.stopCapture()
        let consumed = await consumer.value
        #expect(consumed > 0, "the second consumer saw no frame within 30 s")
    }

    @Test("rotation follows orientation changes and keeps the previous value for face up/down/unknown")
    func rotationChanges() async throws {
        let capturer = CameraVideoCapturer(provider: .synthetic(position: .back))
        #expect(capturer.rotation == .degrees0, "0 before any orientation is known")
        try await capturer.startCapture(target: Dimensions(width: 320, height: 240), position: .back)
        capturer.deviceOrientation = .landscapeRight
        #expect(capturer.rotation == .degrees180)
        capturer.deviceOrientation = .faceUp
        #expect(capturer.rotation == .degrees180)
        capturer.deviceOrientation = .portraitUpsideDown
        #expect(capturer.rotation == .degrees270)
        capturer.deviceOrientation = .unknown
        #expect(capturer.rotation == .degrees270)
        await capturer.stopCapture()
    }

    @Test("starting twice is an invalid-state error; stop is idempotent; a restart works")
    func stateMachine() async throws {
        let capturer = CameraVideoCapturer()
        await capturer.stopCapture()
        try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        await #expect(throws: CaptureError.self) {
            try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        }
        await capturer.stopCapture()
        await capturer.stopCapture()
        try await capturer.startCapture(target: Dimensions(width: 640, height: 360))
        #expect(capturer.configuration?.granted.dimensions == Dimensions(width: 640, height: 360))
        await capturer.stopCapture()
    }

    @Test("a format the device does not list, or a bad rate, is a typed error")
    func badArguments() async throws {
        let capturer = CameraVideoCapturer()
        let device = try #require(capturer.captureDevices().first)
        let bogus = CaptureFormat(.yuyv, 123, 45, fps: [30])
        do {
            try await capturer.startCapture(device: device, format: bogus, fps: 30)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .formatNotSupported)
        }
        do {
            try await capturer.startCapture(device: device, format: device.formats[0], fps: 0)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        #expect(capturer.captureState != .running)
    }

    @Test("the synthetic camera draws a moving picture")
    func pictureMoves() async throws {
        let capturer = CameraVideoCapturer()
        capturer.outputPixelFormat = .i420
        capturer.isPaced = false
        let stream = capturer.frames(bufferingNewest: 8)
        try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        var planes: [[UInt8]] = []
        for await frame in stream {
            #expect(frame.buffer.format == .i420)
            planes.append(frame.buffer.packedBytes(plane: 0))
            if planes.count == 3 { break }
        }
        await capturer.stopCapture()
        #expect(planes.count == 3)
        #expect(planes[0] != planes[1] && planes[1] != planes[2])
    }
}
