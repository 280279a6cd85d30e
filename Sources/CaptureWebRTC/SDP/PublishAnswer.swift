public import CaptureRTP

/// What a WHIP endpoint's SDP answer says about the video a publisher sends: the remote ICE credentials and
/// candidates, the DTLS fingerprint and role, and what it accepted (payload types, RTCP feedback, header extensions).
///
/// Session-level values apply when the video section does not repeat them (Janus puts its fingerprint at session
/// level). Candidates and fingerprints stay plain strings in their SDP form.
public struct PublishAnswer: Sendable, Hashable, Codable {
    /// The answerer's DTLS role (`a=setup`, RFC 4145/8842).
    public enum SetupRole: String, Sendable, Hashable, Codable {
        /// The answerer is the DTLS client: the publisher is the server.
        case active
        /// The answerer is the DTLS server: the publisher is the client.
        case passive
        /// Either (valid in offers only; never the value of a parsed answer).
        case actpass
    }

    /// The media direction as the answerer sees it.
    public enum Direction: String, Sendable, Hashable, Codable {
        /// The answerer receives our video: what a WHIP answer should say.
        case recvonly
        /// The answerer accepted the section but receives nothing.
        case inactive
    }

    /// A certificate fingerprint (`a=fingerprint:<algorithm> <value>`).
    public struct Fingerprint: Sendable, Hashable, Codable {
        /// The hash function name, lower-cased (`sha-256`).
        public var algorithm: String
        /// The colon-separated hex digest as written (`AB:CD:…`).
        public var value: String

        /// Creates a fingerprint.
        public init(algorithm: String, value: String) {
            self.algorithm = algorithm
            self.value = value
        }

        /// The attribute value, `"<algorithm> <value>"`.
        public var attributeValue: String { "\(algorithm) \(value)" }
    }

    /// The answerer's ICE username fragment.
    public var iceUfrag: String
    /// The answerer's ICE password.
    public var icePassword: String
    /// Whether the answerer is an ICE-lite agent (`a=ice-lite`).
    public var iceLite: Bool
    /// The answerer's candidate attribute values, in order (`"1 1 udp 2015363327 127.0.0.1 40000 typ host"`).
    public var candidates: [String]
    /// Whether the answer says `a=end-of-candidates`.
    public var endOfCandidates: Bool
    /// The answerer's certificate fingerprint.
    public var fingerprint: Fingerprint
    /// The answerer's DTLS role (`active` or `passive`).
    public var setup: SetupRole
    /// The accepted VP8 payload type.
    public var payloadType: UInt8
    /// The accepted RTX payload type associated with ``payloadType`` (`a=fmtp:<rtx> apt=<vp8>`), or `nil`.
    public var rtxPayloadType: UInt8?
    /// The accepted RTCP feedback for VP8 (`nack`, `nack pli`, `ccm fir`, `goog-remb`, `transport-cc`, …).
    public var rtcpFeedback: Set<String>
    /// The accepted RTP header extension ids, by URI.
    public var extensionIDs: [String: UInt8]
    /// The answerer's direction.
    public var direction: Direction
    /// The video section's `a=mid`, or `nil`.
    public var mid: String?
    /// Whether the video section has `a=rtcp-mux`.
    public var rtcpMux: Bool
    /// The simulcast streams the answer accepts (`a=simulcast:recv`, `a=rid:<rid> recv`; see ``AnsweredSimulcast``),
    /// or `nil` when it has none of these lines: the answerer takes one stream, sent without rids (RFC 8853:
    /// an answer without `a=simulcast` declines simulcast).
    public var simulcast: AnsweredSimulcast?

    /// The id of the transport-wide sequence number extension when transport-wide congestion control is on: the
    /// answer accepted both the extension (`a=extmap` of
    /// `http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`, an id in 1...14 for the one-byte
    /// form) and `transport-cc` in the VP8 `a=rtcp-fb`; otherwise `nil` (neither alone turns it on).
    public var transportWideCCExtensionID: UInt8? {
        guard rtcpFeedback.contains("transport-cc"),
            let id = extensionIDs[TransportSequenceNumberExtension.uri], (1...14).contains(id)
        else { return nil }
        return id
    }

    /// The id of the RTP stream id extension (`a=extmap` of ``RTPStreamIDExtension/uri``, RFC 8852), when the
    /// answer accepted it with an id in 1...14 (the one-byte form); otherwise `nil`.
    public var ridExtensionID: UInt8? { Self.oneByteID(extensionIDs[RTPStreamIDExtension.uri]) }

    /// The id of the repaired RTP stream id extension (`a=extmap` of ``RTPStreamIDExtension/repairedURI``,
    /// RFC 8852), when the answer accepted it with an id in 1...14 (the one-byte form); otherwise `nil`.
    public var repairedRidExtensionID: UInt8? { Self.oneByteID(extensionIDs[RTPStreamIDExtension.repairedURI]) }

