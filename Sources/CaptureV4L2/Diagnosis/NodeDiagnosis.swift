import CaptureCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds out why a node could not be used: which processes hold it open (for `EBUSY`) and who may open it (for
/// `EACCES`/`EPERM`). Reads `/proc` and the file system only; never opens the node.
enum NodeDiagnosis {
    /// The processes with a descriptor on the file `path` names, found by scanning `<proc>/<pid>/fd/*`: each link is
    /// `stat`ed and compared with the node by device and inode, so that a holder that opened a symbolic link to it
    /// (`/dev/v4l/by-id/…`) is found too. Processes whose descriptors this process may not read are skipped. Sorted
    /// by pid.
    static func holders(of path: String, proc: String = "/proc") -> [DeviceHolder] {
        var target = stat()
        guard stat(path, &target) == 0 else { return [] }
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: proc)) ?? []).compactMap { Int32($0) }
        var holders: [DeviceHolder] = []
        for pid in pids.sorted() {
            let directory = "\(proc)/\(pid)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            let holds = descriptors.contains { descriptor in
                var status = stat()
                guard stat("\(directory)/\(descriptor)", &status) == 0 else { return false }
                return status.st_dev == target.st_dev && status.st_ino == target.st_ino
            }
            if holds { holders.append(DeviceHolder(pid: pid, command: command(of: pid, proc: proc))) }
        }
        return holders
    }

    /// `<proc>/<pid>/comm` without its newline, empty when unreadable.
    static func command(of pid: Int32, proc: String = "/proc") -> String {
        guard let data = FileManager.default.contents(atPath: "\(proc)/\(pid)/comm") else { return "" }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The owner, group (with its name from the group database) and mode of `path`; `nil` when it cannot be
    /// `stat`ed.
    static func access(of path: String) -> DeviceAccess? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return DeviceAccess(
            uid: status.st_uid, gid: status.st_gid, groupName: groupName(status.st_gid),
            mode: UInt32(status.st_mode))
    }

    /// The name of group `gid` (`getgrgid_r`), `nil` when there is no such group.
    static func groupName(_ gid: gid_t) -> String? {
        var size = 4096
        while size <= 1 << 20 {
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: size)
            // The entry's strings point into `buffer`, so they are read inside the same closure.
            let (status, name) = buffer.withUnsafeMutableBufferPointer { bytes -> (Int32, String?) in
                let status = getgrgid_r(gid, &entry, bytes.baseAddress, bytes.count, &result)
                guard status == 0, result != nil, let name = entry.gr_name else { return (status, nil) }
                return (status, String(cString: name))
            }
            if status == ERANGE {
                size *= 4
                continue
            }
            return name
        }
        return nil
    }
}
