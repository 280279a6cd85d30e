import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

/// Inputs the `control-list` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("Control-list fuzz regressions")
struct ControlListFuzzRegressionTests {
    /// Found as a broken invariant: vivid's dump with one menu item line overwritten. The value line said
    /// `value=3 (No Movement)` but item 3 was listed as `No045 (button) : value=0 flags=…`; the list rendered the value
    /// with the listed name, and that line no longer parsed.
    /// Found as a broken invariant in the 600 s run: an area control whose line had neither value nor
    /// `flags=has-payload` rendered as `value=0`, which is not an area. An area now always renders `WxH`.
    @Test("an area line without a value renders as an area (0x0) and the list survives render and parse")
    func areaWithoutValue() throws {
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/control-list-area-without-value"))
        let list = try V4L2ControlList.parse(String(decoding: bytes, as: UTF8.self))
        let rendered = list.render()
        #expect(rendered.contains("(area)   : value=0x0"))
        #expect(try V4L2ControlList.parse(rendered).render() == rendered)
    }

    @Test("a menu value naming another item than the one listed is malformed, naming both")
    func valueNamesAnotherItem() throws {
        // The fuzzer's input (vivid's dump with an item line overwritten) is refused; a minimal one names both.
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/control-list-value-names-another-item"))
        #expect(throws: CaptureError.self) { _ = try V4L2ControlList.parse(String(decoding: bytes, as: UTF8.self)) }
        let dump = """

            User Controls

                                       menu 0x0098f904 (menu)   : min=1 max=4 default=3 value=3 (Menu Item 3)
            \t\t\t\t1: Menu Item 1
            \t\t\t\t3: Something Else

            """
        let error = try #require(throws: CaptureError.self) { _ = try V4L2ControlList.parse(dump) }
        #expect(error.code == .malformedControlList)
        #expect(
            error.message.contains("the value names 'Menu Item 3' but menu item 3 is listed as 'Something Else'"),
            "\(error.message)")
    }

    /// Found as a broken invariant in the third 600 s run: a damaged control line (`User Contro      contrast
    /// 0x00980901 (int) : …`) read as a class heading, whose rendering did not read back the same. A heading with a
    /// colon is now refused: no class name has one.
    @Test("a line that is neither a control nor a heading (it has a colon) is malformed")
    func headingWithColon() throws {
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/control-list-heading-with-colon"))
        let error = try #require(throws: CaptureError.self) {
            _ = try V4L2ControlList.parse(String(decoding: bytes, as: UTF8.self))
        }
        #expect(error.code == .malformedControlList)
        #expect(error.message.contains("neither a control nor a class heading"), "\(error.message)")
    }

    /// Found as a crash (arithmetic overflow) in the fourth 600 s run, after 116,194 executions: a string control
    /// declaring `max=9223372036854775807` made its element size `max + 1`. Dimensions that multiply past 2³² were
    /// the same trap. Both are now computed without overflowing, and too many elements is malformed.
    @Test("a string control with max = Int64.max, or dimensions past 2^32 elements, does not crash the parser")
    func hugeDeclaredSizes() throws {
        let bytes = try Data(contentsOf: Fixtures.url("fuzz/regressions/control-list-string-max-int64"))
        #expect(throws: CaptureError.self) { _ = try V4L2ControlList.parse(String(decoding: bytes, as: UTF8.self)) }
        let string = """

            User Controls

                                     string 0x0098f905 (str)    : min=0 max=9223372036854775807 step=1 value='ab' flags=has-payload

            """
        let list = try V4L2ControlList.parse(string)
        #expect(list.entries.last?.description.elementSize == UInt32.max)
        let dims = """

            User Controls

                          u8_array 0x0098f90a (u8)     : min=16 max=32 step=1 default=24 dims=[65536][65536] flags=has-payload

            """
        let error = try #require(throws: CaptureError.self) { _ = try V4L2ControlList.parse(dims) }
        #expect(error.message.contains("more than 2^32 elements"), "\(error.message)")
    }

    @Test("ranges spanning all of Int64 with a step: on-step checks and the nearest valid value do not overflow")
    func wideRangesWithAStep() {
        let range = ControlRange(minimum: .min, maximum: .max, step: 3)
        #expect(range.isOnStep(.min))
        #expect(range.isOnStep(.max) == (UInt64.max % 3 == 0))
        #expect(range.contains(range.nearestValid(.max)))
        #expect(range.isOnStep(range.nearestValid(12345)))
    }
}
