import CaptureLabSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CapturePreview

@Suite struct PreviewRouterTests {
    let handler = FakeWHEPHandler()
    let router: PreviewRouter

    init() {
        router = PreviewRouter(handler: handler, bodyLimit: 1024)
    }

    private func post(
        _ body: String, contentType: String? = "application/sdp", uri: String = "/whep"
    ) async
        -> PreviewResponse
    {
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        return await router.respond(
            to: PreviewRequest(method: .POST, uri: uri, headers: headers, body: Array(body.utf8)))
    }

    private func request(_ method: HTTPMethod, _ uri: String) async -> PreviewResponse {
        await router.respond(to: PreviewRequest(method: method, uri: uri))
    }

    private func expectCORS(_ response: PreviewResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.headers["Access-Control-Allow-Origin"] == ["*"], sourceLocation: sourceLocation)
        #expect(
            response.headers["Access-Control-Expose-Headers"] == ["Location, ETag, Link"],
            sourceLocation: sourceLocation)
    }

    @Test func servesThePage() async throws {
        let response = await request(.GET, "/")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == ["text/html; charset=utf-8"])
        #expect(response.bodyText == (try PreviewPage.html()))
        expectCORS(response)
        #expect(await request(.GET, "/?whep=http://example.com/whep&seconds=5").status == .ok)
        #expect(await request(.GET, "/index.html").status == .ok)
    }

    @Test("the page's resource files: both scripts inline, no element loading one left")
    func pageInlinesItsScripts() throws {
        let html = try PreviewPage.html()
        let stamp = try PreviewPage.stampScript()
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<script id=\"stamp\">\n" + stamp + "</script>\n<script>\n\"use strict\";"))
        #expect(stamp.contains("function watchStamps("))
        #expect(html.contains("window.previewState"))
        #expect(!html.contains(" src="))
        #expect(html.hasSuffix("</script>\n</body>\n</html>\n"))
    }

    /// A bundle over a temporary folder holding `files` (name → text) in `Resources/`.
    private static func withBundle<T>(
        _ files: [String: String], _ body: (Bundle) throws -> T
    ) throws -> T {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("preview-bundle-\(UUID())")
        let resources = root.appendingPathComponent(PreviewPage.directory)
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for (name, text) in files { try Data(text.utf8).write(to: resources.appendingPathComponent(name)) }
        return try body(try #require(Bundle(path: root.path)))
    }

    @Test("a page whose resource files are missing or wrong is a 500 that says which, not a crash")
    func missingResourceIs500() async throws {
        let page = #"<p>x</p><script id="stamp" src="stamp.js"></script><script src="preview.js"></script>"#
        let cases: [([String: String], PreviewPageError)] = [
            ([:], .missing("preview.html")),
            (["preview.html": page, "preview.js": "run();\n"], .missing("stamp.js")),
            (["preview.html": "<p>x</p>", "stamp.js": "a();\n", "preview.js": "b();\n"], .scriptNotLoaded("stamp.js")),
        ]
        for (files, expected) in cases {
            let loaded = try Self.withBundle(files) { bundle in
                Result { () throws(PreviewPageError) in try PreviewPage.load(from: bundle) }
            }
            #expect(loaded == .failure(expected))
            let router = PreviewRouter(
                handler: handler, statistics: PreviewServerStatistics(), bodyLimit: 1024, page: loaded)
            let response = await router.respond(to: PreviewRequest(method: .GET, uri: "/"))
            #expect(response.status == .internalServerError)
            #expect(response.bodyText == expected.description + "\n")
            #expect(router.statistics.snapshot.responsesByStatus == [500: 1])
        }
        let complete = try Self.withBundle(["preview.html": page, "stamp.js": "a();\n", "preview.js": "b();\n"]) {
            try PreviewPage.load(from: $0)
        }
        #expect(complete.html == "<p>x</p><script id=\"stamp\">\na();\n</script><script>\nb();\n</script>")
        #expect(complete.stampScript == "a();\n")
    }

    @Test func servesTheFigures() async throws {
        for path in ["/figures", "/stats.json"] {
            let response = await request(.GET, path)
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == ["application/json"])
            expectCORS(response)
            let figures = try JSONDecoder().decode(PreviewFigures.self, from: Data(response.body))
            #expect(figures == FakeWHEPHandler.figures)
        }
    }

    @Test func answersThePreflight() async {
        for path in ["/whep", "/whep/viewer/viewer-1"] {
            let response = await request(.OPTIONS, path)
            #expect(response.status == .noContent)
            #expect(response.body.isEmpty)
            expectCORS(response)
            #expect(response.headers["Access-Control-Allow-Methods"] == ["GET, POST, PATCH, DELETE, OPTIONS"])
            #expect(response.headers["Access-Control-Allow-Headers"] == ["Content-Type, Authorization, If-Match"])
        }
    }

    @Test func answersAnOfferWithALocation() async {
        let response = await post(previewOffer, contentType: "application/sdp; charset=utf-8")
        #expect(response.status == .created)
        #expect(response.headers["Content-Type"] == ["application/sdp"])
        #expect(response.headers["Location"] == ["/whep/viewer/viewer-1"])
        #expect(response.bodyText == FakeWHEPHandler.answerSDP)
        expectCORS(response)
        #expect(handler.offers == [previewOffer])
        #expect(handler.liveViewers == ["viewer-1"])

        let second = await post(previewOffer, uri: "/whep?token=x")
        #expect(second.headers["Location"] == ["/whep/viewer/viewer-2"])
        #expect(handler.liveViewers == ["viewer-1", "viewer-2"])
        #expect(router.statistics.snapshot.viewersStarted == 2)
    }

    @Test func endsAViewerOnce() async {
        _ = await post(previewOffer)
        let ended = await request(.DELETE, "/whep/viewer/viewer-1")
        #expect(ended.status == .ok)
        expectCORS(ended)
        #expect(handler.liveViewers.isEmpty)
        let again = await request(.DELETE, "/whep/viewer/viewer-1")
        #expect(again.status == .notFound)
        expectCORS(again)
        #expect(await request(.DELETE, "/whep/viewer/../etc").status == .notFound)
        #expect(await request(.DELETE, "/whep/viewer/").status == .notFound)
        let snapshot = router.statistics.snapshot
        #expect(snapshot.viewersStarted == 1)
        #expect(snapshot.viewersEnded == 1)
    }

    @Test func refusesMalformedOffers() async {
        let wrongType = await post(previewOffer, contentType: "text/plain")
        #expect(wrongType.status == .unsupportedMediaType)
        expectCORS(wrongType)
        #expect(await post(previewOffer, contentType: nil).status == .unsupportedMediaType)
        #expect(await post("").status == .badRequest)
        #expect(await post("hello").status == .badRequest)
        let tooLarge = await router.respond(
            to: PreviewRequest(
                method: .POST, uri: "/whep", headers: ["Content-Type": "application/sdp"], bodyTooLarge: true))
        #expect(tooLarge.status == .payloadTooLarge)
        #expect(handler.offers.isEmpty)
        let snapshot = router.statistics.snapshot
        #expect(snapshot.malformed == 5)
        #expect(snapshot.responsesByStatus == [415: 2, 400: 2, 413: 1])
        #expect(snapshot.viewersStarted == 0)
    }

    @Test func passesTheAnswerersRefusalOn() async {
        let response = await post(previewOffer + "a=busy\r\n")
        #expect(response.status == .serviceUnavailable)
        #expect(response.bodyText == "too many viewers\n")
        expectCORS(response)
    }

    @Test func refusesOtherMethodsAndPaths() async {
        let patch = await request(.PATCH, "/whep/viewer/viewer-1")
        #expect(patch.status == .methodNotAllowed)
        #expect(patch.headers["Allow"] == ["DELETE, OPTIONS"])
        expectCORS(patch)
        let getWHEP = await request(.GET, "/whep")
        #expect(getWHEP.status == .methodNotAllowed)
        #expect(getWHEP.headers["Allow"] == ["POST, OPTIONS"])
        #expect(await request(.PUT, "/").status == .methodNotAllowed)
        #expect(await request(.POST, "/figures").status == .methodNotAllowed)
        let missing = await request(.GET, "/nope")
        #expect(missing.status == .notFound)
        expectCORS(missing)
        #expect(await request(.GET, "/whep/other").status == .notFound)
        #expect(await request(.GET, "/whep/viewer/viewer-1").status == .methodNotAllowed)
    }

    @Test func viewerIDs() {
        #expect(PreviewRouter.isValidViewerID("abc-DEF_123"))
        #expect(!PreviewRouter.isValidViewerID(""))
        #expect(!PreviewRouter.isValidViewerID("a/b"))
        #expect(!PreviewRouter.isValidViewerID("a%20b"))
        #expect(!PreviewRouter.isValidViewerID(Substring(String(repeating: "a", count: 129))))
    }
}

