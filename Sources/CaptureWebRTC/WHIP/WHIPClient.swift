import Foundation

#if canImport(FoundationNetworking)
    // URLSession on Linux lives in swift-corelibs-foundation's FoundationNetworking (libcurl underneath): part of
    // the toolchain, so HTTP costs no package dependency and no build time.
    import FoundationNetworking
#endif

/// A WHIP client (RFC 9725): publishes an SDP offer to an endpoint, trickles candidates to the session and deletes it.
///
/// - `publish(offer:)` POSTs the offer as `application/sdp`, follows 307/308 redirects by re-POSTing (up to
///   ``maximumRedirects``), requires `201 Created` with a `Location` and an answer, and returns the session. A 201 whose
///   answer is unusable is deleted before the error is thrown, so no half-open session is left behind.
/// - `trickle(_:session:)` PATCHes an `application/trickle-ice-sdpfrag` with `If-Match` when the 201 had an ETag.
/// - `delete(_:)` DELETEs the session URL.
///
/// Every request carries `Authorization: Bearer <token>` when a token is set and times out after ``timeout``.
public final class WHIPClient: Sendable {
    /// The WHIP endpoint URL the offer is POSTed to.
    public let endpoint: URL
    /// The bearer token sent on every request, or `nil`.
    public let bearerToken: String?
    /// How long a request may wait for its response.
    public let timeout: Duration
    /// How many 307/308 redirects a POST follows before failing.
    public let maximumRedirects: Int

    private let session: URLSession

    /// Creates a client for `endpoint`.
    public init(endpoint: URL, bearerToken: String? = nil, timeout: Duration = .seconds(10), maximumRedirects: Int = 10)
    {
        self.endpoint = endpoint
        self.bearerToken = bearerToken
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(timeout)
        configuration.timeoutIntervalForResource = Self.seconds(timeout)
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// POSTs `offer` and returns the session the endpoint created.
    public func publish(offer: String) async throws(WHIPError) -> WHIPSession {
        var url = endpoint
        var redirects = 0
        var response: Response
        while true {
            response = try await send(
                "POST", url, body: Data(offer.utf8),
                headers: ["Content-Type": "application/sdp", "Accept": "application/sdp"])
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
        var headers = ["Content-Type": TrickleFragment.contentType]
        if let etag = whip.etag { headers["If-Match"] = etag }
        let response = try await send("PATCH", whip.resourceURL, body: Data(fragment.render().utf8), headers: headers)
        try Self.check(response, method: "PATCH")
    }

    /// DELETEs the session; 200 and 204 (any 2xx) are success.
    public func delete(_ whip: WHIPSession) async throws(WHIPError) {
        try await delete(resourceURL: whip.resourceURL)
    }

    /// DELETEs a session URL.
    public func delete(resourceURL: URL) async throws(WHIPError) {
        let response = try await send("DELETE", resourceURL, body: nil, headers: [:])
        try Self.check(response, method: "DELETE")
    }

    // MARK: - HTTP

    /// A received response: status, headers (names as the stack gives them), body.
    private struct Response {
        var status: Int
        var fields: [(String, String)]
        var body: Data

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

    private func send(
        _ method: String, _ url: URL, body: Data?, headers: [String: String]
    ) async throws(WHIPError) -> Response {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw .invalidURL(url.absoluteString)
        }
        let seconds = Self.seconds(timeout)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let bearerToken { request.setValue("Bearer \(bearerToken)", forHTTPHeaderField: "Authorization") }
        let data: Data
        let urlResponse: URLResponse
        do {
            (data, urlResponse) = try await session.data(for: request)
        } catch let error as URLError where error.code == .timedOut {
            throw .timedOut(method: method, url: url.absoluteString, seconds: seconds)
        } catch {
            throw .transport(method: method, url: url.absoluteString, reason: "\(error)")
        }
        guard let http = urlResponse as? HTTPURLResponse else {
            throw .transport(method: method, url: url.absoluteString, reason: "not an HTTP response")
        }
        let fields = http.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String, let value = value as? String else { return nil }
            return (name, value)
        }
        return Response(status: http.statusCode, fields: fields, body: data)
    }

    /// `location` resolved against `base`, when the result is an HTTP(S) URL.
    private static func resolve(_ location: String, against base: URL) -> URL? {
        guard let url = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return url
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Stops URLSession from following redirects itself: WHIP re-POSTs the offer to a 307/308's target, which the
/// client does, and must not follow 301/302 at all.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
