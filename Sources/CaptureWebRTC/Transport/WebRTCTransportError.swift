/// Why a WebRTC transport failed.
public struct WebRTCTransportError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable, Codable {
        /// No local address to gather a host candidate from, or no socket could be opened.
        case noLocalAddress
        /// A socket could not be opened.
        case socket
        /// ICE found no working candidate pair in time, or lost consent afterwards.
        case iceFailed
        /// DTLS failed: handshake error, the peer's certificate did not match its fingerprint, no SRTP profile.
        case dtlsFailed
        /// The transport did not connect within the time allowed.
        case timeout
        /// The transport was closed.
        case closed
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and message.
    public var description: String { "\(code.rawValue): \(message)" }
}
