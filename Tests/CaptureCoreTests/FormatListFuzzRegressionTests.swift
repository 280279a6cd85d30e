import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// Inputs the `format-list` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("Format-list fuzz regressions")
struct FormatListFuzzRegressionTests {
    /// Found as a libFuzzer timeout: every interval line whose seconds and rate disagree searched a million
    /// numerators for a fraction printing both (0.5 s a line in a debug build, over 10 s for the input under ASan).
    /// Such figures are now refused at once, as any malformed line is.
    @Test("an interval whose seconds and fps no fraction can print is malformed, naming the line")
    func intervalFiguresDisagree() throws {
        let dump = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture

            \t[0]: 'YUYV' (YUYV 4:2:2)
            \t\tSize: Discrete 640x480
            \t\t\tInterval: Continuous 0.033s - 21.000s (1.000-30.000 fps)
            """
        let error = try #require(throws: CaptureError.self) { _ = try V4L2FormatList.parse(dump) }
        #expect(error.code == .malformedFormatList)
        #expect(error.message.hasPrefix("line 6:"), "\(error.message)")
    }

    /// Found as a second timeout: `0.033s (030.000 fps)` reads as numbers that agree, but no interval prints
    /// `030.000`, so every numerator up to a million was tried. Such a figure is now not a figure (printf writes no
    /// leading zero), and the search for the simplest fraction walks the Stern–Brocot tree instead of counting.
    @Test("a rate with a leading zero is malformed, naming the line")
    func rateWithLeadingZero() throws {
        let dump = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture

            \t[0]: 'YUYV' (YUYV 4:2:2)
            \t\tSize: Discrete 640x480
            \t\t\tInterval: Discrete 0.033s (030.000 fps)
            """
        let error = try #require(throws: CaptureError.self) { _ = try V4L2FormatList.parse(dump) }
        #expect(error.code == .malformedFormatList)
        #expect(error.message.hasPrefix("line 6:"), "\(error.message)")
    }

    @Test(
        "the fuzzer's inputs parse or are refused, and what parses renders back to itself",
        arguments: ["format-list-interval-figures-disagree", "format-list-fps-with-leading-zero"])
    func fuzzerInput(name: String) throws {
        // Not valid UTF-8: read as the fuzz target reads it, invalid bytes repaired.
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/\(name)"))
        let text = String(decoding: bytes, as: UTF8.self)
        if let list = try? V4L2FormatList.parse(text) {
            #expect(try V4L2FormatList.parse(list.render()).render() == list.render())
        }
    }

    @Test("an interval with an odd rate still parses to a fraction that prints both figures (a bound that is a tie)")
    func tieAtABound() throws {
        // 2449/16 = 153.0625 prints 153.062, so the simplest fraction of the range is not the answer.
        let dump = """
            ioctl: VIDIOC_ENUM_FMT
            \tType: Video Capture

            \t[0]: 'YUYV' (YUYV 4:2:2)
            \t\tSize: Discrete 640x480
            \t\t\tInterval: Discrete 0.007s (153.063 fps)

            """
        let list = try V4L2FormatList.parse(dump)
        #expect(list.render().contains("Interval: Discrete 0.007s (153.063 fps)"))
    }
}
