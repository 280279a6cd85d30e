/// The flags of a V4L2 control (`V4L2_CTRL_FLAG_*`), with the kernel's bit values.
public struct ControlFlags: OptionSet, Sendable, Hashable, Codable {
    /// The kernel's flag bits.
    public var rawValue: UInt32

    /// Creates flags from the kernel's bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The driver lists the control but it is not usable (`V4L2_CTRL_FLAG_DISABLED`).
    public static let disabled = ControlFlags(rawValue: 0x0001)
    /// The control cannot change now, typically while streaming (`V4L2_CTRL_FLAG_GRABBED`).
    public static let grabbed = ControlFlags(rawValue: 0x0002)
    /// The control can be read but not written (`V4L2_CTRL_FLAG_READ_ONLY`).
    public static let readOnly = ControlFlags(rawValue: 0x0004)
    /// Writing it may change other controls (`V4L2_CTRL_FLAG_UPDATE`).
    public static let update = ControlFlags(rawValue: 0x0008)
    /// The control has no effect now, for example a manual value while its automatic mode is on
    /// (`V4L2_CTRL_FLAG_INACTIVE`).
    public static let inactive = ControlFlags(rawValue: 0x0010)
    /// A hint to show it as a slider (`V4L2_CTRL_FLAG_SLIDER`).
    public static let slider = ControlFlags(rawValue: 0x0020)
    /// The control can be written but not read (`V4L2_CTRL_FLAG_WRITE_ONLY`), such as a button.
    public static let writeOnly = ControlFlags(rawValue: 0x0040)
    /// The value changes by itself, for example a gain set by an automatic mode (`V4L2_CTRL_FLAG_VOLATILE`).
    public static let volatile = ControlFlags(rawValue: 0x0080)
    /// The value is a payload: strings, arrays, compound types (`V4L2_CTRL_FLAG_HAS_PAYLOAD`).
    public static let hasPayload = ControlFlags(rawValue: 0x0100)
    /// Writing it acts even when the value does not change (`V4L2_CTRL_FLAG_EXECUTE_ON_WRITE`).
    public static let executeOnWrite = ControlFlags(rawValue: 0x0200)
    /// Changing it changes the buffer layout (`V4L2_CTRL_FLAG_MODIFY_LAYOUT`).
    public static let modifyLayout = ControlFlags(rawValue: 0x0400)
    /// An array whose element count changes (`V4L2_CTRL_FLAG_DYNAMIC_ARRAY`).
    public static let dynamicArray = ControlFlags(rawValue: 0x0800)
    /// The driver reports minimum and maximum values through `V4L2_CTRL_WHICH_MIN_VAL`/`MAX_VAL`
    /// (`V4L2_CTRL_FLAG_HAS_WHICH_MIN_MAX`, newer kernels;
    /// `v4l2-ctl` 1.22 prints it as `0x00001000`).
    public static let hasMinMax = ControlFlags(rawValue: 0x1000)

    /// The flags `v4l2-ctl` 1.22 names, in the order it prints them (`ctrlflags2s` in v4l-utils); other bits are
    /// printed as one `0x%08x` number.
    package static let v4l2CtlNames: [(ControlFlags, String)] = [
        (.grabbed, "grabbed"), (.disabled, "disabled"), (.readOnly, "read-only"), (.update, "update"),
        (.inactive, "inactive"), (.slider, "slider"), (.writeOnly, "write-only"), (.volatile, "volatile"),
        (.hasPayload, "has-payload"), (.executeOnWrite, "execute-on-write"), (.modifyLayout, "modify-layout"),
    ]

    /// Names newer `v4l2-ctl` versions print, accepted when parsing.
    package static let newerNames: [(ControlFlags, String)] = [
        (.dynamicArray, "dynamic-array"), (.hasMinMax, "has-min-max"),
    ]

    /// The flags as `v4l2-ctl` 1.22 lists them: `read-only, volatile`, with unnamed bits as `0x00000800`.
    public var v4l2CtlText: String {
        var remaining = rawValue
        var parts: [String] = []
        for (flag, name) in Self.v4l2CtlNames where remaining & flag.rawValue != 0 {
            parts.append(name)
            remaining &= ~flag.rawValue
        }
        if remaining != 0 { parts.append(hex8(UInt64(remaining))) }
        return parts.joined(separator: ", ")
    }

    /// The names (`read-only`, `dynamic-array`, …) of the set flags, for JSON and messages.
    public var names: [String] {
        (Self.v4l2CtlNames + Self.newerNames).filter { contains($0.0) }.map(\.1)
    }
}

/// `0x%08llx`: at least eight lowercase hex digits (control ids, bitmasks, and unknown flag bits of formats and
/// controls).
package func hex8(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}
