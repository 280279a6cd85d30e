/// A device's controls: list, read and write them, hear changes, save and restore profiles; with a typed facade
/// for what a calling app wants (``CameraControls/setExposureMode(_:)``, ``CameraControls/set(_:to:)``, …).
///
/// Get one from ``CameraProvider/controls(for:)`` or ``CameraVideoCapturer/controls(for:)``. On a V4L2 device it
/// uses a descriptor of its own, so it works whether or not the device is capturing.
///
/// **Values are validated, never clamped.** A value outside a control's range or off its step is refused with
/// ``ControlError/outOfRange(control:value:range:nearest:)`` or ``ControlError/offStep(control:value:range:nearest:)``,
/// which carry the valid range and the nearest valid value; nothing is written. A read-only, write-only, inactive
/// or grabbed control gives its own error. Several values set together are all validated before any is written
/// and then written in one request.
public final class CameraControls: Sendable {
    package let channel: any ControlChannel

    package init(channel: any ControlChannel) {
        self.channel = channel
    }

    /// The device node or id.
    public var deviceName: String { channel.deviceName }

    /// Every usable control (no class headings, no disabled controls), in the driver's order, with flags as they
    /// are now.
    public func descriptions() throws(ControlError) -> [ControlDescription] {
        try channel.queryControls().filter { $0.type != .controlClass && !$0.flags.contains(.disabled) }
    }

    /// The control named `key` (its `v4l2-ctl` name, such as `exposure_time_absolute`), its driver name
    /// (`Brightness`), or its id as `0x…` or decimal text.
    public func description(of key: String) throws(ControlError) -> ControlDescription {
        try Self.find(key, in: descriptions())
    }

    /// The control with `id`.
    public func description(of id: UInt32) throws(ControlError) -> ControlDescription {
        try Self.find(id, in: descriptions())
    }

    /// The control named `key` in `all` (see `description(of:)`).
    static func find(_ key: String, in all: [ControlDescription]) throws(ControlError) -> ControlDescription {
        if let id = controlID(key), let match = all.first(where: { $0.id == id }) { return match }
        if let match = all.first(where: { $0.key == key || $0.name == key }) { return match }
        throw ControlError.noSuchControl(key)
    }

    /// The control with `id` in `all`; the error names a standard control by its `v4l2-ctl` name.
    static func find(_ id: UInt32, in all: [ControlDescription]) throws(ControlError) -> ControlDescription {
        guard let match = all.first(where: { $0.id == id }) else {
            let name = V4L2ControlID.standardKeys.filter { $0.value == id }.map(\.key).sorted().first
            throw ControlError.noSuchControl(name ?? hex8(UInt64(id)))
        }
        return match
    }

    /// The current value of one control.
    ///
    /// - Throws: ``ControlError/noSuchControl(_:)``, ``ControlError/writeOnly(_:)`` for buttons and write-only
    ///   controls, or the driver's failure.
    public func value(_ key: String) throws(ControlError) -> ControlValue {
        try values([key])[0].value
    }

    /// The current values of several controls, read in one request.
    public func values(_ keys: [String]) throws(ControlError) -> [(control: ControlDescription, value: ControlValue)] {
        let all = try descriptions()
        var controls: [ControlDescription] = []
        for key in keys {
            let control = try Self.find(key, in: all)
            guard control.isReadable else { throw ControlError.writeOnly(control.key) }
            controls.append(control)
        }
        let values = try channel.read(controls)
        return Array(zip(controls, values)).map { (control: $0.0, value: $0.1) }
    }

    /// Sets one control. See ``set(_:)`` for the rule.
    public func set(_ key: String, to value: ControlValue) throws(ControlError) {
        try set([(key, value)])
    }

    /// Sets several controls in one request (`VIDIOC_S_EXT_CTRLS`), atomically where the driver allows it.
    ///
    /// Every value is checked first (see the type's rule); if any is refused, nothing is written.
    public func set(_ assignments: [(key: String, value: ControlValue)]) throws(ControlError) {
        let all = try descriptions()
        var checked: [ControlAssignment] = []
        for (key, value) in assignments {
            checked.append(ControlAssignment(try Self.find(key, in: all), value))
        }
        try write(checked)
    }

    /// Checks `checked` against the rule and writes it in one request, automatic modes first.
    private func write(_ checked: [ControlAssignment]) throws(ControlError) {
        // An automatic mode switched off in the same request makes its manual control active: check it as such,
        // and put the automatic controls first in the request.
        let automatic = V4L2ControlID.automaticModes
        for index in checked.indices {
            var control = checked[index].control
            if let rule = automatic.first(where: { $0.manual == control.id }),
                let mode = checked.first(where: { $0.control.id == rule.automatic })?.value.integerValue,
                rule.activeWhen.contains(mode)
            {
                control.flags.remove(.inactive)
            }
            try control.validate(checked[index].value)
        }
        let automaticIDs = Set(automatic.map(\.automatic))
        let ordered =
            checked.filter { automaticIDs.contains($0.control.id) }
            + checked.filter { !automaticIDs.contains($0.control.id) }
        try channel.write(ordered)
    }

    /// Sets several controls given as text (`--set brightness=140,exposure_auto=1`): each text is read by
    /// ``ControlDescription/value(parsing:)``, then all are set as ``set(_:)`` does.
    public func set(parsing assignments: [(key: String, text: String)]) throws(ControlError) {
        let all = try descriptions()
        var checked: [ControlAssignment] = []
        for (key, text) in assignments {
            let control = try Self.find(key, in: all)
            checked.append(ControlAssignment(control, try control.value(parsing: text)))
        }
        try write(checked)
    }

    /// Changes made to the device's controls by others (another program, an automatic mode), as they happen,
    /// until the consumer stops iterating. Works while the device captures and while it does not.
    public func events() throws(ControlError) -> AsyncStream<ControlEvent> {
        try channel.events(descriptions())
    }
}
