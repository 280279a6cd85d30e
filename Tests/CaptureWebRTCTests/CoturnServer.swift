import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A coturn `turnserver` on 127.0.0.1 for a test: long-term credentials `u:p` in realm `test`, UDP only, loopback
/// peers allowed, its log in a file the test can read. ``stop()`` kills it and waits for it, so no process is left.
final class CoturnServer {
    static let username = "u"
    static let password = "p"
    static let realm = "test"

    let process = Process()
    let directory: URL
    let logFile: URL
    /// The server's UDP address.
    let address: SocketAddress

    /// `nil` (with the reason) when `turnserver` is not installed.
    static func skipReason() -> String? {
        ExternalProcess.which("turnserver") == nil ? "turnserver (coturn) is not installed" : nil
    }

    /// A started server, or `nil` after printing `SKIPPED (test): reason` when `turnserver` is not installed.
    static func startOrSkip(_ test: String = #function) async throws -> CoturnServer? {
        if let reason = skipReason() {
            print("SKIPPED (\(test.prefix { $0 != "(" })): \(reason)")
            return nil
        }
        return try await CoturnServer()
    }

    /// Starts the server on a free port and waits until it listens.
    init() async throws {
        let probe = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let port = probe.localAddress.port
        probe.close()
        address = .loopbackIPv4(port: port)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("coturn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logFile = directory.appendingPathComponent("turnserver.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: ExternalProcess.which("turnserver") ?? "/usr/bin/turnserver")
        process.arguments = [
            "-n", "--lt-cred-mech", "--user", "\(Self.username):\(Self.password)", "--realm", Self.realm,
            "--no-tls", "--no-dtls", "--no-tcp-relay", "--allow-loopback-peers", "--no-cli", "--log-file", "stdout",
            "--simple-log", "--verbose", "--listening-ip", "127.0.0.1", "--relay-ip", "127.0.0.1",
            "--listening-port", "\(port)", "--pidfile", directory.appendingPathComponent("pid").path,
            "--userdb", directory.appendingPathComponent("turndb").path,
        ]
        let handle = try FileHandle(forWritingTo: logFile)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while !log.contains("turn server id="), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard process.isRunning, log.contains("turn server id=") else {
            stop()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "turnserver did not start: \(log)"])
        }
    }

    /// Everything the server logged so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// A ``TURNServer`` for our agent, with the right or a given password.
    func server(password: String = CoturnServer.password) -> TURNServer {
        TURNServer(
            address: address, username: Self.username, password: password, name: "turn:\(address)?transport=udp")
    }

    /// Kills the server (SIGKILL: coturn 4.6 does not exit on SIGTERM) and waits for it to exit. Idempotent.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
