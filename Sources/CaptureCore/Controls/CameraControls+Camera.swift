/// How the camera sets its exposure (`V4L2_CID_EXPOSURE_AUTO`, the UVC auto-exposure mode).
public enum ExposureMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Exposure time and iris automatic (`V4L2_EXPOSURE_AUTO`, 0).
    case auto
    /// Exposure time and iris set by the app (`V4L2_EXPOSURE_MANUAL`, 1): AVFoundation's custom mode.
    case manual
    /// Exposure time set by the app, iris automatic (`V4L2_EXPOSURE_SHUTTER_PRIORITY`, 2).
    case shutterPriority
    /// Iris set by the app, exposure time automatic (`V4L2_EXPOSURE_APERTURE_PRIORITY`, 3); most UVC webcams'
    /// default.
    case aperturePriority

    /// The menu index V4L2 uses.
    public var menuIndex: Int32 {
        switch self {
        case .auto: 0
        case .manual: 1
        case .shutterPriority: 2
        case .aperturePriority: 3
        }
    }

    /// The mode with V4L2 menu index `index`.
    public init?(menuIndex index: Int64) {
        guard let mode = Self.allCases.first(where: { Int64($0.menuIndex) == index }) else { return nil }
        self = mode
    }
}

/// The mains frequency the camera avoids flicker for (`V4L2_CID_POWER_LINE_FREQUENCY`).
public enum PowerLineFrequency: String, Sendable, Hashable, Codable, CaseIterable {
    /// No anti-flicker (menu index 0).
    case disabled
    /// 50 Hz mains: Europe, most of Asia and Africa (menu index 1).
    case hz50 = "50Hz"
    /// 60 Hz mains: the Americas, parts of Japan (menu index 2).
    case hz60 = "60Hz"
    /// The camera detects it (menu index 3).
    case auto

    /// The menu index V4L2 uses.
    public var menuIndex: Int32 {
        switch self {
        case .disabled: 0
        case .hz50: 1
        case .hz60: 2
        case .auto: 3
        }
    }

    /// The frequency with V4L2 menu index `index`.
    public init?(menuIndex index: Int64) {
        guard let value = Self.allCases.first(where: { Int64($0.menuIndex) == index }) else { return nil }
        self = value
    }
}

/// An adjustment with a number value that the typed facade offers.
public enum CameraControl: String, Sendable, Hashable, Codable, CaseIterable {
    /// Brightness (`V4L2_CID_BRIGHTNESS`).
    case brightness
    /// Contrast (`V4L2_CID_CONTRAST`).
    case contrast
    /// Saturation (`V4L2_CID_SATURATION`).
    case saturation
    /// Sharpness (`V4L2_CID_SHARPNESS`).
    case sharpness
    /// Hue (`V4L2_CID_HUE`); turns automatic hue off first.
    case hue
    /// Gamma (`V4L2_CID_GAMMA`).
    case gamma
    /// Gain (`V4L2_CID_GAIN`); turns automatic gain off first.
    case gain
    /// Exposure time in units of 100 µs (`V4L2_CID_EXPOSURE_ABSOLUTE`); switches to manual exposure first.
    case exposureTime
    /// Focus position (`V4L2_CID_FOCUS_ABSOLUTE`); turns autofocus off first.
    case focus
    /// White-balance temperature in kelvin (`V4L2_CID_WHITE_BALANCE_TEMPERATURE`); turns automatic white balance
    /// off first.
    case whiteBalanceTemperature
    /// Zoom (`V4L2_CID_ZOOM_ABSOLUTE`).
    case zoom
    /// Pan in arc seconds (`V4L2_CID_PAN_ABSOLUTE`).
    case pan
    /// Tilt in arc seconds (`V4L2_CID_TILT_ABSOLUTE`).
    case tilt
    /// Backlight compensation (`V4L2_CID_BACKLIGHT_COMPENSATION`).
    case backlightCompensation

