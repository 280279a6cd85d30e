import CaptureCore
import CaptureTestSupport
import Foundation
import SystemPackage
import Testing

@testable import CaptureV4L2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Busy and permission errors said in full: the holders of a node from `/proc/*/fd`, and the group to join from the
/// node's owner, group and mode. Plain files stand in for device nodes (the scan compares device and inode).
@Suite("Busy and permission diagnosis")
struct NodeDiagnosisTests {
    /// A scratch file, removed at the end of the test.
    static func scratchFile(_ name: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("diagnosis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        // mknod makes the file without opening it. Written through a descriptor, it could look held by another
        // test's child: a process spawned while the descriptor was open keeps a copy until its exec (and after, as
        // Foundation's writes are not close-on-exec); "no holder visible" once found one, "pid … (oot.default-qos)".
        try #require(mknod(path, S_IFREG | 0o644, 0) == 0, "mknod \(path): errno \(errno)")
        return path
    }

    /// Spawns `sleep 120` (killed and reaped by the test) with `path` open on its standard input and no other
    /// descriptor; returns its pid. bash closes what the fork inherited before it opens `path` and becomes `sleep`
    /// (same pid): a descriptor another test had open at the fork (Foundation's file writes are not close-on-exec)
    /// would otherwise stay open in `sleep` and make that test's file look held. Its output goes to /dev/null: if the
    /// test process dies before it kills the holder (a sanitizer abort), an inherited stdout would keep `swift test`
    /// waiting on the pipe until the sleep ended (a dry run's ASan step waited 600 s for the old `sleep 600`).
    static func spawnHolder(of path: String) throws -> pid_t {
        let script =
            #"for fd in /proc/self/fd/*; do fd=${fd##*/}; ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null; done; "#
            + #"exec sleep 120 <"$0" >/dev/null 2>&1"#
        return try SpawnedProcess.start(["bash", "-c", script, path])
    }

    /// The process's `/proc/PID/comm`, or nil once it is gone.
    static func comm(of pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/comm") else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// What a failed expectation needs to know about the holder: its name, state and where its descriptors point.
    static func describe(_ pid: pid_t) -> String {
        let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "gone"
        let directory = "/proc/\(pid)/fd"
        let fds = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted().map { fd in
            "\(fd) → \((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)")) ?? "?")"
        }
        return "pid \(pid) comm \(comm(of: pid) ?? "gone"), stat \(state), fds [\(fds.joined(separator: ", "))]"
    }

    @Test("a child process holding the file is found by the /proc scan, with its pid and command name")
    func childHolderFound() async throws {
        let path = try Self.scratchFile("node")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        #expect(NodeDiagnosis.holders(of: path).isEmpty)
        let pid = try Self.spawnHolder(of: path)
        defer { SpawnedProcess.killAndWait(pid) }
        // The child opens the file and then becomes `sleep` (same pid): once its comm says `sleep`, the file is open.
        // Waiting on that one small file instead of rescanning all of /proc keeps a starved, sanitized parallel run
        // (one CI scan loop took 80 s and outlived the old `sleep 30`) to a single scan.
        let deadline = ContinuousClock.now + .seconds(60)
        while Self.comm(of: pid) != "sleep" && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(Self.comm(of: pid) == "sleep", "the holder never became sleep: \(Self.describe(pid))")
        let holders = NodeDiagnosis.holders(of: path)
        #expect(holders == [DeviceHolder(pid: pid, command: "sleep")], "holder: \(Self.describe(pid))")

        let error = CaptureError(V4L2Error(call: "VIDIOC_S_FMT", errno: .resourceBusy), device: path)
        #expect(error.code == .deviceBusy)
        #expect(error.holders == [DeviceHolder(pid: pid, command: "sleep")])
        #expect(error.message == "the device is in use by pid \(pid) (sleep)")
        #expect(error.call == "VIDIOC_S_FMT")
        print("busy: \(error)")
    }

    @Test("this process holding the file through a symbolic link is found too, named by /proc/self/comm")
    func selfHolderThroughLink() throws {
        let path = try Self.scratchFile("node")
        let directory = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/by-id-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let fd = open(link, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let ours = getpid()
        let commData = try #require(FileManager.default.contents(atPath: "/proc/self/comm"))
        let comm = String(decoding: commData, as: UTF8.self).trimmingCharacters(in: .newlines)
        #expect(NodeDiagnosis.holders(of: path) == [DeviceHolder(pid: ours, command: comm)])
    }

    @Test("no holder visible: the message says so instead of naming nobody")
    func noHolder() throws {
        let path = try Self.scratchFile("node")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let error = CaptureError(V4L2Error(call: "VIDIOC_REQBUFS", errno: .resourceBusy), device: path)
        #expect(error.code == .deviceBusy)
        #expect(error.holders.isEmpty)
        #expect(error.message.hasPrefix("the device is in use by another process"))
    }

    /// The name `/etc/group` gives `gid`, read independently of `getgrgid`.
    static func etcGroupName(_ gid: gid_t) -> String? {
        let text = (try? String(contentsOfFile: "/etc/group", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if fields.count >= 3, fields[2] == String(gid) { return fields[0] }
        }
        return nil
    }

    @Test("permission denied on a group-readable node names the node's group and says to join it")
    func permissionNamesGroup() throws {
        let path = try Self.scratchFile("node")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        // Root may give the file any group; others keep their own (which they belong to, so it is allowed).
        let gid: gid_t
        if getuid() == 0 {
            gid = gid_t(Self.etcGroupName(44) != nil ? 44 : 39)
            try #require(chown(path, 0, gid) == 0)
        } else {
            gid = getegid()
        }
        try #require(chmod(path, 0o660) == 0)
        let error = CaptureError(V4L2Error(call: "open", errno: .permissionDenied), device: path)
        #expect(error.code == .permissionDenied)
        let access = try #require(error.access)
        #expect(access.gid == gid)
        #expect(access.mode == 0o660)
        #expect(access.groupName == Self.etcGroupName(gid))
        let name = access.groupName ?? "gid \(gid)"
        #expect(error.message.contains("join group '\(name)'"), "\(error.message)")
        #expect(error.message.contains("group '\(name)' (gid \(gid)), mode 660"), "\(error.message)")
        print("permission: \(error)")
    }

    @Test("permission denied on an owner-only node (0600) says joining a group would not help")
    func permissionOwnerOnly() throws {
        let path = try Self.scratchFile("node")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try #require(chmod(path, 0o600) == 0)
        let error = CaptureError(V4L2Error(call: "open", errno: .notPermitted), device: path)
        #expect(error.code == .permissionDenied)
        #expect(error.access?.groupMayOpen == false)
        #expect(error.message.contains("only its owner"), "\(error.message)")
        #expect(!error.message.contains("join group"))
    }

    @Test("a group with no name in the group database is named by its id")
    func unnamedGroup() {
        let access = DeviceAccess(uid: 0, gid: 987_654, groupName: nil, mode: 0o20660)
        #expect(access.mode == 0o660)
        #expect(access.groupMayOpen)
        #expect(access.remedy.hasPrefix("join group 'gid 987654'"))
        #expect(NodeDiagnosis.groupName(987_654) == nil)
    }
}
