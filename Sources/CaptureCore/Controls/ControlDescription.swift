/// One item of a menu or integer-menu control (`VIDIOC_QUERYMENU`).
public struct ControlMenuItem: Sendable, Hashable, Codable {
    /// The item's index: the control's value when the item is selected.
    public var index: Int64
    /// The item's name (menu controls).
    public var name: String?
    /// The item's number (integer-menu controls).
    public var value: Int64?

    /// Creates a menu item.
    public init(index: Int64, name: String? = nil, value: Int64? = nil) {
        self.index = index
        self.name = name
        self.value = value
    }

    /// The name, or the number for an integer-menu item.
    public var label: String { name ?? value.map(String.init) ?? String(index) }
}

/// The valid values of an integer-like control: `minimum...maximum` in steps of `step` from `minimum`.
public struct ControlRange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The smallest valid value.
    public var minimum: Int64
    /// The largest valid value.
    public var maximum: Int64
    /// The distance between valid values (0 or 1: every value).
    public var step: UInt64

    /// Creates a range.
    public init(minimum: Int64, maximum: Int64, step: UInt64 = 1) {
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
    }

    /// Whether `value` lies within the range.
    public func contains(_ value: Int64) -> Bool { value >= minimum && value <= maximum }

    /// Whether `value` is a whole number of steps above the minimum.
    public func isOnStep(_ value: Int64) -> Bool {
        guard step > 1, value >= minimum else { return true }
        // The distance from the minimum fits in 64 unsigned bits whatever the range (a driver's or a dump's).
        return UInt64(bitPattern: value &- minimum) % step == 0
    }

    /// The valid value closest to `value` (ties go up), clamped to the range.
    public func nearestValid(_ value: Int64) -> Int64 {
        let clamped = Swift.min(Swift.max(value, minimum), maximum)
        guard step > 1 else { return clamped }
        // Distances from the minimum in unsigned 64 bits: no range a driver or a dump declares can overflow them.
        let offset = UInt64(bitPattern: clamped &- minimum)
        let below = offset - offset % step
        let lower = minimum &+ Int64(bitPattern: below)
        let (above, overflow) = below.addingReportingOverflow(step)
        guard !overflow, maximum >= minimum, above <= UInt64(bitPattern: maximum &- minimum) else { return lower }
        return offset - below < above - offset ? lower : minimum &+ Int64(bitPattern: above)
    }

    /// `min..max step N`.
    public var description: String {
        step > 1 ? "\(minimum)...\(maximum) in steps of \(step)" : "\(minimum)...\(maximum)"
    }
}

/// What a device says about one control (`VIDIOC_QUERY_EXT_CTRL`, plus `VIDIOC_QUERYMENU` for menus).
///
/// Class headings (`type == .controlClass`) are descriptions too, so a listing keeps the driver's order.
public struct ControlDescription: Sendable, Hashable, Codable, Identifiable, CustomStringConvertible {
    /// The control id (`V4L2_CID_*`), for example `0x00980900` for brightness.
    public var id: UInt32
    /// The driver's name, for example `"Brightness"` (from a dump: the same as ``key``).
    public var name: String
    /// The name `v4l2-ctl` uses: ``name`` lowercased with runs of other characters as `_` (`brightness`,
    /// `exposure_time_absolute`).
    public var key: String
    /// The type.
    public var type: ControlType
    /// The minimum (for strings: the minimum length).
    public var minimum: Int64
    /// The maximum (for strings: the maximum length; for bitmasks: the valid bits).
    public var maximum: Int64
    /// The step between valid values.
    public var step: UInt64
    /// The default value.
    public var defaultValue: Int64
    /// The flags as the device reports them now.
    public var flags: ControlFlags
    /// The size of one element in bytes (payload controls).
    public var elementSize: UInt32
    /// The number of elements (1 for scalars).
    public var elementCount: UInt32
    /// The array dimensions; empty for a scalar.
    public var dimensions: [UInt32]
    /// The items of a menu or integer menu, in index order (indices the driver skips are absent).
    public var menuItems: [ControlMenuItem]

    /// Creates a description. `key` defaults to the `v4l2-ctl` form of `name`.
    public init(
        id: UInt32, name: String, key: String? = nil, type: ControlType, minimum: Int64 = 0, maximum: Int64 = 0,
        step: UInt64 = 0, defaultValue: Int64 = 0, flags: ControlFlags = [], elementSize: UInt32 = 4,
        elementCount: UInt32 = 1, dimensions: [UInt32] = [], menuItems: [ControlMenuItem] = []
    ) {
        self.id = id
        self.name = name
        self.key = key ?? Self.key(for: name)
        self.type = type
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.flags = flags
        self.elementSize = elementSize
        self.elementCount = elementCount
        self.dimensions = dimensions
        self.menuItems = menuItems
    }

    /// The control class (`V4L2_CTRL_ID2CLASS`): `0x00980000` user, `0x009a0000` camera, …
    public var controlClass: UInt32 { id & 0x0fff_0000 }

    /// The valid values of an integer-like control.
    public var range: ControlRange { ControlRange(minimum: minimum, maximum: maximum, step: step) }

    /// Whether the control can be written at all (not read-only, disabled or a class heading).
    public var isWritable: Bool {
        type != .controlClass && !flags.contains(.readOnly) && !flags.contains(.disabled)
    }

    /// Whether the control's value can be read (not write-only, not a button, not a class heading).
    public var isReadable: Bool {
        type != .controlClass && type != .button && !flags.contains(.writeOnly) && !flags.contains(.disabled)
    }

    /// The menu item with `index`, if the driver lists it.
    public func menuItem(_ index: Int64) -> ControlMenuItem? { menuItems.first { $0.index == index } }

    /// `brightness (int, 0x00980900)`.
    public var description: String { "\(key) (\(type), \(hex8(UInt64(id))))" }

    /// `v4l2-ctl`'s variable name for a control name (`name2var` in v4l-utils): letters and digits lowercased,
    /// every run of other characters between them one `_`, nothing leading or trailing.
    public static func key(for name: String) -> String {
        var key = ""
        var pendingUnderscore = false
        for byte in name.utf8 {
            let isAlphanumeric =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
            if isAlphanumeric {
                if pendingUnderscore { key += "_" }
                pendingUnderscore = false
                key.unicodeScalars.append(Unicode.Scalar(byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte))
            } else if !key.isEmpty {
                pendingUnderscore = true
            }
        }
        return key
    }
}
