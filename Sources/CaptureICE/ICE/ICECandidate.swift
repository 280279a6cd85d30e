public import CaptureNet

/// An ICE candidate (RFC 8445 §5.1), read from and written as an SDP `candidate` attribute (RFC 8839 §5.1).
///
/// Only UDP candidates take part in checks; TCP ones (RFC 6544) are parsed so a peer's SDP does not fail, and are
/// marked unusable (``isUsable``). The `generation`, `ufrag`, `network-id` and other extensions are ignored.
public struct ICECandidate: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A candidate type, with its RFC 8445 §5.1.2.2 recommended type preference.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// An address of a local interface.
        case host
        /// Our address as a STUN server saw it.
        case srflx
        /// An address learned from a connectivity check.
        case prflx
        /// An address on a TURN relay.
        case relay

        /// The type preference: host 126, prflx 110, srflx 100, relay 0.
        public var typePreference: UInt32 {
            switch self {
            case .host: 126
            case .prflx: 110
            case .srflx: 100
            case .relay: 0
            }
        }
    }

    /// A candidate's transport.
    public enum Transport: String, Sendable, Hashable, Codable {
        /// UDP: usable.
        case udp
        /// TCP (RFC 6544): parsed, not usable by this agent.
        case tcp
    }

    /// The foundation: candidates of the same type, base and server share it.
    public var foundation: String
    /// The component ID (1 for RTP; rtcp-mux means there is no other).
    public var component: Int
    /// The transport.
    public var transport: Transport
    /// The priority (RFC 8445 §5.1.2).
    public var priority: UInt32
    /// The transport address.
    public var address: SocketAddress
    /// The type.
    public var kind: Kind
    /// The related address (`raddr`/`rport`): a reflexive candidate's base.
    public var relatedAddress: SocketAddress?

    /// A candidate from its parts.
    public init(
        foundation: String, component: Int = 1, transport: Transport = .udp, priority: UInt32,
        address: SocketAddress, kind: Kind, relatedAddress: SocketAddress? = nil
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.kind = kind
        self.relatedAddress = relatedAddress
    }

    /// Whether this agent can check this candidate: UDP only.
    public var isUsable: Bool { transport == .udp }

    /// RFC 8445 §5.1.2.1: (2²⁴)·type preference + (2⁸)·local preference + (256 − component ID).
    public static func priority(kind: Kind, localPreference: UInt16, component: Int = 1) -> UInt32 {
        let componentTerm = UInt32(max(0, min(255, 256 - component)))
        return kind.typePreference << 24 | UInt32(localPreference) << 8 | componentTerm
    }

    /// A foundation for a candidate of `kind` on `base` (learned from `server`, if any): a short stable hash of them,
    /// so equal inputs give equal foundations (RFC 8445 §5.1.1.3).
    public static func foundation(kind: Kind, base: SocketAddress, server: SocketAddress? = nil) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in "\(kind.rawValue)|\(base.host)|\(server?.description ?? "")".utf8 {
            hash = (hash ^ UInt32(byte)) &* 16_777_619
        }
        return String(hash)
    }

    /// Parses an SDP candidate attribute value: `candidate:1 1 udp 2130706431 192.0.2.1 5000 typ host`, with or
    /// without the `a=` and `candidate:` prefixes.
    public init(parsing text: String) throws(ICECandidateParseError) {
        var body = Substring(text.trimmingWhitespace())
        if body.hasPrefix("a=") { body = body.dropFirst(2) }
        if body.lowercased().hasPrefix("candidate:") { body = body.dropFirst("candidate:".count) }
        let fields = body.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard fields.count >= 8, fields[6].lowercased() == "typ" else { throw .missingFields(text) }
        guard let component = Int(fields[1]), (1...256).contains(component) else {
            throw .invalidComponent(fields[1])
        }
        guard let transport = Transport(rawValue: fields[2].lowercased()) else {
            throw .unsupportedTransport(fields[2])
        }
        guard let priority = UInt32(fields[3]), priority >= 1, priority < 1 << 31 else {
            throw .invalidPriority(fields[3])
        }
        guard let port = UInt16(fields[5]) else { throw .invalidPort(fields[5]) }
        let address: SocketAddress
        do { address = try SocketAddress(host: fields[4], port: port) } catch { throw .invalidAddress(fields[4]) }
        guard let kind = Kind(rawValue: fields[7].lowercased()) else { throw .invalidType(fields[7]) }
        var relatedHost: String?
        var relatedPort: UInt16?
        var index = 8
        while index + 1 < fields.count {
            switch fields[index].lowercased() {
            case "raddr": relatedHost = fields[index + 1]
            case "rport":
                guard let value = UInt16(fields[index + 1]) else { throw .invalidPort(fields[index + 1]) }
                relatedPort = value
            default: break
            }
            index += 2
        }
        var relatedAddress: SocketAddress?
        if let relatedHost, let relatedPort {
            // A browser hiding its addresses sends raddr 0.0.0.0 or an mDNS name: informational only, so ignored.
            relatedAddress = try? SocketAddress(host: relatedHost, port: relatedPort)
        }
        self.init(
            foundation: fields[0], component: component, transport: transport, priority: priority, address: address,
            kind: kind, relatedAddress: relatedAddress)
    }

    /// The SDP attribute value: `candidate:<foundation> <component> udp <priority> <address> <port> typ <type>
    /// [raddr <address> rport <port>]` (without `a=`).
    public var sdpAttributeValue: String {
        var text =
            "candidate:\(foundation) \(component) \(transport.rawValue) \(priority) \(address.host) \(address.port)"
            + " typ \(kind.rawValue)"
        if let relatedAddress {
            text += " raddr \(relatedAddress.host) rport \(relatedAddress.port)"
        }
        return text
    }

    /// ``sdpAttributeValue``.
    public var description: String { sdpAttributeValue }
}

extension String {
    /// The string without leading and trailing whitespace (spaces, tabs, CR LF).
    func trimmingWhitespace() -> Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else {
            return ""
        }
        return self[first...last]
    }
}
