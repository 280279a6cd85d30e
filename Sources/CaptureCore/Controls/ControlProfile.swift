import SystemPackage

/// A device's writable control values, saved as JSON and applied again later (after a replug, on another
/// machine): `{"version": 1, "device": …, "controls": [{"id": …, "key": …, "value": {…}}]}`.
public struct ControlProfile: Sendable, Hashable, Codable {
    /// The format version this library writes.
    public static let currentVersion = 1

    /// One saved control.
    public struct Setting: Sendable, Hashable, Codable {
        /// The control id.
        public var id: UInt32
        /// The control's `v4l2-ctl` name.
        public var key: String
        /// The saved value.
        public var value: ControlValue

        /// Creates a setting.
        public init(id: UInt32, key: String, value: ControlValue) {
            self.id = id
            self.key = key
            self.value = value
        }
    }

    /// The format version of this profile.
    public var version: Int
    /// The device the profile was saved from (its node or id), for people reading the file.
    public var device: String
    /// The settings in the driver's order.
    public var controls: [Setting]

    /// Creates a profile.
    public init(device: String, controls: [Setting], version: Int = ControlProfile.currentVersion) {
        self.version = version
        self.device = device
        self.controls = controls
    }
}

/// What applying a profile did.
public struct ControlProfileReport: Sendable, Hashable, Codable {
    /// A setting that was not applied, and why.
    public struct Skipped: Sendable, Hashable, Codable {
        /// The control's `v4l2-ctl` name.
        public var key: String
        /// Why: the error's description (no such control, read-only, out of range now, inactive, …).
        public var reason: String
    }

    /// The controls written, in order.
    public var applied: [String]
    /// The controls not written, with reasons.
    public var skipped: [Skipped]
}

extension CameraControls {
    /// The values of every control that can be written and read back (not read-only, not a button, not
    /// write-only, no payload arrays), including inactive ones.
    public func saveProfile() throws(ControlError) -> ControlProfile {
        let controls = try descriptions().filter { control in
            control.isWritable && control.isReadable && control.dimensions.isEmpty
                && !control.flags.contains(.volatile)
        }
        let values = try channel.read(controls)
        let settings = zip(controls, values).map { ControlProfile.Setting(id: $0.id, key: $0.key, value: $1) }
        return ControlProfile(device: deviceName, controls: settings)
    }

    /// Applies `profile`, one control at a time, skipping what no longer applies and saying why.
    ///
    /// Automatic modes are applied before the manual values they govern (a manual value saved while its automatic
    /// mode was off becomes writable once the mode is restored), and a control refused as inactive is retried once
    /// after the others. A control the device no longer has, of another type, read-only now, or whose value is
    /// now out of range is skipped with the reason; nothing else is changed for it.
    ///
    /// - Throws: ``ControlError/notSupported(_:)`` for a profile of a newer format version.
    public func apply(_ profile: ControlProfile) throws(ControlError) -> ControlProfileReport {
        guard profile.version <= ControlProfile.currentVersion else {
            throw ControlError.notSupported("the profile has format version \(profile.version); this library reads 1")
        }
        let automatic = Set(V4L2ControlID.automaticModes.map(\.automatic))
        let ordered =
            profile.controls.filter { automatic.contains($0.id) }
            + profile.controls.filter { !automatic.contains($0.id) }
        var applied: [String] = []
        var skipped: [ControlProfileReport.Skipped] = []
        var retry: [ControlProfile.Setting] = []
        for pass in 0..<2 {
            let settings = pass == 0 ? ordered : retry
            retry = []
            // Flags change only when a control that updates others is written: query again only then.
            var all = try descriptions()
            for setting in settings {
                do throws(ControlError) {
                    let control = try Self.find(setting.id, in: all)
                    guard control.key == setting.key || control.name == setting.key else {
                        throw ControlError.noSuchControl(setting.key)
                    }
                    try control.validate(setting.value)
                    try channel.write([ControlAssignment(control, setting.value)])
                    applied.append(setting.key)
                    if control.flags.contains(.update) || automatic.contains(control.id) { all = try descriptions() }
                } catch {
                    if case .inactive = error, pass == 0 {
                        retry.append(setting)
                    } else {
                        skipped.append(ControlProfileReport.Skipped(key: setting.key, reason: error.description))
                    }
                }
            }
        }
        return ControlProfileReport(applied: applied, skipped: skipped)
    }
}
