/// A session description (RFC 8866): the session-level fields and the media sections, each with its attributes.
///
/// `render()` writes the RFC's line order with CRLF line ends; `init(parsing:)` accepts CRLF or LF-only text, keeps
/// lines it does not model (`i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=`) verbatim, and rejects malformed lines naming the
/// line.
public struct SessionDescription: Sendable, Hashable, Codable {
    /// The `o=` line.
    public struct Origin: Sendable, Hashable, Codable {
        /// The user name (`-` when none).
        public var username: String
        /// The numeric session id.
        public var sessionID: UInt64
        /// The numeric session version.
        public var sessionVersion: UInt64
        /// The network type (`IN`).
        public var networkType: String
        /// The address type (`IP4` or `IP6`).
        public var addressType: String
        /// The originating host's address.
        public var address: String

        /// Creates an origin.
        public init(
            username: String = "-", sessionID: UInt64, sessionVersion: UInt64 = 0, networkType: String = "IN",
            addressType: String, address: String
        ) {
            self.username = username
            self.sessionID = sessionID
            self.sessionVersion = sessionVersion
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }
    }

    /// A `c=` line.
    public struct Connection: Sendable, Hashable, Codable {
        /// The network type (`IN`).
        public var networkType: String
        /// The address type (`IP4` or `IP6`).
        public var addressType: String
        /// The address (with `/ttl` or `/count` suffixes as written).
        public var address: String

        /// Creates a connection line.
        public init(networkType: String = "IN", addressType: String, address: String) {
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        /// An `IN IP4`/`IN IP6` connection, the type chosen from the address's form.
        public init(address: String) {
            self.init(addressType: address.contains(":") ? "IP6" : "IP4", address: address)
        }
    }

    /// A `b=<type>:<kbps>` line.
    public struct Bandwidth: Sendable, Hashable, Codable {
        /// The modifier (`AS`, `CT`, `TIAS`, ...).
        public var type: String
        /// The value (kbit/s for AS and CT, bit/s for TIAS).
        public var value: UInt64

        /// Creates a bandwidth line.
        public init(type: String, value: UInt64) {
            self.type = type
            self.value = value
        }
    }

    /// A `t=<start> <stop>` line.
    public struct Timing: Sendable, Hashable, Codable {
        /// Start time (NTP seconds; 0 = unbounded).
        public var start: UInt64
        /// Stop time (NTP seconds; 0 = unbounded).
        public var stop: UInt64

        /// Creates a timing line (`t=0 0` by default: a permanent session).
        public init(start: UInt64 = 0, stop: UInt64 = 0) {
            self.start = start
            self.stop = stop
        }
    }

    /// An `a=<name>[:<value>]` line.
    public struct Attribute: Sendable, Hashable, Codable {
        /// The attribute name.
        public var name: String
        /// The value after the first colon, or `nil` for a property attribute like `a=rtcp-mux`.
        public var value: String?

