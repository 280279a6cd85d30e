import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

@Suite("Selections on every recorded device")
struct FixtureSelectionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var target: Dimensions
        var fpsLimit: Double = 30
        var preference: [PixelFormat] = PixelFormat.defaultPreference
        var pixelFormat: PixelFormat
        var dimensions: Dimensions
        var fps: Double
        var rule: SelectionRule
        var testDescription: String { "\(file) \(target)@\(fpsLimit) → \(pixelFormat) \(dimensions)@\(fps)" }
    }

    static let cases: [Case] = [
        // vivid: every format offers the same sizes and rates; NV12 wins by preference.
        Case(
            file: "vivid.txt", target: size(1280, 720), pixelFormat: .nv12, dimensions: size(1280, 720), fps: 12.5,
            rule: .preference),
        Case(
            file: "vivid.txt", target: size(640, 480), pixelFormat: .nv12, dimensions: size(640, 480), fps: 25,
            rule: .preference),
        Case(
            file: "vivid.txt", target: size(1920, 720), pixelFormat: .nv12, dimensions: size(1920, 1080), fps: 5,
            rule: .preference),
        Case(
            file: "vivid.txt", target: size(320, 180), fpsLimit: 60, pixelFormat: .nv12, dimensions: size(320, 180),
            fps: 60, rule: .preference),
        Case(
            file: "vivid.txt", target: size(640, 480), preference: [.yuyv], pixelFormat: .yuyv,
            dimensions: size(640, 480), fps: 25, rule: .preference),
        Case(
            file: "vivid.txt", target: size(640, 480), fpsLimit: 0.5, pixelFormat: .nv12,
            dimensions: size(640, 480), fps: 1, rule: .preference),
        // A UVC webcam: MJPG is the only way to 1280x720 at 30 fps.
        Case(
            file: "uvc-c920.txt", target: size(1280, 720), pixelFormat: .mjpg, dimensions: size(1280, 720), fps: 30,
            rule: .frameRate),
        Case(
            file: "uvc-c920.txt", target: size(1920, 1080), pixelFormat: .mjpg, dimensions: size(1920, 1080),
            fps: 30, rule: .frameRate),
        Case(
            file: "uvc-c920.txt", target: size(640, 480), pixelFormat: .yuyv, dimensions: size(640, 480), fps: 30,
            rule: .preference),
        Case(
            file: "uvc-c920.txt", target: size(1280, 720), fpsLimit: 10, pixelFormat: .yuyv,
            dimensions: size(1280, 720), fps: 10, rule: .preference),
        Case(
            file: "uvc-c920.txt", target: size(1280, 720), fpsLimit: 8, pixelFormat: .yuyv,
            dimensions: size(1280, 720), fps: 7.5, rule: .preference),
        Case(
            file: "uvc-c920.txt", target: size(1280, 720), preference: [.mjpg, .yuyv], pixelFormat: .mjpg,
            dimensions: size(1280, 720), fps: 30, rule: .frameRate),
        Case(
            file: "uvc-c920-old-layout.txt", target: size(1280, 720), pixelFormat: .mjpg,
            dimensions: size(1280, 720), fps: 30, rule: .frameRate),
        Case(
            file: "uvc-c920-old-layout.txt", target: size(1000, 700), pixelFormat: .mjpg,
            dimensions: size(960, 720), fps: 30, rule: .frameRate),
        // The example: on the MacBook M1 list, 1920x720 picks 1920x1080.
        Case(
            file: "macbook-m1.txt", target: size(1920, 720), pixelFormat: .nv12, dimensions: size(1920, 1080),
            fps: 30, rule: .distance),
        Case(
            file: "macbook-m1.txt", target: size(1080, 1920), pixelFormat: .nv12, dimensions: size(1080, 1920),
            fps: 30, rule: .distance),
        Case(
            file: "macbook-m1.txt", target: size(1500, 1500), pixelFormat: .nv12, dimensions: size(1552, 1552),
            fps: 30, rule: .distance),
        Case(
            file: "macbook-m1.txt", target: size(1700, 1300), pixelFormat: .nv12, dimensions: size(1760, 1328),
            fps: 30, rule: .distance),
        // Stepwise sizes: exact sizes on the grid, snapping off it.
        Case(
            file: "stepwise-bcm2835.txt", target: size(1280, 720), pixelFormat: .nv12, dimensions: size(1280, 720),
            fps: 30, rule: .preference),
        Case(
            file: "stepwise-bcm2835.txt", target: size(1281, 721), pixelFormat: .nv12, dimensions: size(1280, 720),
            fps: 30, rule: .preference),
        Case(
            file: "stepwise-bcm2835.txt", target: size(4000, 3000), pixelFormat: .nv12,
            dimensions: size(2592, 1944), fps: 30, rule: .preference),
        Case(
            file: "stepwise-bcm2835.txt", target: size(8, 8), preference: [.rgb3], pixelFormat: .rgb3,
            dimensions: size(32, 32), fps: 30, rule: .preference),
        // Continuous sizes.
        Case(
            file: "continuous.txt", target: size(1001, 577), pixelFormat: .nv12, dimensions: size(1001, 577),
            fps: 30, rule: .preference),
        Case(
            file: "continuous.txt", target: size(3000, 2000), pixelFormat: .nv12, dimensions: size(3000, 2000),
            fps: 30, rule: .distance),
        Case(
            file: "continuous.txt", target: size(1001, 577), preference: [.yuyv], pixelFormat: .yuyv,
            dimensions: size(1001, 577), fps: 30, rule: .preference),
        // Interval ranges and non-integer rates.
        Case(
            file: "interval-ranges.txt", target: size(1920, 1080), pixelFormat: .mjpg,
            dimensions: size(1920, 1080), fps: 30, rule: .frameRate),
        Case(
            file: "interval-ranges.txt", target: size(1920, 1080), fpsLimit: 60, pixelFormat: .mjpg,
            dimensions: size(1920, 1080), fps: 60, rule: .frameRate),
        Case(
            file: "interval-ranges.txt", target: size(1920, 1080), preference: [.yuyv],
            pixelFormat: .mjpg, dimensions: size(1920, 1080), fps: 30, rule: .frameRate),
        Case(
            file: "interval-ranges.txt", target: size(640, 480), fpsLimit: 24, pixelFormat: .yuyv,
            dimensions: size(640, 480), fps: 24, rule: .preference),
        Case(
            file: "interval-ranges.txt", target: size(1280, 720), fpsLimit: 60, pixelFormat: .mjpg,
            dimensions: size(1280, 720), fps: 60, rule: .frameRate),
        Case(
            file: "interval-ranges.txt", target: size(1280, 720), fpsLimit: 45, pixelFormat: .yuyv,
            dimensions: size(1280, 720), fps: 30, rule: .preference),
    ]

    @Test("the rules pick the expected format", arguments: cases)
    func selection(_ c: Case) throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/" + c.file))
        let request = FormatRequest(target: c.target, fpsLimit: c.fpsLimit, preference: c.preference)
        let selection = try #require(
            CaptureRules.selectFormat(from: list.formats, for: request, canConvert: convertible.contains))
        #expect(selection.pixelFormat == c.pixelFormat)
        #expect(selection.dimensions == c.dimensions)
        #expect(selection.fps == c.fps)
        #expect(selection.decidingRule == c.rule)
        #expect(selection.format == list.formats[selection.formatIndex])
        #expect(selection.format.size.contains(selection.dimensions))
    }

    @Test("the 29.97 fps interval is used when the limit allows it")
    func ntsc() throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/interval-ranges.txt"))
        let yuyv1080 = list.formats.filter { $0.pixelFormat == .yuyv && $0.size == .discrete(size(1920, 1080)) }
        let selection = try #require(
            CaptureRules.selectFormat(
                from: yuyv1080, for: FormatRequest(target: size(1920, 1080)), canConvert: { _ in true }))
        #expect(selection.fps == 30000.0 / 1001.0)
        let slow = try #require(
            CaptureRules.selectFormat(
                from: yuyv1080, for: FormatRequest(target: size(1920, 1080), fpsLimit: 20), canConvert: { _ in true }))
        #expect(slow.fps == 12.5)
    }

    @Test("a device with only greyscale and Bayer formats offers nothing convertible and is skipped")
    func unconvertibleDevice() throws {
        let ir = try RecordedDevice(name: "ir", text: Fixtures.text("devices/ir-grey-bayer.txt"), position: .front)
        let webcam = try RecordedDevice(name: "c920", text: Fixtures.text("devices/uvc-c920.txt"), position: .front)
        let m1 = try RecordedDevice(name: "m1", text: Fixtures.text("devices/macbook-m1.txt"), position: .external)
        #expect(
            CaptureRules.selectFormat(
                from: ir.device.formats, for: FormatRequest(target: size(640, 360)), canConvert: convertible.contains)
                == nil)
        let devices = [ir.device, webcam.device, m1.device]
        #expect(
            CaptureRules.selectDevice(from: devices, position: .front, canConvert: convertible.contains)?.id
                == "recorded:c920")
        #expect(
            CaptureRules.selectDevice(from: devices, position: .external, canConvert: convertible.contains)?.id
                == "recorded:m1")
        #expect(
            CaptureRules.selectDevice(from: devices, position: .back, canConvert: convertible.contains)?.id
                == "recorded:c920")
        #expect(CaptureRules.selectDevice(from: [ir.device], canConvert: convertible.contains) == nil)
        // A backend that converts everything (the recorded one) can use it.
        let grey = try #require(
            CaptureRules.selectFormat(
                from: ir.device.formats, for: FormatRequest(target: size(640, 360)), canConvert: { _ in true }))
        #expect(grey.pixelFormat == .grey)
        #expect(grey.fps == 30)
    }
}
