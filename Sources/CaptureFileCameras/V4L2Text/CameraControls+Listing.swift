import CaptureCore
import SystemPackage

extension CameraControls {
    /// The listing `v4l2-ctl --list-ctrls-menus` prints: headings and controls with their current values (read one
    /// by one, as `v4l2-ctl` does, so one unreadable control does not hide the others). A recorded device's listing
    /// is its dump as it stands, in the dump's layout (see ``RecordedDevice/addingControls(_:)``).
    public func listing() throws(ControlError) -> V4L2ControlList {
        if let recorded = channel as? RecordedControlChannel { return recorded.listing }
        var entries: [V4L2ControlList.Entry] = []
        for control in try channel.queryControls() where !control.flags.contains(.disabled) {
            var entry = V4L2ControlList.Entry(control)
            if control.isReadable {
                do {
                    entry.value = try channel.read([control]).first
                } catch {
                    if case .failed(_, _, let errno) = error { entry.readError = errno.rawValue } else { throw error }
                }
            }
            entries.append(entry)
        }
        return V4L2ControlList(entries: entries)
    }
}
