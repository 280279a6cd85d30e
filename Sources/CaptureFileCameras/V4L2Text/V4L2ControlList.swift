import CaptureCore

/// A device's controls exactly as `v4l2-ctl --list-ctrls-menus` shows them: class headings and controls in the
/// driver's order, each control with its range, default, current value, flags and menu items.
///
/// ``parse(_:)`` reads a dump in any of the layouts `v4l2-ctl` has printed (see ``Layout``); ``render()`` writes it
/// back byte for byte in the list's layout, and a list queried from a device renders as the installed
/// `v4l2-ctl` 1.22 prints it (``Layout/current``).
public struct V4L2ControlList: Sendable, Hashable, Codable {
    /// Which `v4l2-ctl` printed the dump.
    public enum Layout: String, Sendable, Hashable, Codable {
        /// v4l-utils 1.22 and later: `name 0x00980900 (int)    : … value=3 (Aperture Priority Mode)`; menu values
        /// carry the item name, bitmask values are signed decimals, arrays print `dims=[2][3]`.
        case current
        /// v4l-utils 1.14 to 1.21: the hex id is there, but values are bare (`value=3`), bitmasks print `0x%08x`
        /// and arrays `[2][3]`.
        case withIDs
        /// v4l-utils before 1.14: as ``withIDs`` without the hex id (`name (int)    : …`).
        case withoutIDs
    }

    /// One line of the listing: a class heading (`type == .controlClass`) or a control with its value.
    public struct Entry: Sendable, Hashable, Codable {
        /// The control (or class heading).
        public var description: ControlDescription
        /// The current value; `nil` for headings, buttons, write-only controls and arrays (not printed).
        public var value: ControlValue?
        /// The `errno` reading the value failed with, if it did (`v4l2-ctl` prints `error N getting ext_ctrl NAME`
        /// instead of the control).
        public var readError: Int32?
        /// The selected menu item as a `--list-ctrls` dump names it (`50 Hz`, `5 0x5`) when the dump lists no menu
        /// items, so the item is known only by that text.
        public var valueLabel: String?

        /// Creates an entry.
        public init(
            _ description: ControlDescription, value: ControlValue? = nil, readError: Int32? = nil,
            valueLabel: String? = nil
        ) {
            self.description = description
            self.value = value
            self.readError = readError
            self.valueLabel = valueLabel
        }
    }

    /// Headings and controls in the driver's order. Disabled controls are left out, as `v4l2-ctl` does.
    public var entries: [Entry]
    /// The layout to render in.
    public var layout: Layout
    /// Whether menu items are listed under menu controls, as `--list-ctrls-menus` does (`--list-ctrls` does not).
    public var listsMenuItems: Bool

    /// Creates a list.
    public init(entries: [Entry], layout: Layout = .current, listsMenuItems: Bool = true) {
        self.entries = entries
        self.layout = layout
        self.listsMenuItems = listsMenuItems
    }

    /// The controls, without class headings.
    public var controls: [Entry] { entries.filter { $0.description.type != .controlClass } }

    /// The control named `key` (its `v4l2-ctl` name) or, for `0x…`/decimal text, with that id.
    public func control(_ key: String) -> Entry? {
        if let id = controlID(key) { return controls.first { $0.description.id == id } }
        return controls.first { $0.description.key == key }
    }
}
