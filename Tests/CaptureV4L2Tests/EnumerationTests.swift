import CaptureCore
import Testing

@testable import CaptureV4L2

/// Format, size and interval enumeration against a fake device (no hardware).
@Suite("V4L2 enumeration")
struct EnumerationTests {
    @Test("discrete sizes and intervals are listed in driver order; every pixel format is kept")
    func discrete() throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let device = try FakeCamera.backend(driver).scanner.describe("/dev/video0")
        #expect(device.pixelFormats.map(\.pixelFormat) == [.yuyv, .h264])
        #expect(device.pixelFormats[0].description == "YUYV 4:2:2")
        #expect(device.pixelFormats[1].flags == .compressed)
        #expect(
            device.formats == [
                CaptureFormat(.yuyv, 640, 480, fps: [30, 15]), CaptureFormat(.yuyv, 320, 240, fps: [30]),
                CaptureFormat(.h264, 640, 480, fps: [30]),
            ])
        #expect(device.name == "Fake Camera")
        #expect(device.driver == "fakecam")
        #expect(device.bus == "usb-0000:00:14.0-1")
        #expect(device.kind == .v4l2)
        #expect(driver.nothingLeaked)
    }

    @Test("format flags are translated from the kernel's V4L2_FMT_FLAG_* bits")
    func flags() {
        // COMPRESSED | CSC_COLORSPACE | CSC_XFER_FUNC (0x40) | CSC_QUANTIZATION (0x100), as vivid's 'YUVO' reports.
        #expect(
            PixelFormatFlags(v4l2: 0x1 | 0x20 | 0x40 | 0x100)
                == [.compressed, .cscColorspace, .cscTransferFunction, .cscQuantization])
        #expect(PixelFormatFlags(v4l2: 0x80) == .cscYCbCr)
    }

    @Test("a stepwise size range is one entry; its intervals are enumerated at the largest size")
    func stepwiseSizes() throws {
        var device = FakeCamera.webcam()
        let min = Dimensions(width: 16, height: 16)
        let max = Dimensions(width: 1920, height: 1080)
        let step = Dimensions(width: 2, height: 2)
        device.formats = [
            .init(
                pixelFormat: .nv12, description: "Y/UV 4:2:0",
                sizes: .stepwise(
                    min: min, max: max, step: step,
                    .stepwise(
                        min: FrameInterval(fps: 60), max: FrameInterval(fps: 1),
                        step: FrameInterval(numerator: 1, denominator: 1000))))
        ]
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let described = try FakeCamera.backend(driver).scanner.describe("/dev/video0")
        #expect(
            described.formats == [
                CaptureFormat(
                    pixelFormat: .nv12, size: .stepwise(min: min, max: max, step: step),
                    frameRates: .stepwise(
                        min: FrameInterval(fps: 60), max: FrameInterval(fps: 1),
                        step: FrameInterval(numerator: 1, denominator: 1000)))
            ])
        #expect(driver.intervalQueries == [max])
    }

    @Test("continuous sizes with continuous intervals")
    func continuous() throws {
        var device = FakeCamera.webcam()
        let min = Dimensions(width: 48, height: 32)
        let max = Dimensions(width: 4096, height: 2160)
        device.formats = [
            .init(
                pixelFormat: .yuyv, description: "YUYV",
                sizes: .continuous(
                    min: min, max: max, .continuous(min: FrameInterval(fps: 120), max: FrameInterval(fps: 1))))
        ]
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let described = try FakeCamera.backend(driver).scanner.describe("/dev/video0")
        #expect(
            described.formats == [
                CaptureFormat(
                    pixelFormat: .yuyv, size: .continuous(min: min, max: max),
                    frameRates: .continuous(min: FrameInterval(fps: 120), max: FrameInterval(fps: 1)))
            ])
    }

    @Test("a size with no interval listed reports no rates, not a guessed one")
    func noIntervals() throws {
        var device = FakeCamera.webcam()
        device.formats = [
            .init(pixelFormat: .yuyv, description: "YUYV", sizes: .discrete([(FakeCamera.vga, .discrete([]))]))
        ]
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let described = try FakeCamera.backend(driver).scanner.describe("/dev/video0")
        #expect(
            described.formats == [CaptureFormat(pixelFormat: .yuyv, size: .discrete(FakeCamera.vga), frameRates: .none)]
        )
        #expect(!driver.calls.contains("VIDIOC_TRY_FMT"))
    }
}
