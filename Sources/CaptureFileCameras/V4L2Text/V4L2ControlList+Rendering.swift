import CaptureCore

extension V4L2ControlList {
    /// The list as `v4l2-ctl --list-ctrls-menus` prints it in ``layout``, byte for byte (as `--list-ctrls` prints
    /// it when ``listsMenuItems`` is false).
    ///
    /// Follows `list_controls`, `print_control` and `print_qctrl` in v4l-utils 1.22: a heading is `\n<name>\n\n`;
    /// a control is its name right-aligned in 31 columns, ` 0x%08x` (not in ``Layout/withoutIDs``), the type in
    /// parentheses padded as `v4l2-ctl` pads it, the type's fields (`min= max= step= default=`, bitmasks
    /// `max=0x%08x default=0x%08x`), the value or dimensions, and ` flags=<names>`; menu items follow as
    /// `\t\t\t\t<index>: <name>` (integer menus `<index>: <n> (0x<hex>)`).
    public func render() -> String {
        var text = ""
        for entry in entries { text += line(entry) }
        return text
    }

    private func line(_ entry: Entry) -> String {
        let control = entry.description
        if control.type == .controlClass { return "\n\(control.name)\n\n" }
        if let readError = entry.readError {
            // print_control reads these through VIDIOC_G_EXT_CTRLS, the other user-class controls through G_CTRL.
            let extended =
                control.type == .integer64 || control.type == .string || control.type.isCompound
                || (control.controlClass != 0x0098_0000 && control.id < 0x0800_0000)
            return "error \(readError) getting \(extended ? "ext_ctrl" : "ctrl") \(control.name)\n"
        }
        var text = String(repeating: " ", count: max(0, 31 - control.key.utf8.count)) + control.key
        if layout != .withoutIDs { text += " " + hex8(UInt64(control.id)) }
        text += " " + Self.typeField(control)
        text += valueText(entry)
        if !control.flags.isEmpty { text += " flags=" + control.flags.v4l2CtlText }
        text += "\n"
        if control.type.isMenu && listsMenuItems {
            for item in control.menuItems where item.index >= control.minimum && item.index <= control.maximum {
                if control.type == .menu {
                    text += "\t\t\t\t\(item.index): \(item.name ?? "")\n"
                } else {
                    let number = item.value ?? 0
                    text += "\t\t\t\t\(item.index): \(number) (0x\(String(UInt64(bitPattern: number), radix: 16)))\n"
                }
            }
        }
        return text
    }

    /// `(int)    : min=0 max=255 step=1 default=128` and the like, padded as `v4l2-ctl` pads the type.
    static func typeField(_ control: ControlDescription) -> String {
        let min = control.minimum
        let max = control.maximum
        let step = Int64(bitPattern: control.step)
        let fallback = control.defaultValue
        switch control.type {
        case .integer: return "(int)    : min=\(min) max=\(max) step=\(step) default=\(fallback)"
        case .integer64: return "(int64)  : min=\(min) max=\(max) step=\(step) default=\(fallback)"
        case .string: return "(str)    : min=\(min) max=\(max) step=\(step)"
        case .boolean: return "(bool)   : default=\(fallback)"
        case .menu: return "(menu)   : min=\(min) max=\(max) default=\(fallback)"
        case .integerMenu: return "(intmenu): min=\(min) max=\(max) default=\(fallback)"
        case .button: return "(button) :"
        case .bitmask:
            return "(bitmask): max=\(hex8(UInt64(bitPattern: max))) default=\(hex8(UInt64(bitPattern: fallback)))"
        case .u8: return "(u8)     : min=\(min) max=\(max) step=\(step) default=\(fallback)"
        case .u16: return "(u16)    : min=\(min) max=\(max) step=\(step) default=\(fallback)"
        case .u32: return "(u32)    : min=\(min) max=\(max) step=\(step) default=\(fallback)"
        case .area: return "(area)   :"
        default:
            if let name = control.type.v4l2CtlName { return "(\(name)):" }
            return "(unknown): type=\(String(control.type.rawValue, radix: 16))"
        }
    }

    /// ` value=…` or the dimensions, as the layout prints them.
    private func valueText(_ entry: Entry) -> String {
        let control = entry.description
        if !control.dimensions.isEmpty {
            let dims = control.dimensions.map { "[\($0)]" }.joined()
            return layout == .current ? " dims=" + dims : " " + dims
        }
        switch layout {
        case .current: return " value=" + Self.currentValueText(entry)
        case .withIDs, .withoutIDs: return Self.legacyValueText(entry).map { " value=" + $0 } ?? ""
        }
    }

