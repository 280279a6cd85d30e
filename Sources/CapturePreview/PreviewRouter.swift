import Foundation
import NIOHTTP1

/// One complete HTTP request as the preview server hands it to the router: the head, the body (at most the body
/// limit), and whether the body went over the limit (then `body` is empty).
public struct PreviewRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The request target as sent: path and optional query (`/whep/viewer/abc?x=1`).
    public var uri: String
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The body bytes (empty when there was none or when it was too large).
    public var body: [UInt8]
    /// Whether the body was larger than the server's limit (its bytes were read and dropped).
    public var bodyTooLarge: Bool
    /// The peer, "host:port".
    public var remote: String

    /// A request with every field given.
    public init(
        method: HTTPMethod, uri: String, headers: HTTPHeaders = [:], body: [UInt8] = [], bodyTooLarge: Bool = false,
        remote: String = "unknown"
    ) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.remote = remote
    }

    /// The path part of ``uri`` (before any `?`).
    public var path: Substring { uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }
}

/// One HTTP response from the router: status, header fields and body (the server adds `Content-Length` and
/// `Connection`).
public struct PreviewResponse: Sendable {
    /// The status.
    public var status: HTTPResponseStatus
    /// The header fields, CORS fields included.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]

    /// A response with every field given.
    public init(status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body decoded as UTF-8 (for tests and logs).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// The preview server's routes and status codes, independent of sockets.
///
/// | Path | Method | Answer |
/// |---|---|---|
/// | `/` (`/index.html`) | GET | 200 the page (``PreviewPage``); 500 when its resource files cannot be read |
/// | `/figures`, `/stats.json` | GET | 200 ``PreviewFigures`` as JSON |
/// | `/whep` | POST `application/sdp` | 201 the SDP answer, `Location: /whep/viewer/<id>` |
/// | `/whep`, `/whep/viewer/<id>` | OPTIONS | 204 CORS preflight |
/// | `/whep/viewer/<id>` | DELETE | 200 the viewer ended, 404 no such viewer |
/// | `/whep/viewer/<id>` | PATCH | 405: trickle ICE and ICE restarts are not supported (the answer carries every
///   candidate) |
///
/// Other methods on these paths get 405 with `Allow`; other paths 404. A POST whose body is over the limit gets 413,
/// with another content type 415, empty or not SDP 400 (these count as malformed). Every response carries
/// `Access-Control-Allow-Origin: *` and exposes `Location`, `ETag` and `Link`, so pages of other origins and WHEP
/// players can watch.
public struct PreviewRouter: Sendable {
    /// The default body limit: 64 KiB, far above any SDP offer.
    public static let defaultBodyLimit = 64 * 1024
    /// The path of the WHEP endpoint.
    public static let whepPath = "/whep"
    /// The path prefix of viewer resources; a viewer's `Location` is this followed by its id.
    public static let viewerPathPrefix = "/whep/viewer/"

    /// The WebRTC side.
    public let handler: any WHEPSessionHandler
    /// Where responses, viewers and malformed requests are counted.
    public let statistics: PreviewServerStatistics
    /// The largest body accepted, in bytes.
    public let bodyLimit: Int
    /// The page served at `/`, or why it cannot be (then `/` answers 500 with the reason).
    let page: Result<PreviewPage.Contents, PreviewPageError>

    /// A router answering through `handler`, counting into `statistics`, accepting bodies up to `bodyLimit` bytes.
    public init(
        handler: any WHEPSessionHandler, statistics: PreviewServerStatistics = PreviewServerStatistics(),
        bodyLimit: Int = PreviewRouter.defaultBodyLimit
    ) {
        self.init(handler: handler, statistics: statistics, bodyLimit: bodyLimit, page: PreviewPage.bundled)
    }

    /// A router serving `page` at `/` (tests give it one read from elsewhere, or a failure).
    init(
        handler: any WHEPSessionHandler, statistics: PreviewServerStatistics, bodyLimit: Int,
        page: Result<PreviewPage.Contents, PreviewPageError>
    ) {
        self.handler = handler
        self.statistics = statistics
        self.bodyLimit = bodyLimit
        self.page = page
    }

    /// Answers `request` and counts the response.
    public func respond(to request: PreviewRequest) async -> PreviewResponse {
        let response = await route(request)
        statistics.recordResponse(status: Int(response.status.code))
        return response
    }

    private func route(_ request: PreviewRequest) async -> PreviewResponse {
        let path = request.path
        switch path {
        case "/", "/index.html":
            guard request.method == .GET else { return Self.methodNotAllowed(allow: "GET") }
            switch page {
            case .success(let page):
                return Self.response(.ok, contentType: "text/html; charset=utf-8", body: Array(page.html.utf8))
            case .failure(let error):
                return Self.error(.internalError("\(error)"))
            }
        case "/figures", "/stats.json":
            guard request.method == .GET else { return Self.methodNotAllowed(allow: "GET") }
            let figures = await handler.figures()
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            guard let json = try? encoder.encode(figures) else {
                return Self.error(.internalError("figures could not be encoded"))
            }
            var response = Self.response(.ok, contentType: "application/json", body: Array(json))
            response.headers.add(name: "Cache-Control", value: "no-store")
            return response
        case Substring(Self.whepPath):
            switch request.method {
            case .OPTIONS: return Self.preflight()
            case .POST: return await offer(request)
            default: return Self.methodNotAllowed(allow: "POST, OPTIONS")
            }
        default:
            guard path.hasPrefix(Self.viewerPathPrefix) else {
                return Self.error(.notFound("no such resource"))
            }
            let id = path.dropFirst(Self.viewerPathPrefix.count)
            guard Self.isValidViewerID(id) else { return Self.error(.notFound("no such viewer")) }
            switch request.method {
            case .OPTIONS: return Self.preflight()
            case .DELETE:
                guard await handler.end(viewerID: String(id)) else { return Self.error(.notFound("no such viewer")) }
                statistics.recordViewerEnded()
                return Self.response(.ok)
            default: return Self.methodNotAllowed(allow: "DELETE, OPTIONS")
            }
        }
    }

    /// POST /whep: validates the offer, asks the handler, answers 201 with the viewer's Location.
    private func offer(_ request: PreviewRequest) async -> PreviewResponse {
        if let refusal = validateOffer(request) {
            statistics.recordMalformed()
            return Self.error(refusal)
        }
        let offer = String(decoding: request.body, as: UTF8.self)
        let answer: String
        let viewerID: String
        do {
            (answer, viewerID) = try await handler.answer(offer: offer, remote: request.remote)
        } catch {
            return Self.error(error)
        }
        guard Self.isValidViewerID(Substring(viewerID)) else {
            _ = await handler.end(viewerID: viewerID)
            return Self.error(.internalError("the answerer gave an unusable viewer id"))
        }
        statistics.recordViewerStarted()
        var response = Self.response(.created, contentType: "application/sdp", body: Array(answer.utf8))
        response.headers.add(name: "Location", value: Self.viewerPathPrefix + viewerID)
        return response
    }

    private func validateOffer(_ request: PreviewRequest) -> WHEPRequestError? {
        if request.bodyTooLarge { return .payloadTooLarge("the offer is larger than \(bodyLimit) bytes") }
        let mediaType = request.headers.first(name: "Content-Type")?
            .split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/sdp" else {
            return .unsupportedMediaType("the offer must be sent as Content-Type: application/sdp")
        }
        if request.body.isEmpty { return .badRequest("the offer is empty") }
        guard String(validating: request.body, as: UTF8.self) != nil, request.body.starts(with: Array("v=".utf8))
        else { return .badRequest("the body is not an SDP offer") }
        return nil
    }

    /// Whether `id` can name a viewer resource: 1…128 letters, digits, `-` or `_`.
    public static func isValidViewerID(_ id: Substring) -> Bool {
        !id.isEmpty && id.utf8.count <= 128
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// The header fields every response carries: any origin may read it and see `Location`, `ETag` and `Link`.
    public static var corsHeaders: HTTPHeaders {
        [
            "Access-Control-Allow-Origin": "*",
            "Access-Control-Expose-Headers": "Location, ETag, Link",
        ]
    }

    /// 204 answering a CORS preflight.
    private static func preflight() -> PreviewResponse {
        var response = response(.noContent)
        response.headers.add(name: "Access-Control-Allow-Methods", value: "GET, POST, PATCH, DELETE, OPTIONS")
        response.headers.add(name: "Access-Control-Allow-Headers", value: "Content-Type, Authorization, If-Match")
        response.headers.add(name: "Access-Control-Max-Age", value: "86400")
        return response
    }

    /// A response with the CORS fields, and a body of `contentType` when `body` is not empty.
    static func response(
        _ status: HTTPResponseStatus, contentType: String? = nil, body: [UInt8] = []
    ) -> PreviewResponse {
        var headers = corsHeaders
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        return PreviewResponse(status: status, headers: headers, body: body)
    }

    /// The `text/plain` answer to a refused request.
    static func error(_ error: WHEPRequestError) -> PreviewResponse {
        let code = (400...599).contains(error.status) ? error.status : 500
        return response(
            HTTPResponseStatus(statusCode: code), contentType: "text/plain; charset=utf-8",
            body: Array((error.message + "\n").utf8))
    }

    private static func methodNotAllowed(allow: String) -> PreviewResponse {
        var response = error(WHEPRequestError(status: 405, message: "method not allowed"))
        response.headers.add(name: "Allow", value: allow)
        return response
    }
}
