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
        }
    }
}
