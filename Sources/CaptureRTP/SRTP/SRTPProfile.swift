/// The SRTP protection profiles this package supports.
public enum SRTPProfile: String, Sendable, Hashable, Codable, CaseIterable {
    /// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (RFC 3711; SDES suite `AES_CM_128_HMAC_SHA1_80`):
    /// 16-byte master key, 14-byte master salt.
    case aesCM128HMACSHA1_80
    /// AEAD AES-128-GCM with a 16-byte tag (RFC 7714): 16-byte master key, 12-byte master salt. For DTLS-SRTP.
    case aeadAES128GCM

    /// The master key length in bytes.
    public var keyLength: Int { 16 }

    /// The master salt length in bytes.
    public var saltLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 14
        case .aeadAES128GCM: 12
        }
    }

    /// The crypto-suite name used in SDP `a=crypto` (RFC 4568) and ffmpeg's `-srtp_out_suite`.
    public var sdesName: String {
        switch self {
        case .aesCM128HMACSHA1_80: "AES_CM_128_HMAC_SHA1_80"
        case .aeadAES128GCM: "AEAD_AES_128_GCM"
        }
    }

    /// The profile named `name` in SDP, or `nil`.
    public init?(sdesName name: String) {
        guard let profile = Self.allCases.first(where: { $0.sdesName == name }) else { return nil }
        self = profile
    }
}