    /// The V4L2 control id.
    public var id: UInt32 {
        switch self {
        case .brightness: V4L2ControlID.brightness
        case .contrast: V4L2ControlID.contrast
        case .saturation: V4L2ControlID.saturation
        case .sharpness: V4L2ControlID.sharpness
        case .hue: V4L2ControlID.hue
        case .gamma: V4L2ControlID.gamma
        case .gain: V4L2ControlID.gain
        case .exposureTime: V4L2ControlID.exposureAbsolute
        case .focus: V4L2ControlID.focusAbsolute
        case .whiteBalanceTemperature: V4L2ControlID.whiteBalanceTemperature
        case .zoom: V4L2ControlID.zoomAbsolute
        case .pan: V4L2ControlID.panAbsolute
        case .tilt: V4L2ControlID.tiltAbsolute
        case .backlightCompensation: V4L2ControlID.backlightCompensation
        }
    }
}

extension CameraControls {
    /// Whether the device has `control`.
    public func supports(_ control: CameraControl) -> Bool {
        (try? description(of: control.id)) != nil
    }

    /// The valid values of `control`.
    public func range(of control: CameraControl) throws(ControlError) -> ControlRange {
        try description(of: control.id).range
    }

    /// The current value of `control`.
    public func value(of control: CameraControl) throws(ControlError) -> Int64 {
        try integer(control.id)
    }

    /// Sets `control` to `value`, as AVFoundation's custom mode does: if an automatic mode governs the control
    /// (exposure, focus, white balance, gain, hue) and is on, it is turned off first, then the value is written.
    /// The value is checked against the range before anything changes (see ``CameraControls`` for the rule).
    public func set(_ control: CameraControl, to value: Int64) throws(ControlError) {
        let all = try descriptions()
        var description = try Self.find(control.id, in: all)
        let number = try Self.number(value, for: description)
        // Check range and step before touching the automatic mode; flags are checked after it is off.
        var active = description
        active.flags.remove(.inactive)
        try active.validate(number)
        if try turnAutomaticOff(for: control, manual: description, in: all) {
            // Turning it off changes the manual control's flags (inactive): read them again.
            description = try self.description(of: control.id)
        }
        try write(description, number)
    }

    /// The exposure mode.
    public func exposureMode() throws(ControlError) -> ExposureMode {
        let index = try integer(V4L2ControlID.exposureAuto)
        guard let mode = ExposureMode(menuIndex: index) else {
            throw ControlError.notSupported("exposure_auto has the unknown mode \(index)")
        }
        return mode
    }

    /// Sets the exposure mode. UVC webcams usually offer only ``ExposureMode/manual`` and
    /// ``ExposureMode/aperturePriority``; another mode gives ``ControlError/invalidValue(control:value:reason:)``.
    public func setExposureMode(_ mode: ExposureMode) throws(ControlError) {
        try setMenu(V4L2ControlID.exposureAuto, index: mode.menuIndex)
    }

    /// The exposure time (`V4L2_CID_EXPOSURE_ABSOLUTE`, kept in units of 100 µs).
    public func exposureDuration() throws(ControlError) -> Duration {
        .microseconds(try integer(V4L2ControlID.exposureAbsolute) * 100)
    }

    /// Sets the exposure time, switching to manual exposure first (unless shutter priority is on and the control
    /// is active). A duration that is not a whole number of 100 µs units is refused as off the step.
    public func setExposureDuration(_ duration: Duration) throws(ControlError) {
        let (seconds, attoseconds) = duration.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        guard microseconds % 100 == 0, attoseconds % 1_000_000_000_000 == 0 else {
            let range = try range(of: .exposureTime)
            let units = (microseconds + 50) / 100
            throw ControlError.offStep(
                control: "exposure_absolute", value: units, range: range, nearest: range.nearestValid(units))
        }
        try set(.exposureTime, to: microseconds / 100)
    }

    /// Whether continuous autofocus is on.
    public func isAutoFocusEnabled() throws(ControlError) -> Bool {
        try integer(V4L2ControlID.focusAuto) != 0
    }

