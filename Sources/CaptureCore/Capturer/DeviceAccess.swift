/// Who may open a device node: its owner, group and permission bits. A ``CaptureError`` with code
/// ``CaptureError/Code-swift.struct/permissionDenied`` carries it, so that the fix can be said: join the group.
public struct DeviceAccess: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The owning user's id.
    public var uid: UInt32
    /// The owning group's id.
    public var gid: UInt32
    /// The owning group's name (`getgrgid`), `nil` when the group database has no entry for ``gid``.
    public var groupName: String?
    /// The permission bits (for example `0o660`).
    public var mode: UInt32

    /// Creates an access description.
    public init(uid: UInt32, gid: UInt32, groupName: String?, mode: UInt32) {
        self.uid = uid
        self.gid = gid
        self.groupName = groupName
        self.mode = mode & 0o7777
    }

    /// The group to name: its name, else `gid <n>`.
    public var groupDisplayName: String { groupName ?? "gid \(gid)" }

    /// Whether members of the owning group may open the node for reading and writing (mode `g+rw`), so that joining
    /// the group is the fix. A node only its owner may open (a fresh `0600` node whose permissions udev has not set
    /// yet) cannot be fixed by joining a group.
    public var groupMayOpen: Bool { mode & 0o060 == 0o060 && gid != 0 }

    /// What to do: `"join group 'video' (sudo usermod -aG video $USER) and log in again"`, or, when the group may
    /// not open the node either, who may.
    public var remedy: String {
        if groupMayOpen {
            let name = groupDisplayName
            let command = groupName.map { "sudo usermod -aG \($0) $USER" } ?? "add the user to gid \(gid)"
            return "join group '\(name)' (\(command)) and log in again"
        }
        return "only its owner (uid \(uid)) may open it (mode \(String(mode, radix: 8))); "
            + "its group '\(groupDisplayName)' has no read-write access"
    }

    /// `"owner uid 0, group 'video' (gid 44), mode 660"`.
    public var description: String {
        "owner uid \(uid), group '\(groupDisplayName)' (gid \(gid)), mode \(String(mode, radix: 8))"
    }
}
