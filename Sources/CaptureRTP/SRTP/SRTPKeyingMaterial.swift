/// An SRTP master key and salt, as exchanged in SDP `a=crypto` lines (RFC 4568) or derived from DTLS.
public struct SRTPKeyingMaterial: Sendable, Hashable, Codable {
    /// The master key (16 bytes).
    public let key: [UInt8]
    /// The master salt (14 bytes for AES-CM, 12 for GCM).
    public let salt: [UInt8]

    /// Creates keying material, checking the lengths against `profile`.
    public init(key: [UInt8], salt: [UInt8], profile: SRTPProfile = .aesCM128HMACSHA1_80) throws(SRTPError) {
        guard key.count == profile.keyLength, salt.count == profile.saltLength else {
            throw .invalidKeyLength(
                expectedKey: profile.keyLength, expectedSalt: profile.saltLength, actualKey: key.count,
                actualSalt: salt.count)
        }
        self.key = key
        self.salt = salt
    }

    /// Fresh material from the system's secure random source (`getrandom` via `SystemRandomNumberGenerator`).
    public static func random(profile: SRTPProfile = .aesCM128HMACSHA1_80) -> SRTPKeyingMaterial {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<profile.keyLength + profile.saltLength).map { _ in
            UInt8.random(in: .min ... .max, using: &generator)
        }
        return SRTPKeyingMaterial(unchecked: Array(bytes[..<profile.keyLength]), Array(bytes[profile.keyLength...]))
    }

    private init(unchecked key: [UInt8], _ salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// The profile whose salt length this material has.
    public var profile: SRTPProfile {
        salt.count == SRTPProfile.aeadAES128GCM.saltLength ? .aeadAES128GCM : .aesCM128HMACSHA1_80
    }

    /// Key then salt, base64-encoded: the RFC 4568 `inline:` form and ffmpeg's `-srtp_out_params`.
    public var base64: String { Base64.encode(key + salt) }

    /// Decodes the `inline:` form: 30 bytes (AES-CM key + salt) or 28 bytes (GCM key + salt).
    public init(base64 text: String) throws(SRTPError) {
        guard let bytes = Base64.decode(text) else { throw .invalidBase64(text) }
        let profile: SRTPProfile
        switch bytes.count {
        case 30: profile = .aesCM128HMACSHA1_80
        case 28: profile = .aeadAES128GCM
        default: throw .invalidBase64(text)
        }
        self.init(unchecked: Array(bytes[..<profile.keyLength]), Array(bytes[profile.keyLength...]))
    }
}

/// Standard base64 (RFC 4648 §4) with padding; decoding is strict (no whitespace, correct padding).
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let chunk =
                UInt32(bytes[index]) << 16 | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            for position in 0..<4 {
                if position <= min(remaining, 3) {
                    output.append(alphabet[Int(chunk >> (18 - 6 * UInt32(position))) & 0x3F])
                } else {
                    output.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < characters.count {
            var chunk: UInt32 = 0
            var padding = 0
            for position in 0..<4 {
                let character = characters[index + position]
                let value: UInt32
                if character == UInt8(ascii: "=") {
                    guard index + 4 == characters.count, position >= 2 else { return nil }
                    padding += 1
                    value = 0
                } else {
                    guard padding == 0, let found = alphabet.firstIndex(of: character) else { return nil }
                    value = UInt32(found)
                }
                chunk = chunk << 6 | value
            }
            output.append(UInt8(truncatingIfNeeded: chunk >> 16))
            if padding < 2 { output.append(UInt8(truncatingIfNeeded: chunk >> 8)) }
            if padding < 1 { output.append(UInt8(truncatingIfNeeded: chunk)) }
            index += 4
        }
        return output
    }
}
