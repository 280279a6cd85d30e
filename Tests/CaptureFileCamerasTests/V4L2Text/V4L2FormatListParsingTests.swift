import Foundation
import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

@Suite("v4l2-ctl --list-formats-ext parser")
struct V4L2FormatListParsingTests {
    @Test("vivid's real dump: 83 pixel formats, YUYV first, sizes and 12-step interval table")
    func vivid() throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/vivid.txt"))
        #expect(list.bufferType == "Video Capture")
        #expect(list.entries.count == 83)
        let first = try #require(list.entries.first)
        #expect(first.pixelFormat.pixelFormat == .yuyv)
        #expect(first.pixelFormat.description == "YUYV 4:2:2")
        #expect(
            first.pixelFormat.flags == [.cscColorspace, .cscYCbCr, .cscQuantization, .cscTransferFunction])
        #expect(
            first.formats.map(\.size) == [
                .discrete(.init(width: 320, height: 180)), .discrete(.init(width: 640, height: 360)),
                .discrete(.init(width: 640, height: 480)), .discrete(.init(width: 1280, height: 720)),
                .discrete(.init(width: 1920, height: 1080)), .discrete(.init(width: 3840, height: 2160)),
            ])
        let intervals: [FrameInterval] = [
            .init(numerator: 1, denominator: 1), .init(numerator: 1, denominator: 2),
            .init(numerator: 1, denominator: 4), .init(numerator: 1, denominator: 5),
            .init(numerator: 1, denominator: 10), .init(numerator: 2, denominator: 25),
            .init(numerator: 1, denominator: 15), .init(numerator: 1, denominator: 25),
            .init(numerator: 1, denominator: 30), .init(numerator: 1, denominator: 40),
            .init(numerator: 1, denominator: 50), .init(numerator: 1, denominator: 60),
        ]
        #expect(first.formats[0].frameRates == .discrete(intervals))
        #expect(first.formats[5].frameRates == .discrete(Array(intervals.prefix(2))))
        // 'Y16 -BE' is Y16 with the big-endian bit; HSV formats print csc-hsv for the encoding bit.
        let y16be = list.entries[27].pixelFormat
        #expect(y16be.pixelFormat.fourCC == "Y16 -BE")
        #expect(y16be.pixelFormat.rawValue == (try #require(PixelFormat(fourCC: "Y16"))).rawValue | 1 << 31)
        #expect(list.entries[81].pixelFormat.flags.contains(.cscYCbCr))
        #expect(list.formats.count == 83 * 6)
    }

    @Test("a UVC webcam: YUYV and MJPG with 7.5 fps as 2/15")
    func uvc() throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/uvc-c920.txt"))
        #expect(list.pixelFormats.map(\.pixelFormat) == [.yuyv, .mjpg])
        #expect(list.pixelFormats[1].flags == .compressed)
        #expect(list.pixelFormats[1].description == "Motion-JPEG")
        let yuyv720 = try #require(list.formats.first { $0.pixelFormat == .yuyv && $0.size.maximum.width == 1280 })
        #expect(
            yuyv720.frameRates
                == .discrete([
                    .init(numerator: 1, denominator: 10), .init(numerator: 2, denominator: 15),
                    .init(numerator: 1, denominator: 5),
                ]))
    }

    @Test("both layouts give the same device (old layout with spaces, blank lines and CRLF)")
    func layoutsAgree() throws {
        let current = try V4L2FormatList.parse(Fixtures.text("devices/uvc-c920.txt"))
        let old = try V4L2FormatList.parse(Fixtures.text("devices/uvc-c920-old-layout.txt"))
        #expect(old == current)
        #expect(old.render() == current.render())
    }

    @Test("stepwise and continuous sizes")
    func sizeRanges() throws {
        let stepwise = try V4L2FormatList.parse(Fixtures.text("devices/stepwise-bcm2835.txt"))
        #expect(stepwise.entries.count == 14)
        #expect(stepwise.entries.allSatisfy { $0.formats.count == 1 })
        #expect(
            stepwise.formats[0].size
                == .stepwise(
                    min: .init(width: 32, height: 32), max: .init(width: 2592, height: 1944),
                    step: .init(width: 2, height: 2)))
        #expect(stepwise.formats[0].frameRates == .none)
        #expect(stepwise.pixelFormats[3].flags == .compressed)
        let continuous = try V4L2FormatList.parse(Fixtures.text("devices/continuous.txt"))
        #expect(
            continuous.formats.map(\.size) == [
                .continuous(min: .init(width: 16, height: 16), max: .init(width: 1920, height: 1080)),
                .continuous(min: .init(width: 2, height: 2), max: .init(width: 4096, height: 2160)),
            ])
    }

    @Test("stepwise and continuous intervals, 29.97 and 12.5 fps, repeated intervals kept, a format with no sizes")
    func intervalRanges() throws {
        let list = try V4L2FormatList.parse(Fixtures.text("devices/interval-ranges.txt"))
        let f = list.formats
        #expect(f[0].frameRates == .continuous(min: .init(numerator: 1, denominator: 30), max: .init(fps: 1)))
        #expect(
            f[1].frameRates
                == .stepwise(
                    min: .init(numerator: 1, denominator: 30), max: .init(fps: 1),
                    step: .init(numerator: 1, denominator: 30)))
        #expect(
            f[2].frameRates
                == .discrete([.init(numerator: 1001, denominator: 30000), .init(numerator: 2, denominator: 25)]))
        #expect(
            f[3].frameRates
                == .stepwise(
                    min: .init(fps: 60), max: .init(fps: 2), step: .init(fps: 60)))
        #expect(f[4].frameRates == .discrete([.init(fps: 60), .init(fps: 60), .init(fps: 30)]))
        #expect(f[5].frameRates == .none)
        #expect(list.entries[2].formats.isEmpty)
        #expect(list.entries[2].pixelFormat.pixelFormat == .h264)
    }

    @Test("header lines are optional; spaces work as indentation")
    func minimal() throws {
        let text = "[0]: 'NV12' (Y/UV 4:2:0)\n  Size: Discrete 640x480\n    Interval: Discrete 0.033s (30.000 fps)"
        let list = try V4L2FormatList.parse(text)
        #expect(list.bufferType == V4L2FormatList.videoCapture)
        #expect(list.formats == [CaptureFormat(.nv12, 640, 480, fps: [30])])
    }

    @Test("multiplanar type line, flags including unknown bits and descriptions with commas")
    func flagsAndTypes() throws {
        let text = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture Multiplanar

            \t[0]: 'NM12' (Y/UV 4:2:0 (N-C), emulated, csc-quantization, 0x00004000)
            \t[1]: 'MJPG' (, compressed)
            \t[2]: 'ABCD' (Y/CbCr 4:2:0 (64x32 MB, N-C))

            """
        let list = try V4L2FormatList.parse(text)
        #expect(list.bufferType == V4L2FormatList.videoCaptureMultiplanar)
        #expect(list.pixelFormats[0].description == "Y/UV 4:2:0 (N-C)")
        #expect(list.pixelFormats[0].flags.rawValue == 0x0002 | 0x0100 | 0x4000)
        #expect(list.pixelFormats[1].description == "")
        #expect(list.pixelFormats[1].flags == .compressed)
        #expect(list.pixelFormats[2].description == "Y/CbCr 4:2:0 (64x32 MB, N-C)")
        #expect(list.pixelFormats[2].flags == [])
        #expect(list.render() == text)
        // Through a device description and back, the type line survives.
        let device = list.device(id: "recorded:mplane", name: "mplane")
        #expect(device.isMultiplanar)
        #expect(V4L2FormatList(device).render() == text)
        #expect(V4L2FormatList(device, bufferType: V4L2FormatList.videoCapture).bufferType == "Video Capture")
    }

    @Test("old v4l2-ctl spacing '0.033 s' and intervals without an fps part")
    func oldFigures() throws {
        let text = """
            \tIndex       : 0
            \tType        : Video Capture
            \tPixel Format: 'YUYV'
            \tName        : YUYV 4:2:2
            \t\tSize: Discrete 640x480
            \t\t\tInterval: Discrete 0.033 s (30.000 fps)
            \t\tSize: Discrete 320x240
            \t\t\tInterval: Stepwise 0.033 s - 1.000 s with step 0.033 s
            """
        let list = try V4L2FormatList.parse(text)
        #expect(list.formats[0].frameRates == .discrete([.init(fps: 30)]))
        #expect(list.formats[1].frameRates == .stepwise(min: .init(fps: 30), max: .init(fps: 1), step: .init(fps: 30)))
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var file: String
        var line: Int
        var what: String
        var testDescription: String { file }
    }

    @Test(
        "each malformed dump names its line",
        arguments: [
            Malformed(file: "interval-before-size.txt", line: 5, what: "interval line outside a frame size"),
            Malformed(file: "size-before-format.txt", line: 4, what: "size line outside a pixel format"),
            Malformed(file: "bad-size.txt", line: 6, what: "bad discrete size"),
            Malformed(file: "unknown-size-type.txt", line: 5, what: "unknown size type"),
            Malformed(file: "fps-disagrees.txt", line: 7, what: "0.033s and 15.000 fps disagree"),
            Malformed(file: "unquoted-fourcc.txt", line: 4, what: "expected a quoted FourCC"),
            Malformed(file: "garbage-line.txt", line: 6, what: "unrecognised line"),
            Malformed(
                file: "mixed-interval-types.txt", line: 7,
                what: "a stepwise or continuous interval must be the only interval of its size"),
            Malformed(
                file: "old-layout-missing-pixel-format.txt", line: 4, what: "Name line without a Pixel Format line"),
            Malformed(file: "empty.txt", line: 1, what: "no format list found"),
            Malformed(file: "bad-fps-figure.txt", line: 6, what: "bad fps figure"),
        ])
    func malformed(_ c: Malformed) throws {
        #expect(try Fixtures.files(in: "devices/malformed").contains(c.file))
        let text = try Fixtures.text("devices/malformed/" + c.file)
        let error = try #require(throws: CaptureError.self) { try V4L2FormatList.parse(text) }
        #expect(error.code == .malformedFormatList)
        #expect(error.message.hasPrefix("line \(c.line): \(c.what)"), "\(error.message)")
        // The message ends with the offending line itself (trimmed).
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let offending = c.line <= lines.count ? lines[c.line - 1].trimmingCharacters(in: .whitespaces) : ""
        #expect(error.message.hasSuffix(": " + offending), "\(error.message)")
    }

    @Test("every malformed fixture is in the table above")
    func malformedCoverage() throws {
        #expect(try Fixtures.files(in: "devices/malformed").count == 11)
    }

    @Test(
        "more malformed lines",
        arguments: [
            ("ioctl: VIDIOC_QUERYCAP", 1, "not a VIDIOC_ENUM_FMT listing"),
            ("[x]: 'YUYV' (YUYV)", 1, "format index is not a number"),
            ("[0] 'YUYV' (YUYV)", 1, "expected ':' after the format index"),
            ("[0]: 'YUYV' YUYV", 1, "expected '(description)' after the FourCC"),
            ("[0]: 'TOOLONG' (x)", 1, "'TOOLONG' is not a FourCC"),
            ("[0]: 'YUYV' (x)\nSize: Stepwise 1x1 - 2x2", 2, "bad stepwise size"),
            ("[0]: 'YUYV' (x)\nSize: Continuous", 2, "bad continuous size"),
            ("[0]: 'YUYV' (x)\nSize: Discrete 1x1\nInterval: Sometimes 0.033s", 3, "unknown interval type"),
            (
                "[0]: 'YUYV' (x)\nSize: Discrete 1x1\nInterval: Discrete 0.033s (30.000 fps) extra", 3,
                "unexpected text after the interval"
            ),
            (
                "[0]: 'YUYV' (x)\nSize: Discrete 1x1\nInterval: Continuous 0.033s (30.000 fps)", 3,
                "bad continuous interval"
            ),
            ("[0]: 'YUYV' (x)\nSize: Discrete 1x1\nInterval: Discrete inf s (0.000 fps)", 3, "bad discrete interval"),
            ("Type: Video Capture\nType: Video Output", 2, "buffer type changes from 'Video Capture'"),
            ("Index : 0\n[0]: 'YUYV' (x)", 1, "format entry has no Pixel Format line"),
            ("Index : 0", 1, "format entry has no Pixel Format line"),
            ("Index : zero", 1, "format index is not a number"),
            ("Pixel Format: 'YUYV' (compressed, shiny)", 1, "unknown format flag 'shiny'"),
            ("[0]: 'YUYV' (x)\n[1]: 'MJPG' (y)\nioctl: VIDIOC_ENUM_FMT", 3, "a second listing starts here"),
        ])
    func malformedLines(_ text: String, _ line: Int, _ what: String) throws {
        let error = try #require(throws: CaptureError.self) { try V4L2FormatList.parse(text) }
        #expect(error.code == .malformedFormatList)
        #expect(error.message.hasPrefix("line \(line): \(what)"), "\(error.message)")
    }
}
