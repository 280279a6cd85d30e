/// A process that holds a device node open: what a ``CaptureError`` with code
/// ``CaptureError/Code-swift.struct/deviceBusy`` names.
public struct DeviceHolder: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The process id.
    public var pid: Int32
    /// The process's command name (`/proc/<pid>/comm`, at most 15 characters), empty when unreadable.
    public var command: String

    /// Creates a holder description.
    public init(pid: Int32, command: String) {
        self.pid = pid
        self.command = command
    }

    /// `"pid 1234 (chromium)"`.
    public var description: String { command.isEmpty ? "pid \(pid)" : "pid \(pid) (\(command))" }
}
