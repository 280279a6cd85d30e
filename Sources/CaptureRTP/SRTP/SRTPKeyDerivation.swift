/// The session keys of one direction of packets (SRTP or SRTCP), derived from the master key and salt.
struct SRTPSessionKeys: Sendable, Hashable {
    /// The session encryption key (16 bytes).
    var encryptionKey: [UInt8]
    /// The session authentication key: 20 bytes for HMAC-SHA1; empty for AEAD_AES_128_GCM, whose tag is GCM's.
    var authenticationKey: [UInt8]
    /// The session salt: 14 bytes for AES-CM, 12 for AEAD_AES_128_GCM.
    var salt: [UInt8]
}

/// RFC 3711 §4.3 key derivation, with AES-128 in counter mode as the PRF (§4.3.3) and a key derivation rate of 0.
///
/// With the rate 0 the index term r is 0, so each session key is the AES-CM keystream under the master key from the
/// IV x · 2^16, where x = (label · 2^48) ⊕ master salt (§4.3.1): the label sits in byte 7 of the 14-byte salt.
/// AEAD_AES_128_GCM keeps this PRF (RFC 7714 §11) with its 12-byte master salt zero-padded to 14 bytes, and a 12-byte
/// session salt, as libsrtp does. Allocates (arrays, one OpenSSL context) — for session creation only.
enum SRTPKeyDerivation {
    /// Which packets the keys protect: the labels differ (0x00–0x02 for SRTP, 0x03–0x05 for SRTCP).
    enum Direction {
        /// SRTP: labels 0x00 (encryption), 0x01 (authentication), 0x02 (salt).
        case rtp
        /// SRTCP: labels 0x03 (encryption), 0x04 (authentication), 0x05 (salt).
        case rtcp

        /// The label of the encryption key; authentication and salt follow it.
        var encryptionLabel: UInt8 { self == .rtp ? 0x00 : 0x03 }
    }

    /// The HMAC-SHA1 session authentication key length (RFC 3711 §4.2.1 n_a = 160 bits).
    static let authenticationKeyLength = SRTPHMACSHA1.digestLength

    /// The session keys for `direction` under `profile`, from `master` (its lengths must match `profile`).
    static func sessionKeys(
        from master: SRTPKeyingMaterial, profile: SRTPProfile, direction: Direction
    ) throws(SRTPError) -> SRTPSessionKeys {
        guard master.key.count == profile.keyLength, master.salt.count == profile.saltLength else {
            throw .invalidKeyLength(
                expectedKey: profile.keyLength, expectedSalt: profile.saltLength, actualKey: master.key.count,
                actualSalt: master.salt.count)
        }
        let prf = try SRTPCipher(.counter, key: master.key)
        let label = direction.encryptionLabel
        let authenticationLength = profile == .aesCM128HMACSHA1_80 ? authenticationKeyLength : 0
        return SRTPSessionKeys(
            encryptionKey: try derive(prf, masterSalt: master.salt, label: label, length: profile.keyLength),
            authenticationKey: try derive(prf, masterSalt: master.salt, label: label + 1, length: authenticationLength),
            salt: try derive(prf, masterSalt: master.salt, label: label + 2, length: profile.saltLength))
    }

    /// `length` bytes of PRF output for `label`: the AES-CM keystream of `prf` (keyed with the master key) from the
    /// IV ((label · 2^48) ⊕ master salt) · 2^16.
    private static func derive(
        _ prf: SRTPCipher, masterSalt: [UInt8], label: UInt8, length: Int
    ) throws(SRTPError) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 16)
        iv.replaceSubrange(0..<masterSalt.count, with: masterSalt)
        iv[7] ^= label
        var output = [UInt8](repeating: 0, count: length)
        let outcome = iv.withUnsafeBytes { iv in
            output.withUnsafeMutableBytes { output in
                Result { () throws(SRTPError) in
                    guard let ivBytes = iv.baseAddress, let outputBytes = output.baseAddress else { return }
                    try prf.start(iv: ivBytes)
                    try prf.encrypt(outputBytes, count: output.count)
                }
            }
        }
        try outcome.get()
        return output
    }
}
