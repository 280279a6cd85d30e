/// Why a WHIP request failed. Each case names the request (`POST`, `PATCH`, `DELETE`) where it matters.
public enum WHIPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL cannot be used for HTTP (not `http:`/`https:`, or no host); the text is quoted.
    case invalidURL(String)
    /// No response within the timeout (seconds).
    case timedOut(method: String, url: String, seconds: Double)
    /// The request failed below HTTP (connection refused, DNS, TLS…); the system's description.
    case transport(method: String, url: String, reason: String)
    /// A 2xx or 3xx response's body was longer than the limit (``WHIPClient/maximumResponseBytes``, in bytes) and
    /// was not read further. (A 4xx/5xx keeps its body's start and is ``httpStatus(method:status:firstLine:)``.)
    case responseTooLarge(method: String, limit: Int)
    /// The server answered 4xx/5xx; the status and the first line of the body.
    case httpStatus(method: String, status: Int, firstLine: String)
    /// The server answered with a status WHIP does not allow here (e.g. 200 or 302 to the POST).
    case unexpectedStatus(method: String, status: Int)
    /// A 307/308 without a usable `Location`.
    case redirectWithoutLocation(status: Int)
    /// More than the allowed number of redirects (the limit).
    case tooManyRedirects(Int)
    /// The 201 has no `Location` header (or one that does not resolve to a URL).
    case missingLocation
    /// The 201 carried no usable answer; the resource was deleted (`resourceDeleted` says whether that worked).
    case invalidAnswer(PublishAnswerError, resourceDeleted: Bool)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidURL(let url): "WHIP: not an HTTP URL: \(url)"
        case .timedOut(let method, let url, let seconds): "WHIP \(method) \(url): no response within \(seconds) s"
        case .transport(let method, let url, let reason): "WHIP \(method) \(url): \(reason)"
        case .responseTooLarge(let method, let limit): "WHIP \(method): response body over \(limit) bytes"
        case .httpStatus(let method, let status, let firstLine): "WHIP \(method): HTTP \(status): \(firstLine)"
        case .unexpectedStatus(let method, let status): "WHIP \(method): unexpected HTTP \(status)"
        case .redirectWithoutLocation(let status): "WHIP POST: HTTP \(status) without a Location"
        case .tooManyRedirects(let limit): "WHIP POST: more than \(limit) redirects"
        case .missingLocation: "WHIP POST: 201 without a Location header"
        case .invalidAnswer(let error, let deleted):
            "WHIP POST: \(error) (resource \(deleted ? "deleted" : "could not be deleted"))"
        }
    }
}
