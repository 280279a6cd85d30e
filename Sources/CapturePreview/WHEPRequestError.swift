/// Why a WHEP request was refused: the HTTP status the preview server answers with and a one-line reason for the body.
///
/// A ``WHEPSessionHandler`` throws it from ``WHEPSessionHandler/answer(offer:remote:)`` (an offer it cannot answer is
/// `badRequest`, a viewer limit is `serviceUnavailable`); the router throws it for malformed requests.
public struct WHEPRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code (400…599).
    public var status: Int
    /// A short human-readable reason, sent as the `text/plain` body.
    public var message: String

    /// A refusal with `status` and `message`.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// 400: the request or the offer is malformed (empty body, not SDP, no video m-line).
    public static func badRequest(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 400, message: message)
    }

    /// 404: no such resource (an unknown or already ended viewer).
    public static func notFound(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 404, message: message)
    }

    /// 413: the body is larger than the server accepts.
    public static func payloadTooLarge(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 413, message: message)
    }

    /// 415: the body is not `application/sdp`.
    public static func unsupportedMediaType(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 415, message: message)
    }

    /// 503: the answerer cannot take another viewer now (a viewer limit, the camera not running).
    public static func serviceUnavailable(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 503, message: message)
    }

    /// 500: the answerer failed.
    public static func internalError(_ message: String) -> WHEPRequestError {
        WHEPRequestError(status: 500, message: message)
    }

    /// `"<status> <message>"`.
    public var description: String { "\(status) \(message)" }
}
