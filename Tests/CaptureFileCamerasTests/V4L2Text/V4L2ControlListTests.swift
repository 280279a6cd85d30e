import Foundation
import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

@Suite("v4l2-ctl control listings")
struct V4L2ControlListTests {
    static let dumps = (try? Fixtures.files(in: "devices/controls").filter { $0.hasSuffix(".txt") }) ?? []

    @Test("every recorded dump renders back byte for byte", arguments: dumps)
    func roundTrip(file: String) throws {
        let text = try Fixtures.text("devices/controls/" + file)
        let list = try V4L2ControlList.parse(text)
        #expect(list.render() == text)
        #expect(!list.controls.isEmpty)
    }

    @Test("the fixture folder holds dumps of every layout")
    func layouts() throws {
        let layouts = try Set(
            Self.dumps.map { try V4L2ControlList.parse(Fixtures.text("devices/controls/" + $0)).layout })
        #expect(layouts == [.current, .withIDs, .withoutIDs])
    }

    @Test("vivid: every type, flags, menus and classes are read")
    func vivid() throws {
        let list = try V4L2ControlList.parse(Fixtures.text("devices/controls/vivid.txt"))
        #expect(list.layout == .current)
        let headings = list.entries.filter { $0.description.type == .controlClass }.map(\.description)
        #expect(headings.map(\.name) == ["User Controls", "Digital Video Controls", "Vivid Controls"])
        #expect(headings.first?.id == 0x0098_0001)
        let gain = try #require(list.control("gain"))
        #expect(gain.description.flags == [.inactive, .volatile])
        #expect(gain.value == .integer(15))
        let int64 = try #require(list.control("integer_64_bits"))
        #expect(int64.description.type == .integer64)
        #expect(int64.description.minimum == .min && int64.description.maximum == .max)
        let bitmask = try #require(list.control("bitmask"))
        #expect(bitmask.value == .bitmask(0x8000_2000))
        #expect(bitmask.description.maximum == 0x8040_2010)
        let menu = try #require(list.control("menu"))
        #expect(menu.value == .menu(3))
        #expect(menu.description.menuItems.map(\.index) == [1, 3, 4])
        let integerMenu = try #require(list.control("integer_menu"))
        #expect(integerMenu.description.menuItems.first == ControlMenuItem(index: 2, value: 2))
        #expect(integerMenu.description.menuItems.last == ControlMenuItem(index: 8, value: 42))
        let string = try #require(list.control("0x0098f905"))
        #expect(string.value == .string("  "))
        #expect(string.description.flags == .hasPayload)
        let matrix = try #require(list.control("u16_8x16_matrix"))
        #expect(matrix.description.dimensions == [8, 16])
        #expect(matrix.description.elementCount == 128)
        let area = try #require(list.control("area"))
        #expect(area.value == .payload([0xe8, 0x03, 0, 0, 0xd0, 0x07, 0, 0]))
        let dynamic = try #require(list.control("u32_dynamic_array"))
        #expect(dynamic.description.flags == [.hasPayload, .dynamicArray])
        let button = try #require(list.control("button"))
        #expect(button.description.flags == [.writeOnly, .executeOnWrite])
        #expect(button.value == nil)
    }

    @Test("older layouts: ids absent, menu values bare")
    func olderLayouts() throws {
        let lifecam = try V4L2ControlList.parse(Fixtures.text("devices/controls/uvc-lifecam-without-ids.txt"))
        #expect(lifecam.layout == .withoutIDs)
        #expect(lifecam.control("exposure_auto")?.value == .menu(1))
        let logitech = try V4L2ControlList.parse(Fixtures.text("devices/controls/uvc-logitech-with-ids.txt"))
        #expect(logitech.layout == .withIDs)
        #expect(
            logitech.control("exposure_auto")?.description.menuItems.map(\.label) == [
                "Manual Mode", "Aperture Priority Mode",
            ])
        // Rendered in the current layout, menu values gain their item names.
        var current = logitech
        current.layout = .current
        #expect(current.render().contains("value=1 (Manual Mode)\n"))
        #expect(current.render().contains("value=2 (60 Hz)\n"))
    }

    @Test("a --list-ctrls dump (no menu items) keeps the selected items' names and lists no items")
    func listCtrls() throws {
        let list = try V4L2ControlList.parse(Fixtures.text("devices/controls/uvc-current-list-ctrls.txt"))
        #expect(list.layout == .current)
        #expect(!list.listsMenuItems)
        let exposure = try #require(list.control("auto_exposure"))
        #expect(exposure.value == .menu(3))
        #expect(exposure.valueLabel == "Aperture Priority Mode")
        #expect(exposure.description.menuItems.isEmpty)  // unknown: a write is checked against the range only
        #expect(list.control("power_line_frequency")?.valueLabel == "50 Hz")
        #expect(try V4L2ControlList.parse(Fixtures.text("devices/controls/vivid.txt")).listsMenuItems)
    }

    @Test("the driver name becomes v4l2-ctl's key as name2var does")
    func keys() {
        #expect(ControlDescription.key(for: "White Balance Temperature, Auto") == "white_balance_temperature_auto")
        #expect(ControlDescription.key(for: "Exposure, Dynamic Framerate") == "exposure_dynamic_framerate")
        #expect(ControlDescription.key(for: "Integer 32 Bits") == "integer_32_bits")
        #expect(ControlDescription.key(for: "  (Weird)  name! ") == "weird_name")
    }

    @Test(
        "malformed listings are refused with the line",
        arguments: [
            ("brightness 0x00980900 (wat)    : min=0", "unknown control type"),
            ("brightness 0x00980900 (int)    : min=x max=1 step=1 default=0 value=0", "min is not a number"),
            ("\t\t\t\t1: Manual Mode", "a menu item outside a menu control"),
            ("brightness 0x00980900 (int)    : min=0 max=1 step=1 default=0 value=0 flags=shiny", "unknown flag"),
            ("", "no control found"),
            ("just some text", "no control found"),
            ("  indented nonsense", "unrecognised line"),
            (
                "a 0x00980900 (int)    : min=0 max=1 step=1 default=0 value=0\nb (int)    : min=0 max=1 step=1 default=0 value=0",
                "some controls have a hex id"
            ),
        ])
    func malformed(text: String, message: String) {
        #expect {
            try V4L2ControlList.parse(text)
        } throws: { error in
            guard let error = error as? CaptureError else { return false }
            return error.code == .malformedControlList && error.message.contains(message)
        }
    }

    @Test("a listing survives JSON")
    func codable() throws {
        let list = try V4L2ControlList.parse(Fixtures.text("devices/controls/vivid.txt"))
        let data = try JSONEncoder().encode(list)
        #expect(try JSONDecoder().decode(V4L2ControlList.self, from: data) == list)
    }
}
