import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

/// Inputs the `format-list` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("Format-list fuzz regressions")
struct FormatListFuzzRegressionTests {
    /// One VGA YUYV format whose only interval line (line 6) is `interval`.
    static func dump(interval: String) -> String {
        "ioctl: VIDIOC_ENUM_FMT\n\tType: Video Capture\n\n\t[0]: 'YUYV' (YUYV 4:2:2)\n\t\tSize: Discrete 640x480\n"
            + "\t\t\tInterval: \(interval)\n"
    }

    /// Both found as libFuzzer timeouts. Seconds and a rate that disagree (`21.000s` at `1.000 fps`) searched a million
    /// numerators for a fraction printing both (0.5 s a line in a debug build, over 10 s for the input under ASan); so
    /// did `030.000 fps`, which agrees as a number but which no interval prints. Such figures are now refused at once
    /// (printf writes no leading zero), and the simplest fraction comes from a Stern–Brocot walk, not a count.
    @Test(
        "interval figures no fraction can print are malformed, naming the line",
        arguments: ["Continuous 0.033s - 21.000s (1.000-30.000 fps)", "Discrete 0.033s (030.000 fps)"])
    func unprintableFigures(interval: String) throws {
        let error = try #require(throws: CaptureError.self) {
            _ = try V4L2FormatList.parse(Self.dump(interval: interval))
        }
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
        let list = try V4L2FormatList.parse(Self.dump(interval: "Discrete 0.007s (153.063 fps)"))
        #expect(list.render().contains("Interval: Discrete 0.007s (153.063 fps)"))
    }
}
