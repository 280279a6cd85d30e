import CaptureCore
import SystemPackage
import Testing

@testable import CaptureV4L2

/// Starting a session: negotiation, read-back, and typed errors with nothing leaked on any path (no hardware).
@Suite("V4L2 session start")
struct SessionStartTests {
    @Test("start reads back what the driver set: size, bytes per line, granted rate")
    func grantedIsReadBack() async throws {
        var device = FakeCamera.webcam()
        device.grantedSize = Dimensions(width: 320, height: 240)
        device.grantedInterval = FrameInterval(fps: 15)
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let recorder = EventRecorder()
        let session = FakeCamera.session(driver, recorder)
        try await session.start()
        #expect(
            session.granted
                == GrantedFormat(
                    pixelFormat: .yuyv, dimensions: Dimensions(width: 320, height: 240), fps: 15,
                    bytesPerLine: 320 * 2 + 64))
        #expect(driver.count("VIDIOC_REQBUFS") == 1)
        #expect(driver.count("VIDIOC_QUERYBUF") == 4)
        #expect(driver.count("VIDIOC_QBUF") == 4)
        #expect(driver.accounting.mmaps == 4)
        await session.stop()
        #expect(driver.nothingLeaked)
        #expect(recorder.ended.isEmpty)
    }

    @Test(
        "a failing call at start gives its typed error and leaks no descriptor or mapping",
        arguments: [
            ("VIDIOC_QUERYCAP", Errno.inappropriateIOCTLForDevice, CaptureError.Code.notACaptureDevice),
            ("VIDIOC_S_FMT", .invalidArgument, .formatNotSupported), ("VIDIOC_S_FMT", .resourceBusy, .deviceBusy),
            ("VIDIOC_S_PARM", .invalidArgument, .driverError), ("VIDIOC_REQBUFS", .resourceBusy, .deviceBusy),
            ("VIDIOC_QUERYBUF", .invalidArgument, .driverError), ("mmap", .noMemory, .driverError),
            ("VIDIOC_QBUF", .invalidArgument, .driverError), ("VIDIOC_STREAMON", .noSpace, .bandwidthExceeded),
        ])
    func failuresDoNotLeak(call: String, errno: Errno, code: CaptureError.Code) async throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        // Fail the second mmap / QUERYBUF / QBUF, so some buffers are already mapped or queued when it fails.
        if ["mmap", "VIDIOC_QUERYBUF", "VIDIOC_QBUF"].contains(call) {
            driver.failAfter(call, successes: 1, with: errno)
        } else {
            driver.fail(call, with: errno)
        }
        let recorder = EventRecorder()
        let session = FakeCamera.session(driver, recorder)
        let error = try await #require(throws: CaptureError.self) { try await session.start() }
        #expect(error.code == code)
        #expect(error.device == "/dev/video0")
        #expect(error.call == call)
        #expect(driver.nothingLeaked)
        await session.stop()
        await session.stop()
        #expect(recorder.ended.isEmpty)
    }

    @Test("a format the driver substitutes is refused as not supported")
    func substitutedFormat() async throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        var configuration = FakeCamera.configuration()
        configuration.format = CaptureFormat(.nv12, 640, 480, fps: [30])  // The fake device has no NV12: EINVAL.
        let session = V4L2Session(
            configuration: configuration, events: EventRecorder().events, driver: driver,
            conversion: FakeCamera.conversion)
        let error = try await #require(throws: CaptureError.self) { try await session.start() }
        #expect(error.code == .formatNotSupported)
        #expect(driver.nothingLeaked)
    }

    @Test("a driver that sets a 0x0 frame size is refused as not supported, leaking nothing")
    func zeroSize() async throws {
        var camera = FakeCamera.webcam()
        camera.grantedSize = Dimensions(width: 0, height: 0)
        let driver = FakeV4L2Driver(devices: ["/dev/video0": camera])
        let session = FakeCamera.session(driver, EventRecorder())
        let error = try await #require(throws: CaptureError.self) { try await session.start() }
        #expect(error.code == .formatNotSupported)
        #expect(driver.nothingLeaked)
    }

    @Test("a missing node is deviceNotFound; starting twice is invalidState")
    func missingAndTwice() async throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let missing = FakeCamera.session(driver, EventRecorder(), node: "/dev/video7")
        #expect(try await #require(throws: CaptureError.self) { try await missing.start() }.code == .deviceNotFound)
        let session = FakeCamera.session(driver, EventRecorder())
        try await session.start()
        #expect(try await #require(throws: CaptureError.self) { try await session.start() }.code == .invalidState)
        await session.stop()
        #expect(driver.nothingLeaked)
    }
}
