internal import AsyncHTTPClient
internal import CaptureCore
import Foundation
internal import NIOCore
internal import NIOHTTP1

/// A WHIP client (RFC 9725): publishes an SDP offer to an endpoint, trickles candidates to the session and deletes it.
///
/// ## Ingest session setup (RFC 9725 §4.2)
/// ``publish(offer:)`` POSTs the offer as `application/sdp`, requires `201 Created` with a `Location` and an answer,
/// and returns the session with its `ETag` and `Accept-Patch`. A 201 whose answer is unusable is deleted before the
/// error is thrown, so no half-open session is left behind. ``delete(_:)`` DELETEs the session URL (termination).
///
/// ## Load balancing and redirections
/// Only 307 and 308 redirect the POST: the client re-POSTs the offer to their `Location` itself, at most
/// ``maximumRedirects`` times. Any other 3xx is ``WHIPError/unexpectedStatus(method:status:)``: the HTTP stack
/// follows no redirect on its own.
///
/// ## ICE support (RFC 9725 §4.3) and STUN/TURN server configuration (RFC 9725 §4.6)
/// ``trickle(_:session:)`` PATCHes an `application/trickle-ice-sdpfrag`, with `If-Match` when the 201 had an ETag.
/// The 201's `Link: <…>; rel="ice-server"` headers become ``WHIPSession/iceServers``.
///
/// ## Authentication and authorization
/// Every request carries `Authorization: Bearer <token>` when a token is set.
///
/// ## Limits, HTTP stack and threading
/// Every request must be answered, body included, within ``timeout``; a response body over
/// ``maximumResponseBytes`` is refused rather than buffered. The HTTP is AsyncHTTPClient on SwiftNIO (HTTP/1.1, or
/// HTTP/2 when a TLS server offers it; `https:` verified against the system's trust roots) on NIO's shared event
/// loop threads: no thread of its own, none of its types in this API. Each client has its own connection pool, closed
/// when the client is released. All methods may be called concurrently from any task; none blocks a thread while it
/// waits.
public final class WHIPClient: Sendable {
    /// The WHIP endpoint URL the offer is POSTed to.
    public let endpoint: URL
    /// The bearer token sent on every request, or `nil`.
    public let bearerToken: String?
    /// How long a request may take, from its start to the last byte of the response's body.
    public let timeout: Duration
    /// How many 307/308 redirects a POST follows before failing.
    public let maximumRedirects: Int
    /// The largest response body read, 1 MiB: an SDP answer is a few kilobytes, and a server sending more must not
    /// make the client buffer without bound. Past it a 2xx or 3xx fails with
    /// ``WHIPError/responseTooLarge(method:limit:)``; an error status keeps the body's start (for its first line).
    public static let maximumResponseBytes = 1 << 20

    private let http: HTTPClient

