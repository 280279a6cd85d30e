/// A change of a control made by someone else (another program, another descriptor, an automatic mode), as
/// `V4L2_EVENT_CTRL` reports it.
public struct ControlEvent: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What changed.
    public struct Changes: OptionSet, Sendable, Hashable, Codable {
        /// The kernel's `V4L2_EVENT_CTRL_CH_*` bits.
        public var rawValue: UInt32
        /// Creates changes from the kernel's bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The value changed (`V4L2_EVENT_CTRL_CH_VALUE`).
        public static let value = Changes(rawValue: 1)
        /// The flags changed, for example it became inactive (`V4L2_EVENT_CTRL_CH_FLAGS`).
        public static let flags = Changes(rawValue: 2)
        /// The range changed (`V4L2_EVENT_CTRL_CH_RANGE`).
        public static let range = Changes(rawValue: 4)
        /// The dimensions changed (`V4L2_EVENT_CTRL_CH_DIMENSIONS`).
        public static let dimensions = Changes(rawValue: 8)
    }

    /// The control id.
    public var id: UInt32
    /// The control's `v4l2-ctl` name (``ControlDescription/key``).
    public var key: String
    /// What changed.
    public var changes: Changes
    /// The new value (for payload controls the event carries none: `nil`).
    public var value: ControlValue?
    /// The flags now.
    public var flags: ControlFlags
    /// The range now.
    public var range: ControlRange
    /// The default value.
    public var defaultValue: Int64

    /// Creates an event.
    public init(
        id: UInt32, key: String, changes: Changes, value: ControlValue?, flags: ControlFlags, range: ControlRange,
        defaultValue: Int64
    ) {
        self.id = id
        self.key = key
        self.changes = changes
        self.value = value
        self.flags = flags
        self.range = range
        self.defaultValue = defaultValue
    }

    /// `brightness: value=140 flags=slider`.
    public var description: String {
        var text = "\(key):"
        if let value { text += " value=\(value)" }
        var changed: [String] = []
        if changes.contains(.value) { changed.append("value") }
        if changes.contains(.flags) { changed.append("flags") }
        if changes.contains(.range) { changed.append("range") }
        if changes.contains(.dimensions) { changed.append("dimensions") }
        text += " changed=" + changed.joined(separator: ",")
        if !flags.isEmpty { text += " flags=" + flags.v4l2CtlText }
        return text
    }
}
