public import CaptureRTP

/// Why a WHEP viewer's offer cannot be answered: each case names what is missing or wrong. The preview answers each
/// with 400 and the ``description`` as the body.
public enum ViewerOfferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not SDP (the parser's error names the line).
    case malformedSDP(SDPParseError)
    /// The offer has no `m=video` section with a non-zero port.
    case noVideoMedia
    /// The video section's protocol is not DTLS-SRTP (`SAVP`, `SAVPF`); the protocol is quoted.
    case notDTLSSRTP(String)
    /// The video section does not receive (`sendonly` or `inactive`).
    case notReceiving
    /// `a=ice-ufrag` or `a=ice-pwd` is absent or empty.
    case missingICECredentials
    /// `a=fingerprint` is absent.
    case missingFingerprint
    /// The video section offers no VP8 payload type.
    case noVP8PayloadType

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .malformedSDP(let error): "the offer is not SDP: \(error)"
        case .noVideoMedia: "the offer has no video section"
        case .notDTLSSRTP(let proto): "the video section's protocol \(proto) is not DTLS-SRTP"
        case .notReceiving: "the video section does not receive (sendonly or inactive)"
        case .missingICECredentials: "the offer has no ICE ufrag or password"
        case .missingFingerprint: "the offer has no a=fingerprint"
        case .noVP8PayloadType: "the offer does not receive VP8"
        }
    }
}
