public import CaptureRTP

/// Why a WHIP answer cannot be used to publish: each case names what is missing or wrong.
public enum PublishAnswerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not SDP (the parser's error names the line).
    case malformedSDP(SDPParseError)
    /// The answer has no `m=video` section.
    case noVideoMedia
    /// The video section's port is 0: the answerer rejected the video.
    case videoRejected
    /// The video section accepts no VP8 payload type.
    case noVP8PayloadType
    /// `a=ice-ufrag` is absent at both media and session level.
    case missingICEUfrag
    /// `a=ice-pwd` is absent at both media and session level.
    case missingICEPassword
    /// `a=fingerprint` is absent at both media and session level.
    case missingFingerprint
    /// The `a=fingerprint` value is not `<algorithm> <hex:hex:…>`.
    case malformedFingerprint(String)
    /// `a=setup` is absent.
    case missingSetupRole
    /// `a=setup` is not `active` or `passive` (an answer may not say `actpass`; the value is quoted).
    case invalidSetupRole(String)
    /// The direction is not `recvonly` or `inactive` (the value, `sendrecv` when none is written).
    case unexpectedDirection(String)
    /// An attribute the publisher needs is malformed (name and value).
    case malformedAttribute(String)
    /// The `a=simulcast` value does not follow RFC 8853 §5.1 for an answer to a simulcast sender (the value; see
    /// ``AnsweredSimulcast``), or the section has more than one.
    case malformedSimulcast(String)
    /// An `a=rid` value is not `<rid-id> send|recv[ <restrictions>]` (RFC 8851 §10), or repeats a `recv` rid (the
    /// value).
    case malformedRid(String)
    /// The answer's `a=simulcast` names a rid with no `a=rid:<rid> recv` line, or accepts a rid the offer did not
    /// send (``AnsweredSimulcast/outcome(offered:)``); the rid.
    case unknownRid(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .malformedSDP(let error): "answer is not valid SDP: \(error)"
        case .noVideoMedia: "answer has no m=video section"
        case .videoRejected: "answer rejects the video (m=video port 0)"
        case .noVP8PayloadType: "answer accepts no VP8 payload type"
        case .missingICEUfrag: "answer has no a=ice-ufrag"
        case .missingICEPassword: "answer has no a=ice-pwd"
        case .missingFingerprint: "answer has no a=fingerprint"
        case .malformedFingerprint(let value): "answer's a=fingerprint is malformed: \(value)"
        case .missingSetupRole: "answer has no a=setup"
        case .invalidSetupRole(let value): "answer's a=setup:\(value) is not active or passive"
        case .unexpectedDirection(let value): "answer's direction \(value) is not recvonly"
        case .malformedAttribute(let value): "answer has a malformed a=\(value)"
        case .malformedSimulcast(let value): "answer's a=simulcast:\(value) is malformed"
        case .malformedRid(let value): "answer's a=rid:\(value) is malformed"
        case .unknownRid(let rid): "answer names rid \(rid), which has no a=rid recv line or was not offered"
        }
    }
}