    /// Creates a client for `endpoint`. Nothing is sent before the first request.
    public init(endpoint: URL, bearerToken: String? = nil, timeout: Duration = .seconds(10), maximumRedirects: Int = 10)
    {
        self.endpoint = endpoint
        self.bearerToken = bearerToken
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        var configuration = HTTPClient.Configuration(
            // WHIP re-POSTs the offer to a 307/308's target itself, with its own limit, and follows nothing else.
            redirectConfiguration: .disallow,
            // One connection attempt within the request's own time limit (AHC's default, 10 s, could cut it short).
            timeout: HTTPClient.Configuration.Timeout(connect: TimeAmount(timeout)),
            decompression: .disabled)
        // A refused connection fails the request at once, as a transport error, instead of being retried with
        // backoff until the time limit (which would report a refusal as a timeout).
        configuration.connectionPool.retryConnectionEstablishment = false
        // A kept-alive connection serves the PATCHes that follow the POST; it is not kept long past them.
        configuration.connectionPool.idleTimeout = .seconds(30)
        http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    deinit {
        // Closes the pool's connections without waiting: the callback form neither blocks this thread (a deinit may
        // run on the cooperative pool or on an event loop) nor needs a task. AHC keeps the client alive until done.
        http.shutdown(queue: .global()) { _ in }
    }

    /// POSTs `offer` and returns the session the endpoint created.
    public func publish(offer: String) async throws(WHIPError) -> WHIPSession {
        var url = endpoint
        var redirects = 0
        var response: Response
        while true {
            response = try await send(
                .POST, url, body: Array(offer.utf8),
                headers: [("Content-Type", "application/sdp"), ("Accept", "application/sdp")])
            switch response.status {
            case 201:
                break
            case 307, 308:
                guard let location = response.header("Location"), let next = Self.resolve(location, against: url)
                else { throw .redirectWithoutLocation(status: response.status) }
                redirects += 1
                guard redirects <= maximumRedirects else { throw .tooManyRedirects(maximumRedirects) }
                url = next
                continue
            case 400...599:
                throw .httpStatus(method: "POST", status: response.status, firstLine: response.firstLine)
            default:
                throw .unexpectedStatus(method: "POST", status: response.status)
            }
            break
        }
        guard let location = response.header("Location"), let resourceURL = Self.resolve(location, against: url)
        else { throw .missingLocation }
        let answerSDP = String(decoding: response.body, as: UTF8.self)
        let answer: PublishAnswer
        do {
            answer = try PublishAnswer(parsing: answerSDP)
        } catch {
            // No half-open session: the endpoint created a resource we cannot use.
            var deleted = true
            do throws(WHIPError) {
                try await delete(resourceURL: resourceURL)
            } catch {
                deleted = false
            }
            throw .invalidAnswer(error, resourceDeleted: deleted)
        }
        return WHIPSession(
            resourceURL: resourceURL, endpointURL: url, etag: response.header("ETag"), answerSDP: answerSDP,
            answer: answer, iceServers: ICEServer.parse(linkHeaders: response.headers("Link")),
            acceptPatch: response.header("Accept-Patch"))
    }

    /// PATCHes `fragment` to the session (trickle ICE); 200 and 204 are success.
    public func trickle(_ fragment: TrickleFragment, session whip: WHIPSession) async throws(WHIPError) {
        var headers = [("Content-Type", TrickleFragment.contentType)]
        if let etag = whip.etag { headers.append(("If-Match", etag)) }
        let response = try await send(.PATCH, whip.resourceURL, body: Array(fragment.render().utf8), headers: headers)
        try Self.check(response, method: "PATCH")
    }

    /// DELETEs the session; 200 and 204 (any 2xx) are success.
    public func delete(_ whip: WHIPSession) async throws(WHIPError) {
        try await delete(resourceURL: whip.resourceURL)
    }

    /// DELETEs a session URL.
    public func delete(resourceURL: URL) async throws(WHIPError) {
        let response = try await send(.DELETE, resourceURL, body: nil, headers: [])
        try Self.check(response, method: "DELETE")
    }

    // MARK: - HTTP

    /// A received response: status, headers (names as the server sent them, one entry per field line), body.
    private struct Response: Sendable {
        var status: Int
        var fields: [(String, String)]
        var body: [UInt8]

        func headers(_ name: String) -> [String] {
            fields.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1)
        }

        func header(_ name: String) -> String? { headers(name).first }

        /// The body's first line, trimmed, at most 200 characters.
        var firstLine: String {
            let text = String(decoding: body.prefix(4096), as: UTF8.self)
            let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).first ?? ""
            return String(line.trimmingCharacters(in: .whitespaces).prefix(200))
        }
    }

    private static func check(_ response: Response, method: String) throws(WHIPError) {
        switch response.status {
        case 200...299: return
        case 400...599: throw .httpStatus(method: method, status: response.status, firstLine: response.firstLine)
        default: throw .unexpectedStatus(method: method, status: response.status)
        }
    }

    /// Sends one request and reads its whole response within ``timeout``.
    ///
    /// AHC's deadline covers the request until the response's head; the body is read after that, so the whole
    /// exchange races a timer in a task group: whichever ends first cancels the other (AHC ends a cancelled request
    /// and its body stream at once, closing the connection).
    private func send(
        _ method: HTTPMethod, _ url: URL, body: [UInt8]?, headers: [(String, String)]
    ) async throws(WHIPError) -> Response {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw .invalidURL(url.absoluteString)
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        request.headers.add(contentsOf: headers)
        if let bearerToken { request.headers.add(name: "Authorization", value: "Bearer \(bearerToken)") }
        if let body { request.body = .bytes(body) }
        let exchanged = request
        let http = http
        let timeout = timeout
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let seconds = timeout.inSeconds
        do {
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask { try await Self.exchange(exchanged, on: http, deadline: deadline) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw WHIPError.timedOut(method: method.rawValue, url: url.absoluteString, seconds: seconds)
                }
                return response
            }
        } catch let error as WHIPError {
            throw error
        } catch let error as HTTPClientError
            where error == .deadlineExceeded || error == .connectTimeout || error == .readTimeout
            || error == .tlsHandshakeTimeout
        {
            throw .timedOut(method: method.rawValue, url: url.absoluteString, seconds: seconds)
        } catch {
            throw .transport(method: method.rawValue, url: url.absoluteString, reason: "\(error)")
        }
    }

    /// Executes `request` and collects its response, the body up to ``maximumResponseBytes``.
    private static func exchange(
        _ request: HTTPClientRequest, on http: HTTPClient, deadline: NIODeadline
    ) async throws -> Response {
        let response = try await http.execute(request, deadline: deadline)
        let status = Int(response.status.code)
        let fields = response.headers.map { ($0.name, $0.value) }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= maximumResponseBytes else {
                // An error's first line is all that is read from its body; anything else this long is refused.
                guard (400...599).contains(status) else {
                    throw WHIPError.responseTooLarge(method: request.method.rawValue, limit: maximumResponseBytes)
                }
                body += chunk.readableBytesView.prefix(maximumResponseBytes - body.count)
                break
            }
            body += chunk.readableBytesView
        }
        return Response(status: status, fields: fields, body: body)
    }

    /// `location` resolved against `base`, when the result is an HTTP(S) URL.
    private static func resolve(_ location: String, against base: URL) -> URL? {
        guard let url = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return url
    }
}