    /// Creates an answer from its parts.
    public init(
        iceUfrag: String, icePassword: String, iceLite: Bool = false, candidates: [String] = [],
        endOfCandidates: Bool = false, fingerprint: Fingerprint, setup: SetupRole, payloadType: UInt8,
        rtxPayloadType: UInt8? = nil, rtcpFeedback: Set<String> = [], extensionIDs: [String: UInt8] = [:],
        direction: Direction = .recvonly, mid: String? = nil, rtcpMux: Bool = true,
        simulcast: AnsweredSimulcast? = nil
    ) {
        self.simulcast = simulcast
        self.iceUfrag = iceUfrag
        self.icePassword = icePassword
        self.iceLite = iceLite
        self.candidates = candidates
        self.endOfCandidates = endOfCandidates
        self.fingerprint = fingerprint
        self.setup = setup
        self.payloadType = payloadType
        self.rtxPayloadType = rtxPayloadType
        self.rtcpFeedback = rtcpFeedback
        self.extensionIDs = extensionIDs
        self.direction = direction
        self.mid = mid
        self.rtcpMux = rtcpMux
    }

    /// Parses answer text (CRLF or LF line ends) with CaptureRTP's SDP parser.
    public init(parsing text: String) throws(PublishAnswerError) {
        let description: SessionDescription
        do {
            description = try SessionDescription(parsing: text)
        } catch {
            throw .malformedSDP(error)
        }
        try self.init(description: description)
    }

    /// Reads the first `m=video` section of `description`, with session-level fallbacks.
    public init(description: SessionDescription) throws(PublishAnswerError) {
        guard let media = description.media.first(where: { $0.media == "video" }) else { throw .noVideoMedia }
        guard media.port != 0 else { throw .videoRejected }
        func value(_ name: String) -> String? { description.attributeValue(name, in: media) }

        let (payloadType, rtxPayloadType) = try Self.payloadTypes(media)
        guard let ufrag = value("ice-ufrag"), !ufrag.isEmpty else { throw .missingICEUfrag }
        guard let password = value("ice-pwd"), !password.isEmpty else { throw .missingICEPassword }
        guard let fingerprintValue = value("fingerprint") else { throw .missingFingerprint }
        let fingerprintParts = fingerprintValue.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard fingerprintParts.count == 2,
            fingerprintParts[1].allSatisfy({ $0 == ":" || $0.isHexDigit }),
            fingerprintParts[1].contains(where: \.isHexDigit)
        else { throw .malformedFingerprint(fingerprintValue) }
        guard let setupValue = value("setup") else { throw .missingSetupRole }
        guard let setup = SetupRole(rawValue: setupValue), setup != .actpass else {
            throw .invalidSetupRole(setupValue)
        }
        let directions = ["sendrecv", "sendonly", "recvonly", "inactive"]
        let written =
            media.attributes.last { directions.contains($0.name) }?.name
            ?? description.attributes.last { directions.contains($0.name) }?.name ?? "sendrecv"
        guard let direction = Direction(rawValue: written) else { throw .unexpectedDirection(written) }

        let pt = String(payloadType)
        var feedback = Set<String>()
        for value in media.attributeValues("rtcp-fb") {
            let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2, parts[0] == pt || parts[0] == "*" { feedback.insert(parts[1]) }
        }
        let (extensions, malformedExtensions) = media.extensionMap()
        if let malformed = malformedExtensions.first { throw .malformedAttribute("extmap:\(malformed)") }
        let simulcast = try AnsweredSimulcast.parse(media)
        let sessionLite = description.attributes.contains { $0.name == "ice-lite" }
        self.init(
            iceUfrag: ufrag, icePassword: password, iceLite: sessionLite || media.hasAttribute("ice-lite"),
            candidates: media.attributeValues("candidate"), endOfCandidates: media.hasAttribute("end-of-candidates"),
            fingerprint: Fingerprint(algorithm: fingerprintParts[0].lowercased(), value: fingerprintParts[1]),
            setup: setup, payloadType: payloadType, rtxPayloadType: rtxPayloadType, rtcpFeedback: feedback,
            extensionIDs: extensions, direction: direction, mid: media.attributeValues("mid").first,
            rtcpMux: media.hasAttribute("rtcp-mux"), simulcast: simulcast)
    }

    /// `id` when it is a valid RFC 8285 one-byte id.
    private static func oneByteID(_ id: UInt8?) -> UInt8? {
        guard let id, (1...14).contains(id) else { return nil }
        return id
    }

    /// The VP8 payload type the section accepts, and the RTX payload type whose `apt` names it.
    private static func payloadTypes(
        _ media: SessionDescription.Media
    ) throws(PublishAnswerError) -> (UInt8, UInt8?) {
        let (maps, malformed) = media.rtpMaps()
        if let malformed = malformed.first { throw .malformedAttribute("rtpmap:\(malformed)") }
        guard let vp8 = maps.first(where: { $0.name == "VP8" })?.payloadType else { throw .noVP8PayloadType }
        return (vp8, media.rtxPayloadType(for: vp8, among: maps))
    }
}