        /// Creates an attribute.
        public init(_ name: String, _ value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// A line this type does not model, kept verbatim (type letter and value).
    public struct OtherLine: Sendable, Hashable, Codable {
        /// The type letter.
        public var type: String
        /// Everything after `=`.
        public var value: String

        /// Creates a line.
        public init(type: String, value: String) {
            self.type = type
            self.value = value
        }
    }

    /// An `m=` section.
    public struct Media: Sendable, Hashable, Codable {
        /// The media type (`video`, `audio`, ...).
        public var media: String
        /// The transport port.
        public var port: UInt16
        /// The number of ports (`m=video 5004/2 ...`), or `nil`.
        public var portCount: UInt16?
        /// The transport protocol (`RTP/AVP`, `RTP/SAVP`, `RTP/AVPF`, ...).
        public var proto: String
        /// The formats (RTP payload type numbers for RTP protocols).
        public var formats: [String]
        /// The section's `i=` title.
        public var information: String?
        /// The section's `c=` line, overriding the session's.
        public var connection: Connection?
        /// The section's `b=` lines.
        public var bandwidths: [Bandwidth]
        /// Other section lines kept verbatim (`k=`).
        public var otherLines: [OtherLine]
        /// The section's attributes, in order.
        public var attributes: [Attribute]

        /// Creates a media section.
        public init(
            media: String, port: UInt16, portCount: UInt16? = nil, proto: String, formats: [String],
            information: String? = nil, connection: Connection? = nil, bandwidths: [Bandwidth] = [],
            otherLines: [OtherLine] = [], attributes: [Attribute] = []
        ) {
            self.media = media
            self.port = port
            self.portCount = portCount
            self.proto = proto
            self.formats = formats
            self.information = information
            self.connection = connection
            self.bandwidths = bandwidths
            self.otherLines = otherLines
            self.attributes = attributes
        }

        /// The values of every attribute called `name`.
        public func attributeValues(_ name: String) -> [String] {
            attributes.filter { $0.name == name }.map { $0.value ?? "" }
        }

        /// Whether a property attribute (or any attribute) called `name` is present.
        public func hasAttribute(_ name: String) -> Bool { attributes.contains { $0.name == name } }
    }

    /// The protocol version (always 0).
    public var version: Int
    /// The `o=` line.
    public var origin: Origin
    /// The `s=` line (a single space when there is no name, as RFC 8866 recommends).
    public var sessionName: String
    /// The session's `i=` line.
    public var information: String?
    /// Session-level lines kept verbatim (`u=`, `e=`, `p=`, `r=`, `z=`, `k=`), rendered in RFC order.
    public var otherLines: [OtherLine]
    /// The session-level `c=` line.
    public var connection: Connection?
    /// The session-level `b=` lines.
    public var bandwidths: [Bandwidth]
    /// The `t=` lines (one `t=0 0` is rendered when empty).
    public var timing: [Timing]
    /// Session-level attributes.
    public var attributes: [Attribute]
    /// The media sections.
    public var media: [Media]

    /// Creates a description.
    public init(
        version: Int = 0, origin: Origin, sessionName: String, information: String? = nil,
        otherLines: [OtherLine] = [], connection: Connection? = nil, bandwidths: [Bandwidth] = [],
        timing: [Timing] = [Timing()], attributes: [Attribute] = [], media: [Media] = []
    ) {
        self.version = version
        self.origin = origin
        self.sessionName = sessionName
        self.information = information
        self.otherLines = otherLines
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.attributes = attributes
        self.media = media
    }

    /// The session-level order of the types kept in ``otherLines``.
    private static let lineOrder = ["u", "e", "p", "r", "z", "k"]

    /// The description as SDP text with CRLF line ends.
    public func render() -> String {
        var lines: [String] = ["v=\(version)"]
        let o = origin
        lines.append(
            "o=\(o.username) \(o.sessionID) \(o.sessionVersion) \(o.networkType) \(o.addressType) \(o.address)")
        lines.append("s=\(sessionName.isEmpty ? " " : sessionName)")
        if let information { lines.append("i=\(information)") }
        let other = { (types: ArraySlice<String>) in
            otherLines.filter { types.contains($0.type) }.map { "\($0.type)=\($0.value)" }
        }
        lines += other(Self.lineOrder[0..<3])
        if let connection { lines.append(Self.render(connection)) }
        lines += bandwidths.map { "b=\($0.type):\($0.value)" }
        lines += (timing.isEmpty ? [Timing()] : timing).map { "t=\($0.start) \($0.stop)" }
        lines += other(Self.lineOrder[3...])
        lines += attributes.map(Self.render)
        for section in media {
            let port = section.portCount.map { "\(section.port)/\($0)" } ?? "\(section.port)"
            lines.append("m=\(section.media) \(port) \(section.proto) \(section.formats.joined(separator: " "))")
            if let information = section.information { lines.append("i=\(information)") }
            if let connection = section.connection { lines.append(Self.render(connection)) }
            lines += section.bandwidths.map { "b=\($0.type):\($0.value)" }
            lines += section.otherLines.map { "\($0.type)=\($0.value)" }
            lines += section.attributes.map(Self.render)
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    private static func render(_ connection: Connection) -> String {
        "c=\(connection.networkType) \(connection.addressType) \(connection.address)"
    }

    private static func render(_ attribute: Attribute) -> String {
        attribute.value.map { "a=\(attribute.name):\($0)" } ?? "a=\(attribute.name)"
    }
}
