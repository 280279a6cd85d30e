/// Why a ``VideoSender`` or ``VideoReceiver`` could not start, with what failed.
public struct VideoSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure.
    public enum Code: String, Sendable, Hashable, Codable {
        /// The address is malformed, or no route leads to it.
        case badAddress
        /// The local port is taken by another socket.
        case portInUse
        /// Another socket failure (the message names the call and the errno).
        case socket
        /// SRTP could not be set up (a malformed key).
        case srtp
        /// The VP8 decoder could not be created.
        case decoder
        /// The IVF output could not be written.
        case output
    }

    /// The class of failure.
    public var code: Code
    /// What failed, in one line.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
