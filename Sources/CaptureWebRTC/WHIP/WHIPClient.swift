internal import CaptureCore
import Foundation
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
/// Every request must be answered, body included, within ``timeout`` (from the connection attempt on); a refused
/// connection fails at once, with no retry; a response body over ``maximumResponseBytes`` is refused rather than
/// buffered. The HTTP is the package's own HTTP/1.1 client on
/// SwiftNIO (NIOHTTP1's codec, a connection per request, closed after its response); `https:` is TLS 1.2 or 1.3 on
/// the system's OpenSSL, the server's certificate verified against ``trustRoots`` and the endpoint's host (a
/// certificate that fails is ``WHIPError/transport(method:url:reason:)`` whose reason contains
/// `CERTIFICATE_VERIFY_FAILED` and OpenSSL's verify error). It runs on NIO's shared event loop threads: no thread of its own, none of NIO's or
/// OpenSSL's types in this API, nothing left open between requests. All methods may be called concurrently from any
/// task; none blocks a thread while it waits.
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

    /// The certificate authorities trusted for an `https:` endpoint (the system's by default).
    public let trustRoots: WHIPTrustRoots

    /// Creates a client for `endpoint`, trusting `trustRoots` for `https:`. Nothing is sent before the first request.
    public init(
        endpoint: URL, bearerToken: String? = nil, timeout: Duration = .seconds(10), maximumRedirects: Int = 10,
        trustRoots: WHIPTrustRoots = .system
    ) {
        self.endpoint = endpoint
        self.bearerToken = bearerToken
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        self.trustRoots = trustRoots
    }

    /// POSTs `offer` and returns the session the endpoint created.
    public func publish(offer: String) async throws(WHIPError) -> WHIPSession {
        var url = endpoint
        var redirects = 0
        var response: HTTPExchange.Response
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

    private static func check(_ response: HTTPExchange.Response, method: String) throws(WHIPError) {
        switch response.status {
        case 200...299: return
        case 400...599: throw .httpStatus(method: method, status: response.status, firstLine: response.firstLine)
        default: throw .unexpectedStatus(method: method, status: response.status)
        }
    }

    /// Sends one request (with the bearer token) and reads its whole response within ``timeout``. No redirect is
    /// followed here.
    private func send(
        _ method: HTTPMethod, _ url: URL, body: [UInt8]?, headers: [(String, String)]
    ) async throws(WHIPError) -> HTTPExchange.Response {
        var fields = headers
        if let bearerToken { fields.append(("Authorization", "Bearer \(bearerToken)")) }
        let request = HTTPExchange.Request(method: method, url: url, headers: fields, body: body)
        do {
            return try await HTTPExchange.perform(
                request, trustRoots: trustRoots, timeout: timeout, maximumBodyBytes: Self.maximumResponseBytes)
        } catch {
            switch error {
            case .invalidURL: throw .invalidURL(url.absoluteString)
            case .timedOut:
                throw .timedOut(method: method.rawValue, url: url.absoluteString, seconds: timeout.inSeconds)
            case .responseTooLarge: throw .responseTooLarge(method: method.rawValue, limit: Self.maximumResponseBytes)
            case .transport(let reason):
                throw .transport(method: method.rawValue, url: url.absoluteString, reason: reason)
            }
        }
    }

    /// `location` resolved against `base`, when the result is an HTTP(S) URL.
    private static func resolve(_ location: String, against base: URL) -> URL? {
        guard let url = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return url
    }
}

extension HTTPExchange.Response {
    /// The body's first line, trimmed, at most 200 characters.
    fileprivate var firstLine: String {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).first ?? ""
        return String(line.trimmingCharacters(in: .whitespaces).prefix(200))
    }
}
