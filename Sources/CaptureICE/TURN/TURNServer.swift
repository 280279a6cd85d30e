public import CaptureNet

/// A TURN server to allocate a relayed address on, resolved: its UDP address and long-term credentials
/// (RFC 8656 over UDP; `turns:` and TCP are not supported).
public struct TURNServer: Sendable, Hashable {
    /// The server's address.
    public var address: SocketAddress
    /// The long-term credentials' username.
    public var username: String
    /// The long-term credentials' password.
    public var password: String
    /// The server's name for logs and errors (the `turn:` URL as given).
    public var name: String

    /// Creates a server.
    public init(address: SocketAddress, username: String, password: String, name: String? = nil) {
        self.address = address
        self.username = username
        self.password = password
        self.name = name ?? "turn:\(address)"
    }
}
