/// A STUN or TURN server for ICE: a `stun:`, `turn:` or `turns:` URL (RFC 7064/7065) and, for TURN, the long-term
/// credentials. WHIP endpoints announce them as `Link: <turn:host:3478>; rel="ice-server"; username="u";
/// credential="c"; credential-type="password"` (RFC 9725 §4.6).
public struct ICEServer: Sendable, Hashable, Codable {
    /// The URL scheme.
    public enum Scheme: String, Sendable, Hashable, Codable {
        /// A STUN server.
        case stun
        /// A TURN server over UDP or TCP.
        case turn
        /// A TURN server over TLS.
        case turns
    }

    /// The URL as written (`stun:stun.example.net:3478`, `turn:turn.example.net?transport=udp`).
    public var url: String
    /// The scheme of ``url``.
    public var scheme: Scheme
    /// The TURN username, or `nil`.
    public var username: String?
    /// The TURN credential, or `nil`.
    public var credential: String?
    /// The credential type (`password` when absent on the wire), or `nil` when there is no credential.
    public var credentialType: String?

    /// Creates a server; `nil` when `url` is not `stun:`, `turn:` or `turns:` followed by a host.
    public init?(url: String, username: String? = nil, credential: String? = nil, credentialType: String? = nil) {
        let parts = url.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let scheme = Scheme(rawValue: parts[0].lowercased()), !parts[1].isEmpty else {
            return nil
        }
        self.url = url
        self.scheme = scheme
        self.username = username
        self.credential = credential
        self.credentialType = credentialType ?? (credential == nil ? nil : "password")
    }

    /// The ICE server of a link whose relation is `ice-server`, or `nil`.
    public init?(link: WHIPLinkHeader) {
        guard link.relations.contains("ice-server") else { return nil }
        self.init(
            url: link.target, username: link.parameters["username"], credential: link.parameters["credential"],
            credentialType: link.parameters["credential-type"])
    }

    /// The ICE servers announced by `Link` header values (several headers, or several links in one header).
    public static func parse(linkHeaders: [String]) -> [ICEServer] {
        WHIPLinkHeader.parse(linkHeaders).compactMap(ICEServer.init(link:))
    }

    /// The host (and port) part of ``url``: what follows the scheme, without `?` parameters.
    public var hostAndPort: String {
        let rest = url.split(separator: ":", maxSplits: 1).dropFirst().first ?? ""
        return String(rest.split(separator: "?", maxSplits: 1).first ?? "")
    }
}
