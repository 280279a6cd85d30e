import CaptureICE
import CaptureNet
import CaptureTestSupport
import CaptureWebRTC
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A coturn `turnserver` on 127.0.0.1 for a test: long-term credentials `u:p` in realm `test`, UDP only, loopback
/// peers allowed, its log in a file the test can read. ``stop()`` kills it and waits for it, so no process is left.
///
/// Started with ``SpawnedProcess`` (posix_spawn) and read with plain file reads: under LeakSanitizer, Foundation's `Process` (a weak
/// reference's side table in `run()`/`waitUntilExit()`) and `String(contentsOf:)` on a file that grows while it is read
/// (`readBytesFromFile`'s buffers) each leaked in a dry run.
package final class CoturnServer {
    package static let username = "u"
    package static let password = "p"
    package static let realm = "test"

    /// The server's pid; 0 once it has been reaped.
    private var pid: pid_t = 0
    package let directory: URL
    package let logFile: URL
    /// The server's UDP address.
    package let address: SocketAddress

    /// `nil` (with the reason) when `turnserver` is not installed.
    package static func skipReason() -> String? {
        ExternalProcess.which("turnserver") == nil ? "turnserver (coturn) is not installed" : nil
    }

    /// A started server, or `nil` after printing `SKIPPED (test): reason` when `turnserver` is not installed.
    package static func startOrSkip(_ test: String = #function) async throws -> CoturnServer? {
        if let reason = skipReason() {
            print("SKIPPED (\(test.prefix { $0 != "(" })): \(reason)")
            return nil
        }
        return try await CoturnServer()
    }

    /// Starts the server on a free port and waits until it listens.
    package init() async throws {
        let probe = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let port = probe.localAddress.port
        probe.close()
        address = .loopbackIPv4(port: port)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("coturn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logFile = directory.appendingPathComponent("turnserver.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let executable = ExternalProcess.which("turnserver") ?? "/usr/bin/turnserver"
        let arguments = [
            "turnserver",
            "-n", "--lt-cred-mech", "--user", "\(Self.username):\(Self.password)", "--realm", Self.realm,
            "--no-tls", "--no-dtls", "--no-tcp-relay", "--allow-loopback-peers", "--no-cli", "--log-file", "stdout",
            "--simple-log", "--verbose", "--listening-ip", "127.0.0.1", "--relay-ip", "127.0.0.1",
            "--listening-port", "\(port)", "--pidfile", directory.appendingPathComponent("pid").path,
            "--userdb", directory.appendingPathComponent("turndb").path,
        ]
        pid = try SpawnedProcess.start(
            arguments, executable: executable, input: .null, output: .file(logFile.path), error: .descriptor(1))
        let deadline = ContinuousClock.now + .seconds(10)
        while !log.contains("turn server id="), isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard isRunning, log.contains("turn server id=") else {
            stop()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "turnserver did not start: \(log)"])
        }
    }

    /// Whether the server still runs (reaps it once it has exited).
    private var isRunning: Bool {
        guard pid > 0 else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == 0 { return true }
        pid = 0
        return false
    }

    /// Everything the server logged so far.
    package var log: String {
        let fd = open(logFile.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A ``TURNServer`` for our agent, with the right or a given password.
    package func server(password: String = CoturnServer.password) -> TURNServer {
        TURNServer(
            address: address, username: Self.username, password: password, name: "turn:\(address)?transport=udp")
    }

    /// Kills the server (SIGKILL: coturn 4.6 does not exit on SIGTERM) and waits for it to exit. Idempotent.
    package func stop() {
        guard isRunning else { return }
        SpawnedProcess.killAndWait(pid)
        pid = 0
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
