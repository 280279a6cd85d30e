/// The type of a V4L2 control (`enum v4l2_ctrl_type`), with the kernel's numeric values.
///
/// Unknown types (newer kernels, codec-specific compound types) keep their raw value, so a listing never loses a
/// control it cannot interpret.
public struct ControlType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kernel's `V4L2_CTRL_TYPE_*` value.
    public var rawValue: UInt32

    /// Creates a type from its kernel value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A 32-bit signed integer (`V4L2_CTRL_TYPE_INTEGER`).
    public static let integer = ControlType(rawValue: 1)
    /// A boolean, 0 or 1 (`V4L2_CTRL_TYPE_BOOLEAN`).
    public static let boolean = ControlType(rawValue: 2)
    /// A menu: the value is an item index (`V4L2_CTRL_TYPE_MENU`).
    public static let menu = ControlType(rawValue: 3)
    /// A button: writing any value performs an action (`V4L2_CTRL_TYPE_BUTTON`).
    public static let button = ControlType(rawValue: 4)
    /// A 64-bit signed integer (`V4L2_CTRL_TYPE_INTEGER64`).
    public static let integer64 = ControlType(rawValue: 5)
    /// A control class heading, not a control (`V4L2_CTRL_TYPE_CTRL_CLASS`).
    public static let controlClass = ControlType(rawValue: 6)
    /// A string (`V4L2_CTRL_TYPE_STRING`); minimum and maximum are lengths.
    public static let string = ControlType(rawValue: 7)
    /// A 32-bit bitmask (`V4L2_CTRL_TYPE_BITMASK`); maximum is the mask of valid bits.
    public static let bitmask = ControlType(rawValue: 8)
    /// A menu of 64-bit integers: the value is an item index (`V4L2_CTRL_TYPE_INTEGER_MENU`).
    public static let integerMenu = ControlType(rawValue: 9)
    /// Unsigned 8-bit elements (`V4L2_CTRL_TYPE_U8`), usually an array.
    public static let u8 = ControlType(rawValue: 0x0100)
    /// Unsigned 16-bit elements (`V4L2_CTRL_TYPE_U16`).
    public static let u16 = ControlType(rawValue: 0x0101)
    /// Unsigned 32-bit elements (`V4L2_CTRL_TYPE_U32`).
    public static let u32 = ControlType(rawValue: 0x0102)
    /// A width and height (`V4L2_CTRL_TYPE_AREA`).
    public static let area = ControlType(rawValue: 0x0106)

    /// Whether values live in a payload (`V4L2_CTRL_COMPOUND_TYPES` and above: arrays and structures).
    public var isCompound: Bool { rawValue >= 0x0100 }

    /// Whether the value is an item index (menu or integer menu).
    public var isMenu: Bool { self == .menu || self == .integerMenu }

    /// The name `v4l2-ctl` prints in parentheses (`int`, `int64`, `str`, `bool`, `menu`, `intmenu`, `button`,
    /// `bitmask`, `u8`, `u16`, `u32`, `area`, the codec compound names), or `nil` for a type it calls `unknown`.
    public var v4l2CtlName: String? {
        Self.names.first { $0.0 == rawValue }?.1
    }

    /// The type `v4l2-ctl` names `name`.
    public init?(v4l2CtlName name: String) {
        guard let entry = Self.names.first(where: { $0.1 == name }) else { return nil }
        self.init(rawValue: entry.0)
    }

    /// `v4l2-ctl`'s name, or `type 0x…` for an unknown type.
    public var description: String { v4l2CtlName ?? "type 0x" + String(rawValue, radix: 16) }

    /// The types `v4l2-ctl` 1.22 knows, with its names for them.
    static let names: [(UInt32, String)] = [
        (1, "int"), (2, "bool"), (3, "menu"), (4, "button"), (5, "int64"), (6, "class"), (7, "str"), (8, "bitmask"),
        (9, "intmenu"), (0x0100, "u8"), (0x0101, "u16"), (0x0102, "u32"), (0x0106, "area"),
        (0x0110, "hdr10-cll-info"), (0x0111, "hdr10-mastering-display"), (0x0200, "h264-sps"),
        (0x0201, "h264-pps"), (0x0202, "h264-scaling-matrix"), (0x0203, "h264-slice-params"),
        (0x0204, "h264-decode-params"), (0x0205, "h264-pred-weights"), (0x0220, "fwht-params"),
        (0x0240, "vp8-frame"), (0x0250, "mpeg2-quantisation"), (0x0251, "mpeg2-sequence"),
        (0x0252, "mpeg2-picture"),
    ]
}