@Suite struct PreviewRequestCollectorTests {
    private func head(_ headers: HTTPHeaders = [:]) -> HTTPServerRequestPart {
        .head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/whep", headers: headers))
    }

    @Test func gathersARequest() throws {
        var collector = PreviewRequestCollector(limit: 8, remote: "127.0.0.1:1")
        guard case .none = collector.consume(head(["Content-Type": "application/sdp"])) else {
            Issue.record("head alone completed something")
            return
        }
        _ = collector.consume(.body(ByteBuffer(string: "v=0")))
        _ = collector.consume(.body(ByteBuffer(string: "\r\n")))
        guard case .request(let request, let keepAlive) = collector.consume(.end(nil)) else {
            Issue.record("no request at the end")
            return
        }
        #expect(keepAlive)
        #expect(request.body == Array("v=0\r\n".utf8))
        #expect(!request.bodyTooLarge)
        #expect(request.remote == "127.0.0.1:1")
        #expect(request.path == "/whep")
    }

    @Test func dropsABodyOverTheLimit() {
        var collector = PreviewRequestCollector(limit: 4, remote: "x")
        _ = collector.consume(head())
        _ = collector.consume(.body(ByteBuffer(string: "abc")))
        _ = collector.consume(.body(ByteBuffer(string: "def")))
        guard case .request(let request, _) = collector.consume(.end(nil)) else {
            Issue.record("no request at the end")
            return
        }
        #expect(request.bodyTooLarge)
        #expect(request.body.isEmpty)
    }

    @Test func closesAfterTooMuchDiscardedBody() {
        var collector = PreviewRequestCollector(limit: 4, remote: "x")
        _ = collector.consume(head())
        let chunk = ByteBuffer(repeating: 0x61, count: 1 << 20)
        _ = collector.consume(.body(chunk))
        guard case .rejectAndClose(let response) = collector.consume(.body(chunk)) else {
            Issue.record("kept reading past the discard limit")
            return
        }
        #expect(response.status == .payloadTooLarge)
    }

    @Test func answersExpectContinue() {
        var collector = PreviewRequestCollector(limit: 100, remote: "x")
        guard
            case .sendContinue(let head) = collector.consume(head(["Expect": "100-continue", "Content-Length": "10"]))
        else {
            Issue.record("no 100 Continue")
            return
        }
        #expect(head.status == .continue)
        guard
            case .rejectAndClose(let response) = collector.consume(
                self.head(["Expect": "100-continue", "Content-Length": "101"]))
        else {
            Issue.record("an announced oversized body was not refused")
            return
        }
        #expect(response.status == .payloadTooLarge)
    }
}
