/// A camera that came, went or changed: what a device monitor reports (the V4L2 module's `DeviceMonitor`, or
/// ``CameraProvider/deviceEvents()``).
public struct DeviceEvent: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A camera appeared and can be opened now.
        case added
        /// A camera went away; the event carries its last description (its ``CaptureDevice/id`` is what to match).
        case removed
        /// A camera still there changed: its description (formats, id, permissions that now let it be opened).
        case changed
    }

    /// What happened.
    public var kind: Kind
    /// The camera: as described now (added, changed), or as last described (removed).
    public var device: CaptureDevice
    /// When the change was seen (the monitor read the file-system event), on the monotonic clock in nanoseconds.
    public var observedNs: UInt64
    /// When the event was reported, on the monotonic clock in nanoseconds: later than ``observedNs`` by the wait for
    /// a new node to become usable.
    public var reportedNs: UInt64

    /// Creates an event.
    public init(kind: Kind, device: CaptureDevice, observedNs: UInt64, reportedNs: UInt64) {
        self.kind = kind
        self.device = device
        self.observedNs = observedNs
        self.reportedNs = reportedNs
    }

    /// `"added vivid (platform:vivid-000) at /dev/video0"`.
    public var description: String {
        "\(kind.rawValue) \(device)" + (device.node.map { " at \($0)" } ?? "")
    }
}
