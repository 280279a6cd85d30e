import CaptureCore
import SystemPackage
import Testing

@testable import CaptureV4L2

/// The ioctl layer's errno handling (no hardware).
@Suite("V4L2 ioctl layer")
struct IoctlTests {
    @Test("EINTR is retried, on ioctls and on poll")
    func interruptRetried() throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        driver.fail("VIDIOC_QUERYCAP", with: .interrupted, .interrupted)
        driver.fail("poll", with: .interrupted)
        let handle = try V4L2Handle.open("/dev/video0", driver: driver)
        #expect(try handle.queryCapability().card == "Fake Camera")
        #expect(driver.count("VIDIOC_QUERYCAP") == 3)
        #expect(try handle.poll(events: 1, timeoutMs: 1) == 0)
        handle.close()
        #expect(driver.nothingLeaked)
    }

    @Test("EAGAIN from VIDIOC_DQBUF means no frame yet, not an error")
    func againIsNoFrame() throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let handle = try V4L2Handle.open("/dev/video0", driver: driver)
        _ = try handle.setFormat(.videoCapture, pixelFormat: .yuyv, dimensions: FakeCamera.vga)
        #expect(try handle.requestBuffers(.videoCapture, count: 2) == 2)
        try handle.queueBuffer(.videoCapture, index: 0)
        try handle.streamOn(.videoCapture)
        driver.script([.again, .frame(timestampNs: 5_000)])
        #expect(try handle.dequeueBuffer(.videoCapture) == nil)
        let buffer = try #require(try handle.dequeueBuffer(.videoCapture))
        #expect(buffer.index == 0)
        #expect(buffer.monotonicTimestampNs == 5_000)
        #expect(!buffer.hasError)
    }

    @Test("an error carries the call's name and errno")
    func errorNamesCall() throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        driver.fail("VIDIOC_S_FMT", with: .invalidArgument)
        let handle = try V4L2Handle.open("/dev/video0", driver: driver)
        #expect(throws: V4L2Error(call: "VIDIOC_S_FMT", errno: .invalidArgument)) {
            try handle.setFormat(.videoCapture, pixelFormat: .yuyv, dimensions: FakeCamera.vga)
        }
        #expect(
            V4L2Error(call: "VIDIOC_S_FMT", errno: .invalidArgument).description
                == "VIDIOC_S_FMT failed: Invalid argument (22)")
    }

    @Test(
        "errno meanings",
        arguments: [
            ("open", Errno.noSuchFileOrDirectory, CaptureError.Code.deviceNotFound),
            ("open", .permissionDenied, .permissionDenied), ("open", .notPermitted, .permissionDenied),
            ("VIDIOC_S_FMT", .resourceBusy, .deviceBusy), ("VIDIOC_REQBUFS", .resourceBusy, .deviceBusy),
            ("VIDIOC_STREAMON", .noSpace, .bandwidthExceeded), ("VIDIOC_S_FMT", .invalidArgument, .formatNotSupported),
            ("VIDIOC_DQBUF", .noDevice, .deviceDisconnected), ("VIDIOC_QBUF", .ioError, .deviceDisconnected),
            ("VIDIOC_QUERYCAP", .inappropriateIOCTLForDevice, .notACaptureDevice),
            ("VIDIOC_G_PARM", .invalidArgument, .driverError),
        ])
    func errnoMeaning(call: String, errno: Errno, code: CaptureError.Code) {
        let error = CaptureError(V4L2Error(call: call, errno: errno), device: "/dev/video0")
        #expect(error.code == code)
        #expect(error.call == call)
        #expect(error.errno == errno)
        #expect(error.device == "/dev/video0")
    }
}
