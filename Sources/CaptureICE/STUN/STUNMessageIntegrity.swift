internal import CSSL
internal import CZlib

/// MESSAGE-INTEGRITY (HMAC-SHA1, RFC 8489 §14.5) and FINGERPRINT (CRC-32 xor 0x5354554e, §14.7) over a message's
/// bytes.
///
/// Both cover the message up to the attribute, with the header's length field set as if the message ended just after
/// that attribute. ICE uses short-term credentials: the key is the password's UTF-8 bytes (RFC 8445 §7.2.2).
package enum STUNMessageIntegrity {
    /// What a check of one attribute found.
    package enum Verdict: Sendable, Hashable, Codable {
        /// The attribute is present and correct.
        case valid
        /// The attribute is absent.
        case absent
        /// The attribute is present and wrong (or the message is malformed).
        case invalid
    }

    /// The value FINGERPRINT's CRC-32 is xored with.
    package static let fingerprintXor: UInt32 = 0x5354_554E

    /// The key for short-term credentials: the password's bytes.
    package static func key(password: String) -> [UInt8] { Array(password.utf8) }

    /// The key for long-term credentials (RFC 8489 §9.2.2, TURN): MD5(username ":" realm ":" password), 16 bytes
    /// (empty if OpenSSL cannot compute MD5, which then fails every integrity check rather than trapping).
    package static func key(username: String, realm: String, password: String) -> [UInt8] {
        let input = Array("\(username):\(realm):\(password)".utf8)
        var digest = [UInt8](repeating: 0, count: 16)
        var length: UInt32 = 0
        let ok = input.withUnsafeBufferPointer { inputBytes in
            digest.withUnsafeMutableBufferPointer { digestBytes in
                EVP_Digest(inputBytes.baseAddress, inputBytes.count, digestBytes.baseAddress, &length, EVP_md5(), nil)
                    == 1
            }
        }
        return ok && length == 16 ? digest : []
    }

    /// Checks MESSAGE-INTEGRITY of the message in `bytes` with `key`.
    package static func verifyIntegrity(_ bytes: UnsafeRawBufferPointer, key: [UInt8]) -> Verdict {
        guard let offset = attributeOffset(STUNAttribute.Code.messageIntegrity, in: bytes) else { return .absent }
        guard hasConsistentLength(bytes), offset + 24 <= bytes.count, bytes[offset + 2] == 0, bytes[offset + 3] == 20
        else { return .invalid }
        var covered = Array(bytes[0..<offset])
        STUNMessage.setLength(offset + 24 - STUNMessage.headerSize, in: &covered)
        let expected = hmacSHA1(key: key, message: covered)
        guard expected.count == 20 else { return .invalid }
        var difference: UInt8 = 0
        for index in 0..<20 { difference |= expected[index] ^ bytes[offset + 4 + index] }
        return difference == 0 ? .valid : .invalid
    }

    /// Checks FINGERPRINT of the message in `bytes`; it must be the last attribute.
    package static func verifyFingerprint(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        guard let offset = attributeOffset(STUNAttribute.Code.fingerprint, in: bytes) else { return .absent }
        guard hasConsistentLength(bytes), offset + 8 == bytes.count, bytes[offset + 2] == 0, bytes[offset + 3] == 4
        else { return .invalid }
        var covered = Array(bytes[0..<offset])
        STUNMessage.setLength(offset + 8 - STUNMessage.headerSize, in: &covered)
        let received = UInt32(bigEndianBytes: bytes[(offset + 4)..<(offset + 8)])
        return fingerprint(of: covered) == received ? .valid : .invalid
    }

    /// Whether the header's message length matches the bytes after the header (the checks rewrite that field, so
    /// they must not trust a wrong one).
    private static func hasConsistentLength(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= STUNMessage.headerSize
            && Int(bytes[2]) << 8 | Int(bytes[3]) == bytes.count - STUNMessage.headerSize
    }

    /// The offset of the first attribute of `type` in a message, or `nil`; stops at any malformed length.
    static func attributeOffset(_ type: UInt16, in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= STUNMessage.headerSize else { return nil }
        var offset = STUNMessage.headerSize
        while offset + 4 <= bytes.count {
            let attributeType = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if attributeType == type { return offset }
            offset += 4 + (length + 3) & ~3
        }
        return nil
    }

    /// HMAC-SHA1 of `message` with `key` (20 bytes).
    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 20)
        var macLength: UInt32 = 0
        let ok = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                mac.withUnsafeMutableBufferPointer { macBytes in
                    HMAC(
                        EVP_sha1(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress,
                        messageBytes.count, macBytes.baseAddress, &macLength) != nil
                }
            }
        }
        guard ok, macLength == 20 else { return [] }
        return mac
    }

    /// FINGERPRINT's value for `message`: CRC-32 xor 0x5354554e.
    static func fingerprint(of message: [UInt8]) -> UInt32 {
        let crc = message.withUnsafeBufferPointer { buffer in
            crc32(0, buffer.baseAddress, UInt32(buffer.count))
        }
        return UInt32(truncatingIfNeeded: crc) ^ fingerprintXor
    }
}
