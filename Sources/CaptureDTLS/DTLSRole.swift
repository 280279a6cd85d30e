/// Which side of the DTLS handshake an endpoint plays (RFC 5763 §5: decided by SDP `a=setup`).
public enum DTLSRole: String, Sendable, Hashable, Codable {
    /// Sends the ClientHello (`a=setup:active`).
    case client
    /// Waits for the ClientHello (`a=setup:passive`).
    case server

    /// The `a=setup` value our offers carry: either role (RFC 5763 §5 requires an offerer to say `actpass`).
    public static let offerSetup = "actpass"

    /// Our role once the answer's `a=setup` value is known: the answerer `active` makes us the server, `passive`
    /// the client. `nil` for anything else (`actpass` and `holdconn` are not valid in an answer). Case-insensitive.
    public init?(answerSetup value: String) {
        switch value.lowercased() {
        case "active": self = .server
        case "passive": self = .client
        default: return nil
        }
    }

    /// The `a=setup` value that announces this role in an answer: `active` for a client, `passive` for a server.
    public var setupValue: String {
        switch self {
        case .client: "active"
        case .server: "passive"
        }
    }
}
