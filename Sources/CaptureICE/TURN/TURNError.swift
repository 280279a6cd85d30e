/// Why a TURN allocation failed (or an operation on it did), naming the server.
public struct TURNError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable, Codable {
        /// The server refused our long-term credentials: a 401 to a request that carried them.
        case unauthorized
        /// The server answered with another error (ERROR-CODE in ``TURNError/errorCode``).
        case rejected
        /// The server did not answer any transmission of a request.
        case timeout
        /// The server's success response lacked what it must carry, or failed its MESSAGE-INTEGRITY.
        case malformedResponse
    }

    /// The kind of failure.
    public var code: Code
    /// The server, as the user or the WHIP endpoint wrote it (`turn:turn.example.net:3478`).
    public var server: String
    /// The STUN ERROR-CODE, for ``Code/unauthorized`` and ``Code/rejected``.
    public var errorCode: Int?
    /// What happened, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, server: String, errorCode: Int? = nil, _ message: String) {
        self.code = code
        self.server = server
        self.errorCode = errorCode
        self.message = message
    }

    /// `"unauthorized (401) from turn:…: message"`.
    public var description: String {
        "\(code.rawValue)\(errorCode.map { " (\($0))" } ?? "") from \(server): \(message)"
    }
}