    /// The value of `entry` as `v4l2-ctl` 1.22 prints it after `value=` (and in `--get-ctrl`): `128`,
    /// `3 (Menu Item 3)`, `4 (5 0x5)`, `'text'`, `1000x2000`.
    public static func valueText(_ entry: Entry) -> String { currentValueText(entry) }

    /// `print_value` in v4l-utils 1.22.
    static func currentValueText(_ entry: Entry) -> String {
        let control = entry.description
        // An area is always `WxH` (the kernel gives it a payload; a dump that lost the flag or the value still
        // renders as something that parses as an area).
        if control.type == .area {
            guard case .payload(let bytes)? = entry.value else { return "0x0" }
            return "\(littleEndianInt32(bytes, at: 0))x\(littleEndianInt32(bytes, at: 4))"
        }
        if control.flags.contains(.hasPayload) {
            switch (control.type, entry.value) {
            case (.string, .string(let text)?): return "'" + safeText(text) + "'"
            case (.string, _): return "''"
            case (.u8, let value), (.u16, let value), (.u32, let value):
                if case .payload(let bytes)? = value {
                    return String(
                        littleEndianUnsigned(bytes, width: control.type == .u8 ? 1 : control.type == .u16 ? 2 : 4))
                }
                return "0"
            default: return "unsupported payload type"
            }
        }
        let number = entry.value?.integerValue ?? 0
        switch control.type {
        case .integer64: return String(number)
        case .menu, .integerMenu:
            let index = Int32(truncatingIfNeeded: number)
            guard let item = control.menuItem(Int64(index)) else {
                return entry.valueLabel.map { "\(index) (\($0))" } ?? String(index)
            }
            return "\(index) (\(selectedItemText(item, type: control.type)))"
        default:
            return String(Int32(truncatingIfNeeded: number))
        }
    }

    /// How `print_value` names a selected menu item after its index: the item's name, or for an integer menu its
    /// number and the number in hex (`5 0x5`). The parser checks a dump's value lines against this same text.
    static func selectedItemText(_ item: ControlMenuItem, type: ControlType) -> String {
        guard type == .integerMenu else { return item.name ?? "" }
        let value = item.value ?? 0
        return "\(value) 0x\(String(UInt64(bitPattern: value), radix: 16))"
    }

    /// The value as v4l-utils 1.14–1.21 printed it; `nil` where they printed none.
    static func legacyValueText(_ entry: Entry) -> String? {
        let control = entry.description
        let number = entry.value?.integerValue ?? 0
        switch control.type {
        case .integer, .boolean, .menu, .integerMenu: return String(Int32(truncatingIfNeeded: number))
        case .bitmask: return hex8(UInt64(UInt32(truncatingIfNeeded: number)))
        case .integer64: return String(number)
        case .string:
            if case .string(let text)? = entry.value { return "'" + safeText(text) + "'" }
            return "''"
        default: return nil
        }
    }

    /// `safename` in v4l-utils: `\n`, `\r`, `\f`, `\\` escaped, other control characters as `\xNN`.
    static func safeText(_ text: String) -> String {
        var result: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case 0x0a: result += Array("\\n".utf8)
            case 0x0d: result += Array("\\r".utf8)
            case 0x0c: result += Array("\\f".utf8)
            case 0x5c: result += Array("\\\\".utf8)
            case _ where byte & 0x7f < 0x20:
                let digits = String(byte, radix: 16)
                result += Array(("\\x" + (digits.count < 2 ? "0" : "") + digits).utf8)
            default: result.append(byte)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// The little-endian signed 32-bit number at `offset` (0 past the end).
func littleEndianInt32(_ bytes: [UInt8], at offset: Int) -> Int32 {
    guard offset + 4 <= bytes.count else { return 0 }
    var value: UInt32 = 0
    for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * index) }
    return Int32(bitPattern: value)
}

/// The little-endian unsigned number of `width` bytes at the start (0 when too short).
func littleEndianUnsigned(_ bytes: [UInt8], width: Int) -> UInt32 {
    guard bytes.count >= width else { return 0 }
    var value: UInt32 = 0
    for index in 0..<width { value |= UInt32(bytes[index]) << (8 * index) }
    return value
}
