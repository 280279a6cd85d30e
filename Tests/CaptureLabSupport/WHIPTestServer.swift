import CaptureTestSupport
import Foundation

/// `Scripts/whip-test-server.py` run with python3 on a free port, for one test; ``stop()`` kills it.
///
/// The server runs through `ExternalProcess` (its own thread, output in files), and tells its port and pid through
/// a ready file: reading a pipe from a `Process` here hung the suite, since corelibs Foundation's `Process` waits for
/// every holder of the child's descriptors.
package final class WHIPTestServer: Sendable {
    /// One request the server received.
    package struct LoggedRequest: Decodable, Sendable {
        package var method: String
        package var path: String
        package var headers: [[String]]
        package var body: String

        /// Every value of the header `name` (case-insensitive).
        package func header(_ name: String) -> [String] {
            headers.filter { $0.count == 2 && $0[0].lowercased() == name.lowercased() }.map { $0[1] }
        }
    }

    package enum StartError: Error { case noPort(String) }

    package static let python3 = ExternalProcess.which("python3")

    package let port: Int
    package let pid: Int32
    /// `https` when started with a certificate, else `http`.
    package let scheme: String
    private let run: Task<ExternalProcess.Result, any Error>

    private init(port: Int, pid: Int32, scheme: String, run: Task<ExternalProcess.Result, any Error>) {
        self.port = port
        self.pid = pid
        self.scheme = scheme
        self.run = run
    }

    /// The PEM files of a certificate and its key, for HTTPS; with `requireClientCertificate`, a server that
    /// requires a client certificate and trusts none (every handshake ends with its alert).
    package struct TLSFiles: Sendable {
        package var certificate: String
        package var key: String
        package var requireClientCertificate: Bool

        package init(certificate: String, key: String, requireClientCertificate: Bool = false) {
            self.certificate = certificate
            self.key = key
            self.requireClientCertificate = requireClientCertificate
        }
    }

    /// Starts the server (HTTPS with `tls`) and waits for its ready file.
    package static func start(slowSeconds: Double = 5, tls: TLSFiles? = nil) async throws -> WHIPTestServer {
        let ready = FileManager.default.temporaryDirectory.appendingPathComponent("whip-test-server-\(UUID())")
        defer { try? FileManager.default.removeItem(at: ready) }
        let arguments =
            [
                Fixtures.packageRoot.appendingPathComponent("Scripts/whip-test-server.py").path,
                "--answer", Fixtures.url("webrtc/janus-videoroom-answer.sdp").path, "--port", "0",
                "--slow", String(slowSeconds), "--ready", ready.path,
            ]
            + (tls.map {
                ["--tls", $0.certificate, $0.key]
                    + ($0.requireClientCertificate ? ["--require-client-certificate"] : [])
            } ?? [])
        let run = Task { try await ExternalProcess.run(python3 ?? "/usr/bin/python3", arguments) }
        // A hang guard, not a timing: the file is read once more after the deadline, since a task of a saturated
        // parallel sanitized run can wake past it (a TSan CI run reported no ready file at 20 s, stderr empty).
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let late = ContinuousClock.now >= deadline
            if let text = try? String(contentsOf: ready, encoding: .utf8) {
                let fields = text.split(whereSeparator: \.isWhitespace)
                if fields.count == 2, let port = Int(fields[0]), let pid = Int32(fields[1]) {
                    return WHIPTestServer(port: port, pid: pid, scheme: tls == nil ? "http" : "https", run: run)
                }
            }
            if late { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        // No ready file: the server may still be running (a server never exits by itself), so kill it, then say why.
        run.cancel()
        let result = try? await run.value
        throw StartError.noPort(result?.stderrText ?? "no ready file")
    }

    /// Runs `body` with a fresh server and always stops it.
    package static func with(slowSeconds: Double = 5, _ body: (WHIPTestServer) async throws -> Void) async throws {
        let server = try await start(slowSeconds: slowSeconds)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// `path` on the server, named by `host` (the server listens on 127.0.0.1, which `localhost` also names).
    package func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "\(scheme)://\(host):\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// The requests the server has received so far, read with curl in a process of its own (so that the client under
    /// test is the only HTTP client in the test process; `--insecure` for the self-signed certificate of `tls`).
    package func log() async throws -> [LoggedRequest] {
        let result = try await ExternalProcess.run(
            "curl", ["-s", "--insecure", "--max-time", "10", url("/log").absoluteString])
        return try JSONDecoder().decode([LoggedRequest].self, from: result.stdout)
    }

    /// Stops the server and waits for it to exit.
    package func stop() async {
        kill(pid, SIGKILL)
        run.cancel()
        _ = try? await run.value
    }
}
