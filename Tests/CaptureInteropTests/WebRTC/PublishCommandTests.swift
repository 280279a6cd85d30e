import CaptureLabSupport
import CaptureTestSupport
import Foundation
import Testing

/// `capturer-probe publish` against a WHIP endpoint that misbehaves: a clear line, a distinct exit status, no
/// half-open session left (the resource is DELETEd), never a crash.
@Suite(
    "capturer-probe publish: bad endpoints", .tags(.interop), .selectedByTags,
    .enabled(if: WHIPTestServer.python3 != nil, "needs python3"),
    // A hang guard, not a speed check: the parallel sanitized run starves the pool for a minute at a time.
    .timeLimit(.minutes(5)))
struct PublishCommandTests {
    @Test(
        "4xx, 5xx, garbage SDP, an answer whose candidate never answers: exit 18 or 19, resources DELETEd",
        arguments: [
            ("/whip/forbidden", Int32(18), "HTTP 403"), ("/whip/error", 18, "HTTP 500"),
            ("/whip/garbage", 18, "not valid SDP"), ("/whip/ok", 19, "not connected"),
        ])
    func badEndpoint(path: String, status: Int32, message: String) async throws {
        guard let probe = BuiltTools.capturerProbe?.path else {
            print("SKIPPED (publish: bad endpoints): capturer-probe is not built")
            return
        }
        try await WHIPTestServer.with { server in
            let result = try await ExternalProcess.run(
                probe,
                ["publish", "--whip", server.url(path).absoluteString, "--frames", "10", "--connect-timeout", "1"])
            #expect(result.status == status, "\(result.stderrText)")
            #expect(result.stderrText.contains(message), "\(result.stderrText)")
            let log = try await server.log()
            let created = path == "/whip/garbage" || path == "/whip/ok"
            #expect(log.contains { $0.method == "DELETE" } == created, "\(log.map { "\($0.method) \($0.path)" })")
        }
    }

    @Test("a URL that is not http(s) is a usage error before anything is sent")
    func badURL() async throws {
        guard let probe = BuiltTools.capturerProbe?.path else { return }
        let result = try await ExternalProcess.run(probe, ["publish", "--whip", "ftp://example.net/whip"])
        #expect(result.status == 64)
        #expect(result.stderrText.contains("--whip must be an http(s) URL"))
    }
}
