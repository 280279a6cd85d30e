import CaptureICE
import CaptureLabSupport
import CaptureNet
import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

/// A WHIP endpoint whose 201 announces a TURN server in a `Link` header, and a publisher with no servers of its own:
/// it allocates on that server (a local coturn), trickles the relayed candidate by PATCH and ends with
/// end-of-candidates, without delaying ICE; a resource that refuses PATCH (405) is counted, not fatal.
@Suite(
    "WHIP publisher: the endpoint's Link TURN server, trickled", .tags(.interop), .selectedByTags, .serialized,
    // A hang guard, not a speed check: the parallel sanitized run starves the pool for a minute at a time.
    .enabled(if: WHIPTestServer.python3 != nil, "needs python3"), .timeLimit(.minutes(5)))
struct WHIPLinkTrickleTests {
    /// Starts a publisher on `path` (the fixture's answer names a candidate nobody answers, so `start()` ends in a
    /// transport timeout after `connectTimeout`), waits for `until` on the server's log and the statistics, and returns
    /// the publisher, how `start()` failed and the server's log once it has.
    static func publish(
        _ path: String, server: WHIPTestServer, iceServers: [ICEServer] = [],
        until done: @escaping ([WHIPTestServer.LoggedRequest], WHIPPublisherStatistics) -> Bool
    ) async throws -> (WHIPPublisher, WHIPPublishError?, [WHIPTestServer.LoggedRequest]) {
        let publisher = WHIPPublisher(
            configuration: WHIPPublisherConfiguration(
                endpoint: server.url(path), iceServers: iceServers, hostAddresses: [.loopbackIPv4(port: 0)],
                connectTimeout: .seconds(4)))
        let start = Task { () -> WHIPPublishError? in
            do throws(WHIPPublishError) {
                _ = try await publisher.start()
                return nil
            } catch {
                return error
            }
        }
        let deadline = ContinuousClock.now + .seconds(4)
        var log = try await server.log()
        while !done(log, publisher.statistics), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            log = try await server.log()
        }
        let failure = await start.value
        await publisher.stop()
        return (publisher, failure, try await server.log())
    }

    /// Runs `body` with a local coturn and a WHIP test server, or says loudly why it is skipped (no `turnserver`).
    static func withCoturn(
        _ test: String = #function, _ body: (CoturnServer, WHIPTestServer) async throws -> Void
    ) async throws {
        guard let coturn = try await CoturnServer.startOrSkip(test) else { return }
        defer { coturn.stop() }
        try await WHIPTestServer.with { server in try await body(coturn, server) }
    }

    /// Whether `start()` failed in the transport (the fixture's candidate never answers), not in signalling.
    static func isTransportFailure(_ failure: WHIPPublishError?) -> Bool {
        if case .transport = failure { true } else { false }
    }

    static func patches(_ log: [WHIPTestServer.LoggedRequest]) -> [WHIPTestServer.LoggedRequest] {
        log.filter { $0.method == "PATCH" }
    }

    @Test("Link TURN server, no user server: coturn allocates for u, PATCHes carry typ relay then end-of-candidates")
    func linkTURNServerIsAllocatedAndTrickled() async throws {
        try await Self.withCoturn { coturn, server in
            let (publisher, failure, log) = try await Self.publish(
                "/whip/turn-link?port=\(coturn.address.port)", server: server
            ) { log, _ in Self.patches(log).contains { $0.body.contains("a=end-of-candidates") } }
            let patches = Self.patches(log)
            let statistics = publisher.statistics
            print(
                "Link TURN: \(patches.count) PATCHes, trickle \(statistics.trickle), TURN "
                    + "\(statistics.turn.map { "\($0.state) \($0.relayedAddress.map { "\($0)" } ?? "-")" })")

            let offer = try #require(log.first { $0.method == "POST" })
            #expect(!offer.body.contains("a=end-of-candidates"), "candidates may be trickled after the offer")
            #expect(offer.body.contains("typ host"))
            #expect(coturn.log.contains("username=<\(CoturnServer.username)>"), "coturn allocated for user u")
            #expect(statistics.turn.first?.state == .allocated || statistics.turn.first?.state == .closed)

            #expect(patches.allSatisfy { $0.header("Content-Type") == ["application/trickle-ice-sdpfrag"] })
            #expect(patches.allSatisfy { $0.header("If-Match").first?.hasPrefix("\"etag-") == true })
            #expect(patches.allSatisfy { $0.body.contains("a=ice-ufrag:") && $0.body.contains("a=ice-pwd:") })
            #expect(patches.allSatisfy { $0.body.contains("a=mid:0") })
            let relay = patches.filter { $0.body.contains("typ relay") }
            #expect(relay.count == 1, "\(patches.map(\.body))")
            #expect(patches.last?.body.contains("a=end-of-candidates") == true, "end-of-candidates comes last")
            #expect(!(patches.last?.body.contains("a=candidate") ?? true))

            #expect(statistics.trickle.linkICEServers == ["turn:127.0.0.1:\(coturn.address.port)?transport=udp"])
            #expect(statistics.trickle.candidatesTrickled == 1)
            #expect(statistics.trickle.endOfCandidatesSent)
            #expect(statistics.trickle.patchesRefused == 0 && statistics.trickle.patchesFailed == 0)
            // The publish failed only because the fixture's candidate never answers, not because of the trickle.
            #expect(Self.isTransportFailure(failure), "\(String(describing: failure))")
            #expect(log.contains { $0.method == "DELETE" })
        }
    }

    @Test("a resource answering PATCH with 405: counted as refused, nothing more PATCHed, publishing goes on")
    func refusedPatchIsCountedNotFatal() async throws {
        try await Self.withCoturn { coturn, server in
            let (publisher, failure, log) = try await Self.publish(
                "/whip/turn-link?port=\(coturn.address.port)&patch=405", server: server
            ) { _, statistics in statistics.trickle.patchesRefused > 0 }
            let statistics = publisher.statistics
            #expect(statistics.trickle.patchesRefused == 1)
            #expect(statistics.trickle.candidatesTrickled == 0)
            #expect(!statistics.trickle.endOfCandidatesSent)
            #expect(Self.patches(log).count == 1, "nothing more after the refusal")
            #expect(coturn.log.contains("username=<\(CoturnServer.username)>"))
            #expect(Self.isTransportFailure(failure), "\(String(describing: failure))")
            #expect(log.contains { $0.method == "DELETE" })
        }
    }

    @Test("the Link server is the user's own (same URL and credentials): not added again, only end-of-candidates")
    func linkServerAlreadyConfiguredIsNotAddedAgain() async throws {
        try await Self.withCoturn { coturn, server in
            let url = "turn:127.0.0.1:\(coturn.address.port)?transport=udp"
            let own = try #require(
                ICEServer(url: url, username: CoturnServer.username, credential: CoturnServer.password))
            let (publisher, _, log) = try await Self.publish(
                "/whip/turn-link?port=\(coturn.address.port)", server: server, iceServers: [own]
            ) { log, _ in Self.patches(log).contains { $0.body.contains("a=end-of-candidates") } }
            let statistics = publisher.statistics
            #expect(statistics.trickle.linkICEServers.isEmpty)
            #expect(statistics.turn.count == 1, "one allocation, the user's")
            let offer = try #require(log.first { $0.method == "POST" })
            #expect(offer.body.contains("typ relay"), "the user's relay candidate is in the offer")
            #expect(Self.patches(log).count == 1)
            #expect(Self.patches(log).first?.body.contains("a=candidate") == false)
            #expect(statistics.trickle.endOfCandidatesSent && statistics.trickle.candidatesTrickled == 0)
        }
    }
}
