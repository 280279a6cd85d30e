import CaptureDTLS
import CaptureNet
import CaptureRTP
import CaptureTestSupport
import Foundation
import Testing

/// Our endpoint against OpenSSL's own DTLS peer (`openssl s_client`), over real UDP on the loopback.
@Suite(.tags(.interop), .selectedByTags, .serialized) struct DTLSOpenSSLInteropTests {
    static let openSSL = ExternalProcess.which("openssl")

    /// What the serving thread saw.
    struct Served: Sendable {
        var connected = false
        var keys: DTLSSRTPKeys?
        var finalState = "new"
        var errors: [String] = []
    }

    /// Runs `body` on its own thread (it blocks in `poll`; the cooperative pool must not).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "DTLS interop"
            thread.start()
        }
    }

    /// What both interop tests start from: the openssl tool, a scratch folder (removed afterwards) with the peer's
    /// certificate and key, our certificate and our UDP socket on the loopback.
    struct Setup {
        let tool: String
        let directory: URL
        let certPath: String
        let keyPath: String
        let peerFingerprint: DTLSFingerprint
        let certificate: DTLSCertificate
        let socket: UDPSocket
    }

    /// Runs `body` with a fresh ``Setup``, closing the socket and removing the folder afterwards.
    static func withSetup(_ body: (Setup) async throws -> Void) async throws {
        guard let tool = openSSL else {
            Issue.record("the openssl tool is not installed")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certPath, keyPath, peerFingerprint) = try await peerCertificate(in: directory, tool: tool)
        let socket = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { socket.close() }
        try await body(
            Setup(
                tool: tool, directory: directory, certPath: certPath, keyPath: keyPath,
                peerFingerprint: peerFingerprint, certificate: try DTLSCertificate(), socket: socket))
    }

    /// A P-256 key and self-signed certificate made by the openssl tool, and its SHA-256 fingerprint as it prints it.
    static func peerCertificate(
        in directory: URL, tool: String
    ) async throws -> (cert: String, key: String, DTLSFingerprint) {
        let cert = directory.appendingPathComponent("peer.pem").path
        let key = directory.appendingPathComponent("peer.key").path
        let made = try await ExternalProcess.run(
            tool,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", cert, "-days", "1", "-subj", "/CN=openssl-peer",
            ])
        try #require(made.status == 0, "\(made.stderrText)")
        let printed = try await ExternalProcess.run(tool, ["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"])
        // "sha256 Fingerprint=AB:CD:…" (the label's case varies between OpenSSL versions).
        let hex = try #require(
            printed.stdoutText.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        return (cert, key, try DTLSFingerprint(sdpValue: "sha-256 \(hex)"))
    }

    // Without the tool the test is reported as skipped, with this reason.
    @Test(.enabled(if: openSSL != nil, "the openssl tool is not installed"), .timeLimit(.minutes(1)))
    func openSSLClientHandshakesWithOurServer() async throws {
        try await Self.withSetup { setup in
            let (tool, certPath, keyPath) = (setup.tool, setup.certPath, setup.keyPath)
            let (peerFingerprint, certificate, socket) = (setup.peerFingerprint, setup.certificate, setup.socket)
            let port = socket.localAddress.port

            async let client = ExternalProcess.run(
                tool,
                [
                    "s_client", "-dtls1_2", "-connect", "127.0.0.1:\(port)", "-use_srtp", "SRTP_AES128_CM_SHA1_80",
                    "-cert", certPath, "-key", keyPath, "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen",
                    "60",
                ])
            let served = await Self.onThread { Self.serve(on: socket, certificate: certificate, peer: peerFingerprint) }
            let result = try await client
            let output = result.stdoutText

            #expect(
                served.connected,
                "final state \(served.finalState), errors \(served.errors); openssl: \(result.stderrText)"
            )
            #expect(served.finalState == "closed", "\(served.errors)")
            #expect(output.contains("SRTP Extension negotiated, profile=SRTP_AES128_CM_SHA1_80"), "\(output)")
            // Our certificate, key exchange and protocol as OpenSSL saw them.
            #expect(output.contains("CN = capturer-probe"), "\(output)")
            #expect(output.contains("Server Temp Key: ECDH, prime256v1"), "\(output)")
            #expect(output.contains("Peer signature type: ECDSA"), "\(output)")
            #expect(output.contains("Protocol  : DTLSv1.2"), "\(output)")
            let keys = try #require(served.keys)
            #expect(keys.profile == .aesCM128HMACSHA1_80)
            // We are the server: remote is the client's, local the server's (client_key|server_key|client_salt|server_salt).
            let expected = keys.remote.key + keys.local.key + keys.remote.salt + keys.local.salt
            let hex = expected.map { String(format: "%02X", $0) }.joined()
            #expect(output.contains("Keying material: \(hex)"), "\(output)")
        }
    }

    @Test(.enabled(if: openSSL != nil, "the openssl tool is not installed"), .timeLimit(.minutes(1)))
    func ourClientHandshakesWithOpenSSLServer() async throws {
        try await Self.withSetup { setup in
            let (tool, certPath, keyPath) = (setup.tool, setup.certPath, setup.keyPath)
            let (peerFingerprint, certificate, socket) = (setup.peerFingerprint, setup.certificate, setup.socket)
            let directory = setup.directory
            // A port free a moment ago, for the server (s_server cannot report the one it picks).
            let probe = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
            let port = probe.localAddress.port
            probe.close()

            let arguments = [
                "s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)", "-naccept", "1", "-use_srtp",
                "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80", "-cert", certPath, "-key", keyPath, "-keymatexport",
                "EXTRACTOR-dtls_srtp", "-keymatexportlen", "56",
            ]
            let outputPath = directory.appendingPathComponent("s_server.out").path
            let peer = SocketAddress.loopbackIPv4(port: port)
            // s_server quits when its standard input ends, so it gets a pipe held open until we have closed.
            let (served, status) = await Self.onThread { () -> (Served, Int32) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = arguments
                let input = Pipe()
                process.standardInput = input
                guard FileManager.default.createFile(atPath: outputPath, contents: nil),
                    let output = FileHandle(forWritingAtPath: outputPath)
                else { return (Served(errors: ["cannot create \(outputPath)"]), -1) }
                defer { try? output.close() }
                process.standardOutput = output
                process.standardError = output
                do { try process.run() } catch { return (Served(errors: ["\(error)"]), -1) }
                let served = Self.connect(
                    from: socket, to: peer, certificate: certificate, peerFingerprint: peerFingerprint)
                try? input.fileHandleForWriting.close()
                let deadline = Date().addingTimeInterval(10)
                // blocking: inside `onThread`, a thread made for s_server's run.
                while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
                if process.isRunning { process.terminate() }
                // blocking: the same thread.
                process.waitUntilExit()
                return (served, process.terminationStatus)
            }
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            #expect(status == 0, "\(output)")

            #expect(
                served.connected, "final state \(served.finalState), errors \(served.errors); openssl: \(output)"
            )
            #expect(output.contains("SRTP Extension negotiated, profile=SRTP_AEAD_AES_128_GCM"), "\(output)")
            let keys = try #require(served.keys)
            #expect(keys.profile == .aeadAES128GCM)
            // We are the client: local is the client's.
            let expected = keys.local.key + keys.remote.key + keys.local.salt + keys.remote.salt
            let hex = expected.map { String(format: "%02X", $0) }.joined()
            #expect(output.contains("Keying material: \(hex)"), "\(output)")
        }
    }

    /// Our client endpoint on `socket` to `peer`: handshakes (retransmitting while the server starts), then closes.
    static func connect(
        from socket: UDPSocket, to peer: SocketAddress, certificate: DTLSCertificate, peerFingerprint: DTLSFingerprint
    ) -> Served {
        var served = Served()
        let endpoint: DTLSEndpoint
        do {
            endpoint = try DTLSEndpoint(role: .client, certificate: certificate, remoteFingerprint: peerFingerprint)
        } catch {
            served.errors.append("\(error)")
            return served
        }
        // Give s_server a moment to bind; a lost ClientHello is retransmitted after 1 s anyway.
        // blocking: `connect` runs inside `onThread`, on a thread made for it.
        Thread.sleep(forTimeInterval: 0.3)
        endpoint.start(nowNs: monotonicNowNs())
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = monotonicNowNs() + 20_000_000_000
        var closing = false
        loop: while monotonicNowNs() < deadline {
            while let datagram = endpoint.pollTransmit() {
                datagram.withUnsafeBytes { _ = socket.send($0, to: peer) }
            }
            switch endpoint.state {
            case .connected:
                served.connected = true
                served.keys = endpoint.srtpKeys
                endpoint.close()
                closing = true
                continue loop
            case .closed, .failed: if closing || !served.connected { break loop }
            case .new, .connecting: break
            }
            guard case .some = receiveOrTimeout(endpoint, on: socket, into: &buffer, &served) else { break }
        }
        served.finalState = "\(endpoint.state)"
        return served
    }

    /// One turn of the interop driver: waits up to 50 ms for a datagram on `socket` and gives it to `endpoint` (a
    /// handling error is recorded in `served`), or fires the endpoint's timer when it is due. Returns the datagram's
    /// sender (`.some(nil)` when none came), or `nil` when the socket failed (recorded in `served`).
    static func receiveOrTimeout(
        _ endpoint: DTLSEndpoint, on socket: UDPSocket, into buffer: inout [UInt8], _ served: inout Served
    ) -> SocketAddress?? {
        let received: (count: Int, source: SocketAddress)?
        do {
            received = try buffer.withUnsafeMutableBytes { bytes in
                try socket.receive(into: bytes, timeout: .milliseconds(50))
            }
        } catch {
            served.errors.append("\(error)")
            return nil
        }
        let now = monotonicNowNs()
        if let received {
            do {
                try endpoint.handle(datagram: Array(buffer[0..<received.count]), nowNs: now)
            } catch {
                served.errors.append("\(error)")
            }
            return .some(received.source)
        }
        if let due = endpoint.nextTimeoutNs, now >= due { endpoint.handleTimeout(nowNs: now) }
        return .some(nil)
    }

    /// Our server endpoint on `socket` until the association closes or fails, or 20 s pass.
    static func serve(on socket: UDPSocket, certificate: DTLSCertificate, peer: DTLSFingerprint) -> Served {
        var served = Served()
        let endpoint: DTLSEndpoint
        do {
            endpoint = try DTLSEndpoint(role: .server, certificate: certificate, remoteFingerprint: peer)
        } catch {
            served.errors.append("\(error)")
            return served
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        var peerAddress: SocketAddress?
        let deadline = monotonicNowNs() + 20_000_000_000
        loop: while monotonicNowNs() < deadline {
            guard case .some(let source) = receiveOrTimeout(endpoint, on: socket, into: &buffer, &served) else { break }
            if let source { peerAddress = source }
            while let datagram = endpoint.pollTransmit() {
                if let peerAddress { datagram.withUnsafeBytes { _ = socket.send($0, to: peerAddress) } }
            }
            switch endpoint.state {
            case .connected:
                if !served.connected {
                    served.connected = true
                    served.keys = endpoint.srtpKeys
                }
            case .closed, .failed: break loop
            case .new, .connecting: break
            }
        }
        served.finalState = "\(endpoint.state)"
        if served.keys == nil { served.keys = endpoint.srtpKeys }
        return served
    }
}
