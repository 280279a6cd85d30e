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

    @Test("the fuzzer's input parses or is refused, and what parses renders back to itself")
    func fuzzerInput() throws {
        // Not valid UTF-8: read as the fuzz target reads it, invalid bytes repaired.
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/format-list-interval-figures-disagree"))
        let text = String(decoding: bytes, as: UTF8.self)
        if let list = try? V4L2FormatList.parse(text) {
            #expect(try V4L2FormatList.parse(list.render()).render() == list.render())
        }
    }
}
