/// The value of a control, typed by the control's kind.
public enum ControlValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A 32-bit integer control.
    case integer(Int32)
    /// A 64-bit integer control.
    case integer64(Int64)
    /// A boolean control.
    case boolean(Bool)
    /// A menu or integer-menu control: the selected item's index.
    case menu(Int32)
    /// A bitmask control.
    case bitmask(UInt32)
    /// A string control.
    case string(String)
    /// An array or compound control: its payload bytes in the device's layout (little-endian elements).
    case payload([UInt8])

    /// The value as a number, for every kind but strings and payloads.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): Int64(value)
        case .integer64(let value): value
        case .boolean(let value): value ? 1 : 0
        case .menu(let value): Int64(value)
        case .bitmask(let value): Int64(value)
        case .string, .payload: nil
        }
    }

    /// The value of a control of `type` holding the number `value` (truncated to the type's width); `nil` for
    /// strings and payload types.
    public static func number(_ value: Int64, type: ControlType) -> ControlValue? {
        switch type {
        case .integer, .button: .integer(Int32(truncatingIfNeeded: value))
        case .integer64: .integer64(value)
        case .boolean: .boolean(value != 0)
        case .menu, .integerMenu: .menu(Int32(truncatingIfNeeded: value))
        case .bitmask: .bitmask(UInt32(truncatingIfNeeded: value))
        default: nil
        }
    }

    /// `128`, `true`, `'text'`, `[16 bytes]`.
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .integer64(let value): String(value)
        case .boolean(let value): value ? "1" : "0"
        case .menu(let value): String(value)
        case .bitmask(let value): hex8(UInt64(value))
        case .string(let value): "'\(value)'"
        case .payload(let bytes): "[\(bytes.count) bytes]"
        }
    }
}