    /// Turns continuous autofocus on or off.
    public func setAutoFocus(_ enabled: Bool) throws(ControlError) {
        try setBoolean(V4L2ControlID.focusAuto, enabled)
    }

    /// Whether automatic white balance is on.
    public func isAutoWhiteBalanceEnabled() throws(ControlError) -> Bool {
        try integer(V4L2ControlID.autoWhiteBalance) != 0
    }

    /// Turns automatic white balance on or off.
    public func setAutoWhiteBalance(_ enabled: Bool) throws(ControlError) {
        try setBoolean(V4L2ControlID.autoWhiteBalance, enabled)
    }

    /// The anti-flicker setting.
    public func powerLineFrequency() throws(ControlError) -> PowerLineFrequency {
        let index = try integer(V4L2ControlID.powerLineFrequency)
        guard let value = PowerLineFrequency(menuIndex: index) else {
            throw ControlError.notSupported("power_line_frequency has the unknown value \(index)")
        }
        return value
    }

    /// Sets the anti-flicker frequency by name. A frequency the camera's menu does not list (many offer no
    /// ``PowerLineFrequency/auto``) gives ``ControlError/invalidValue(control:value:reason:)``.
    public func setPowerLineFrequency(_ frequency: PowerLineFrequency) throws(ControlError) {
        try setMenu(V4L2ControlID.powerLineFrequency, index: frequency.menuIndex)
    }

    // MARK: - Helpers

    private func integer(_ id: UInt32) throws(ControlError) -> Int64 {
        let control = try description(of: id)
        guard control.isReadable else { throw ControlError.writeOnly(control.key) }
        guard let number = try channel.read([control]).first?.integerValue else {
            throw ControlError.notSupported("\(control.key) has no number value")
        }
        return number
    }

    private func setMenu(_ id: UInt32, index: Int32) throws(ControlError) {
        try write(try description(of: id), .menu(index))
    }

    private func setBoolean(_ id: UInt32, _ value: Bool) throws(ControlError) {
        try write(try description(of: id), .boolean(value))
    }

    /// Checks `value` against `control` (the type's rule) and writes it alone.
    private func write(_ control: ControlDescription, _ value: ControlValue) throws(ControlError) {
        try control.validate(value)
        try channel.write([ControlAssignment(control, value)])
    }

    /// Turns off the automatic mode governing `control` (described by `manual`, from the listing `all`) if it is on;
    /// whether it changed anything.
    private func turnAutomaticOff(
        for control: CameraControl, manual: ControlDescription, in all: [ControlDescription]
    ) throws(ControlError) -> Bool {
        guard let rule = V4L2ControlID.automaticModes.first(where: { $0.manual == control.id }),
            let automatic = all.first(where: { $0.id == rule.automatic })
        else { return false }
        let current = try channel.read([automatic]).first?.integerValue ?? 0
        if control == .exposureTime {
            // Shutter priority lets the app set the exposure time; if the driver still marks it inactive, go manual.
            if current == Int64(ExposureMode.manual.menuIndex)
                || (current == Int64(ExposureMode.shutterPriority.menuIndex) && !manual.flags.contains(.inactive))
            {
                return false
            }
            try write(automatic, .menu(ExposureMode.manual.menuIndex))
            return true
        }
        guard !rule.activeWhen.contains(current) else { return false }
        guard let off = ControlValue.number(rule.activeWhen.min() ?? 0, type: automatic.type) else { return false }
        try write(automatic, off)
        return true
    }

    /// `value` as a value of `control`'s type.
    private static func number(_ value: Int64, for control: ControlDescription) throws(ControlError) -> ControlValue {
        if control.type == .integer, Int32(exactly: value) == nil {
            throw ControlError.outOfRange(
                control: control.key, value: value, range: control.range, nearest: control.range.nearestValid(value))
        }
        guard let number = ControlValue.number(value, type: control.type) else {
            throw ControlError.notSupported("\(control.key) is not a number control")
        }
        return number
    }
}
