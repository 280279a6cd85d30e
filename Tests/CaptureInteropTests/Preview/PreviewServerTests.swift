import CaptureLabSupport
import CaptureNet
import CaptureTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CapturePreview

/// The preview server on a real socket, driven by curl.
@Suite(.tags(.interop), .selectedByTags, .enabled(if: ExternalProcess.which("curl") != nil, "needs curl"))
struct PreviewServerTests {
    /// One response as curl printed it with `-i` (the last head when a `100 Continue` came first).
    struct CurlResponse {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    static func curl(
        _ method: String, _ url: String, headers: [String] = [], body: Data? = nil
    ) async throws -> CurlResponse {
        // A generous limit: the server's tasks share the cooperative pool with every other suite, and a sanitized
        // parallel run once kept a request waiting past 10 s (correctness is judged here, not speed).
        var arguments = ["-s", "-i", "--max-time", "60", "-X", method]
        for header in headers { arguments += ["-H", header] }
        if body != nil { arguments += ["--data-binary", "@-"] }
        arguments.append(url)
        let result = try await ExternalProcess.run("curl", arguments, input: body)
        try #require(result.status == 0, "curl failed: \(result.status) \(result.stderrText)")
        var text = result.stdoutText
        var response = CurlResponse(status: 0, headers: [:], body: "")
        while let split = text.range(of: "\r\n\r\n") {
            let head = text[..<split.lowerBound].split(separator: "\r\n")
            text = String(text[split.upperBound...])
            let statusLine = head.first?.split(separator: " ") ?? []
            response.status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
            response.headers = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                response.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespaces)
            }
            if response.status != 100 { break }
        }
        response.body = text
        return response
    }

    @Test func servesThePageAndWHEPOverHTTP() async throws {
        let handler = FakeWHEPHandler()
        let server = PreviewServer(handler: handler, logger: previewTestLogger)
        let port = try await server.start(bind: "127.0.0.1", port: 0).port
        let base = "http://127.0.0.1:\(port)"
        let sdp = "Content-Type: application/sdp"

        do {
            let page = try await Self.curl("GET", base + "/")
            #expect(page.status == 200)
            #expect(page.body == (try PreviewPage.html()))
            #expect(page.headers["access-control-allow-origin"] == "*")

            let figures = try await Self.curl("GET", base + "/figures")
            #expect(figures.status == 200)
            let decoded = try JSONDecoder().decode(PreviewFigures.self, from: Data(figures.body.utf8))
            #expect(decoded == FakeWHEPHandler.figures)

            let preflight = try await Self.curl(
                "OPTIONS", base + "/whep",
                headers: ["Origin: http://elsewhere.example", "Access-Control-Request-Method: POST"])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == "*")
            #expect(preflight.headers["access-control-allow-methods"] == "GET, POST, PATCH, DELETE, OPTIONS")
            #expect(preflight.headers["access-control-allow-headers"] == "Content-Type, Authorization, If-Match")
            #expect(preflight.headers["access-control-expose-headers"] == "Location, ETag, Link")

            let offer = try await Self.curl("POST", base + "/whep", headers: [sdp], body: Data(previewOffer.utf8))
            #expect(offer.status == 201)
            #expect(offer.headers["content-type"] == "application/sdp")
            #expect(offer.body == FakeWHEPHandler.answerSDP)
            #expect(offer.headers["access-control-allow-origin"] == "*")
            let location = try #require(offer.headers["location"])
            #expect(location == "/whep/viewer/viewer-1")
            #expect(handler.offers == [previewOffer])

            #expect(try await Self.curl("DELETE", base + location).status == 200)
            #expect(handler.liveViewers.isEmpty)
            #expect(try await Self.curl("DELETE", base + location).status == 404)

            let wrongType = try await Self.curl(
                "POST", base + "/whep", headers: ["Content-Type: text/plain"], body: Data(previewOffer.utf8))
            #expect(wrongType.status == 415)

            let big = Data(repeating: UInt8(ascii: "a"), count: 100 * 1024)
            // Sent straight away, and announced with Expect: 100-continue (refused before the body is sent).
            #expect(try await Self.curl("POST", base + "/whep", headers: [sdp, "Expect:"], body: big).status == 413)
            let expecting = try await Self.curl(
                "POST", base + "/whep", headers: [sdp, "Expect: 100-continue"], body: big)
            #expect(expecting.status == 413)
            // A small body announced with Expect gets 100 Continue, then its answer.
            let continued = try await Self.curl(
                "POST", base + "/whep", headers: [sdp, "Expect: 100-continue"], body: Data(previewOffer.utf8))
            #expect(continued.status == 201)

            #expect(try await Self.curl("POST", base + "/whep", headers: [sdp], body: Data()).status == 400)
            #expect(try await Self.curl("GET", base + "/nope").status == 404)
            #expect(try await Self.curl("PUT", base + "/").status == 405)
            #expect(try await Self.curl("PATCH", base + "/whep/viewer/viewer-2", headers: [sdp]).status == 405)

            let snapshot = server.statistics.snapshot
            #expect(snapshot.viewersStarted == 2)
            #expect(snapshot.viewersEnded == 1)
            #expect(snapshot.malformed == 4)
            #expect(snapshot.responsesByStatus[413] == 2)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func servesSeveralViewersAtOnce() async throws {
        let handler = FakeWHEPHandler()
        let server = PreviewServer(handler: handler, logger: previewTestLogger)
        let port = try await server.start(bind: "127.0.0.1", port: 0).port
        let url = "http://127.0.0.1:\(port)/whep"
        let locations = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let response = try await Self.curl(
                        "POST", url, headers: ["Content-Type: application/sdp"], body: Data(previewOffer.utf8))
                    return response.headers["location"]
                }
            }
            var locations: Set<String> = []
            for try await location in group { location.map { _ = locations.insert($0) } }
            return locations
        }
        await server.stop()
        #expect(locations.count == 4)
        #expect(handler.liveViewers.count == 4)
    }

    @Test func stopFreesThePort() async throws {
        // A port below the kernel's ephemeral range (ip_local_port_range), which no other test's socket can be given
        // while this one is free: binding port 0 instead, another test's connection took the freed number in a
        // parallel run (EADDRINUSE twice in dry runs). Only this test binds a port by number.
        let first = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        var port = 0
        for _ in 0..<50 where port == 0 {
            let candidate = Int.random(in: 20_000..<min(Self.ephemeralPortsStart, 30_000))
            if (try? await first.start(bind: "127.0.0.1", port: candidate)) != nil { port = candidate }
        }
        try #require(port != 0, "no free port below the ephemeral range")
        #expect(try await Self.curl("GET", "http://127.0.0.1:\(port)/figures").status == 200)
        await first.stop()
        await first.stop()

        let second = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let again = try await second.start(bind: "127.0.0.1", port: port)
        #expect(Int(again.port) == port)
        #expect(try await Self.curl("GET", "http://127.0.0.1:\(port)/figures").status == 200)
        await second.stop()
    }

    @Test("a child process started while serving does not keep the port after stop (close-on-exec)")
    func childProcessDoesNotInheritTheListeningSocket() async {
        // In a process of its own: the child started here inherits every descriptor without close-on-exec, other
        // tests' sockets included, which would hold their ports while it lives.
        await #expect(processExitsWith: .success) { try await Self.childDoesNotInheritInThisProcess() }
    }

    static func childDoesNotInheritInThisProcess() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let address = try await server.start(bind: "127.0.0.1", port: 0)
        // A child that inherits every descriptor without FD_CLOEXEC, as fork/exec or a bare posix_spawn gives it (no
        // file actions; Foundation's Process, by contrast, closes the descriptors from 3 up in its children).
        let argv: [String] = ["/bin/sleep", "30"]
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        try #require(posix_spawn(&child, "/bin/sleep", nil, nil, arguments, environ) == 0)
        defer { SpawnedProcess.killAndWait(child) }
        await server.stop()
        // Bound again while the child lives: EADDRINUSE if the child had inherited the listening socket.
        let again = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let rebound = try await again.start(bind: "127.0.0.1", port: Int(address.port))
        #expect(rebound.port == address.port)
        await again.stop()
    }

    @Test func bindAddressesThatAreNotUsable() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        await #expect(throws: PreviewServer.StartError.invalidAddress("127.0.0.1:70000")) {
            try await server.start(bind: "127.0.0.1", port: 70_000)
        }
        await #expect(throws: PreviewServer.StartError.invalidAddress("no-such-host.invalid")) {
            try await server.start(bind: "no-such-host.invalid", port: 0)
        }
        // An address this machine does not have.
        await #expect(throws: PreviewServer.StartError.systemCall(name: "bind", errno: EADDRNOTAVAIL)) {
            try await server.start(bind: "192.0.2.1", port: 0)
        }
        // After failures the server can still start, on a name that resolves.
        let address = try await server.start(bind: "localhost", port: 0)
        #expect(address.host == "127.0.0.1")
        await server.stop()
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    static let ephemeralPortsStart: Int = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
    }()

    @Test func stopsWithOpenConnections() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let address = try await server.start(bind: "127.0.0.1", port: 0)
        let clients = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // One connection idle after a complete request, one in the middle of a request's head.
        var channels: [Channel] = []
        for bytes in ["GET /figures HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n"] {
            let channel = try await ClientBootstrap(group: clients).connect(host: address.host, port: Int(address.port))
                .get()
            try await channel.writeAndFlush(ByteBuffer(string: bytes))
            channels.append(channel)
        }
        try await Task.sleep(for: .milliseconds(200))
        let clock = ContinuousClock()
        let started = clock.now
        await server.stop()
        // A hang detector, not a timing: a sanitized parallel run took 8.6 s.
        #expect(clock.now - started < .seconds(60))
        for channel in channels {
            // The server closed its side: each client channel sees its close.
            try await channel.closeFuture.get()
        }
        try await clients.shutdownGracefully()
    }

    @Test func closesIdleConnections() async throws {
        let server = PreviewServer(
            handler: FakeWHEPHandler(), idleTimeout: .milliseconds(300), logger: previewTestLogger)
        let address = try await server.start(bind: "127.0.0.1", port: 0)
        let clients = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ClientBootstrap(group: clients).connect(host: address.host, port: Int(address.port))
            .get()
        // Under load the server may close the idle connection before this write completes: that is the behaviour
        // under test, so a write failure is not one.
        try? await channel.writeAndFlush(ByteBuffer(string: "POST /whep HTTP/1.1\r\nHost: x\r\n"))
        let clock = ContinuousClock()
        let started = clock.now
        try await channel.closeFuture.get()
        // A hang detector, not a timing: a sanitized parallel run took 8.6 s.
        #expect(clock.now - started < .seconds(60))
        await server.stop()
        try await clients.shutdownGracefully()
    }

    @Test func keepsConnectionsAlive() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let port = try await server.start(bind: "127.0.0.1", port: 0).port
        let figures = "http://127.0.0.1:\(port)/figures"
        // curl reuses one connection for the three requests (the 404 too).
        let result = try await ExternalProcess.run(
            "curl",
            ["-s", "-w", "%{http_code} %{num_connects}\n"]
                + [figures, figures + "x", figures].flatMap { ["-o", "/dev/null", $0] })
        await server.stop()
        #expect(result.stdoutText == "200 1\n404 0\n200 0\n")
    }

    @Test func answersUnparsableRequestsWith400() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        let address = try await server.start(bind: "127.0.0.1", port: 0)
        let clients = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ClientBootstrap(group: clients).connect(host: address.host, port: Int(address.port))
            .get()
        try await channel.writeAndFlush(ByteBuffer(string: "NOT\u{1} HTTP\r\n\r\n"))
        try await channel.closeFuture.get()
        // The connection's task counts the error after the 400 went out: give it a moment.
        for _ in 0..<100 where server.statistics.snapshot.malformed == 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        await server.stop()
        try await clients.shutdownGracefully()
        let snapshot = server.statistics.snapshot
        #expect(snapshot.malformed == 1)
        #expect(snapshot.responsesByStatus == [400: 1])
    }

    @Test func refusesASecondStart() async throws {
        let server = PreviewServer(handler: FakeWHEPHandler(), logger: previewTestLogger)
        _ = try await server.start(bind: "127.0.0.1", port: 0)
        await #expect(throws: PreviewServer.StartError.alreadyStarted) {
            _ = try await server.start(bind: "127.0.0.1", port: 0)
        }
        await server.stop()
    }
}
