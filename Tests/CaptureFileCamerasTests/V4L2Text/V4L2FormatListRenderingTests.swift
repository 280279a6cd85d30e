import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

@Suite("v4l2-ctl --list-formats-ext printer")
struct V4L2FormatListRenderingTests {
    /// Every dump written in the current layout, including vivid's real 4070-line one.
    static let currentLayout = [
        "vivid.txt", "uvc-c920.txt", "macbook-m1.txt", "stepwise-bcm2835.txt", "continuous.txt",
        "interval-ranges.txt", "ir-grey-bayer.txt",
    ]

    @Test("parse then render is byte-identical", arguments: currentLayout)
    func roundTrip(_ file: String) throws {
        let text = try Fixtures.text("devices/" + file)
        let rendered = try V4L2FormatList.parse(text).render()
        if rendered != text {
            let expected = text.split(separator: "\n", omittingEmptySubsequences: false)
            let got = rendered.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(expected, got).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("first difference at line \((first?.offset ?? min(expected.count, got.count)) + 1)")
        }
        #expect(rendered == text)
    }

    @Test("every device fixture is covered by these tests")
    func coverage() throws {
        #expect(try Fixtures.deviceFiles() == (Self.currentLayout + ["uvc-c920-old-layout.txt"]).sorted())
        for file in try Fixtures.deviceFiles() {
            let device = try Fixtures.device(file)
            #expect(device.id == "recorded:" + file)
            #expect(!device.pixelFormats.isEmpty)
        }
    }

    @Test("the old layout renders as the current layout of the same camera")
    func oldLayout() throws {
        let old = try V4L2FormatList.parse(Fixtures.text("devices/uvc-c920-old-layout.txt"))
        #expect(try old.render() == Fixtures.text("devices/uvc-c920.txt"))
    }

    @Test("through CaptureDevice and back, the text is unchanged", arguments: currentLayout)
    func deviceRoundTrip(_ file: String) throws {
        let text = try Fixtures.text("devices/" + file)
        let list = try V4L2FormatList.parse(text)
        let device = list.device(id: "recorded:\(file)", name: file)
        #expect(device.pixelFormats == list.pixelFormats)
        #expect(device.formats == list.formats)
        #expect(V4L2FormatList(device).render() == text)
    }

    @Test("a programmatic list: header only for formats without sizes, flags in table order, -BE, unknown bits")
    func programmatic() throws {
        let y16be = PixelFormat(rawValue: try #require(PixelFormat(fourCC: "Y16")).rawValue | 1 << 31)
        let hsv = try #require(PixelFormat(fourCC: "HSV4"))
        let list = V4L2FormatList(
            pixelFormats: [
                .init(pixelFormat: .yuyv, description: "YUYV 4:2:2", flags: [.cscTransferFunction, .cscColorspace]),
                .init(pixelFormat: y16be, description: "16-bit Greyscale BE"),
                .init(pixelFormat: hsv, description: "32-bit XHSV 8-8-8-8", flags: [.cscYCbCr, .metaLineBased]),
                .init(pixelFormat: .h264, description: "H.264", flags: PixelFormatFlags(rawValue: 0x0001 | 0x8000)),
            ],
            formats: [
                CaptureFormat(.yuyv, 640, 480, fps: [30, 15]),
                CaptureFormat(
                    pixelFormat: y16be,
                    size: .stepwise(
                        min: .init(width: 2, height: 2), max: .init(width: 8, height: 8),
                        step: .init(width: 2, height: 2)),
                    frameRates: .discrete([.init(fps: 30)])),
                CaptureFormat(pixelFormat: .nv12, size: .discrete(.init(width: 4, height: 4)), frameRates: .none),
            ])
        let expected = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture

            \t[0]: 'YUYV' (YUYV 4:2:2, csc-colorspace, csc-xfer-func)
            \t\tSize: Discrete 640x480
            \t\t\tInterval: Discrete 0.033s (30.000 fps)
            \t\t\tInterval: Discrete 0.067s (15.000 fps)
            \t[1]: 'Y16 -BE' (16-bit Greyscale BE)
            \t\tSize: Stepwise 2x2 - 8x8 with step 2/2
            \t[2]: 'HSV4' (32-bit XHSV 8-8-8-8, csc-hsv, meta-line-based)
            \t[3]: 'H264' (H.264, compressed, 0x00008000)
            \t[4]: 'NV12' (NV12)
            \t\tSize: Discrete 4x4

            """
        #expect(list.render() == expected)
        // Parsing it back gives the same list, except the stepwise size's rates, which v4l2-ctl does not print.
        var printable = list
        printable.entries[1].formats[0].frameRates = .none
        #expect(try V4L2FormatList.parse(expected) == printable)
    }

    @Test("an empty device prints the header only")
    func empty() {
        #expect(V4L2FormatList(entries: []).render() == "ioctl: VIDIOC_ENUM_FMT\n\tType: Video Capture\n\n")
    }

    @Test(
        "interval figures: printf %.3f of numerator/denominator and denominator/numerator",
        arguments: [
            (FrameInterval(fps: 30), "Discrete 0.033s (30.000 fps)"),
            (FrameInterval(numerator: 2, denominator: 25), "Discrete 0.080s (12.500 fps)"),
            (FrameInterval(numerator: 1001, denominator: 30000), "Discrete 0.033s (29.970 fps)"),
            (FrameInterval(numerator: 1, denominator: 16), "Discrete 0.062s (16.000 fps)"),
            (FrameInterval(numerator: 3, denominator: 1), "Discrete 3.000s (0.333 fps)"),
        ])
    func figures(_ interval: FrameInterval, _ line: String) {
        #expect(
            V4L2FormatList(entries: [
                .init(
                    pixelFormat: .init(pixelFormat: .yuyv, description: "x"),
                    formats: [
                        .init(
                            pixelFormat: .yuyv, size: .discrete(.init(width: 1, height: 1)),
                            frameRates: .discrete([interval]))
                    ])
            ]).render().hasSuffix("\t\t\tInterval: " + line + "\n"))
    }
}
