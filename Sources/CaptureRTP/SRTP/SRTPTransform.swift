/// The per-packet cryptography of one profile under one direction's session keys (SRTP's or SRTCP's): encrypts a
/// packet in place and appends its tag, for a packet index the caller chose.
///
/// - AES_CM_128_HMAC_SHA1_80 (RFC 3711 §4.1.1, §4.2): AES-128-CTR from the IV (salt · 2^16) ⊕ (SSRC · 2^64) ⊕
///   (index · 2^16); the tag is the first 10 bytes of HMAC-SHA1 over the authenticated portion, followed for SRTP by
///   the rollover counter.
/// - AEAD_AES_128_GCM (RFC 7714 §8.1, §9.1): the 12-byte IV (00 00 ‖ SSRC ‖ index as 48 bits) ⊕ salt, where the
///   index is ROC ‖ SEQ for SRTP and 00 00 ‖ 0 ‖ SRTCP index for SRTCP; the 16-byte GCM tag.
///
/// Both IVs are the salt with the SSRC and the index XORed in at profile-specific offsets, built as two big-endian
/// 64-bit halves on the stack. Nothing is allocated per packet. Not thread-safe: one thread at a time.
final class SRTPTransform {
    /// The profile.
    let profile: SRTPProfile
    /// Bytes of authentication tag appended: 10 (HMAC-SHA1-80) or 16 (GCM).
    let tagLength: Int
    /// How the tag is computed.
    private let authentication: Authentication
    /// AES-128-CTR or AES-128-GCM, keyed with the session encryption key.
    private let cipher: SRTPCipher
    /// The session salt, zero-padded to 16 bytes, as two big-endian halves (bytes 0–7 and 8–15).
    private let salt: (high: UInt64, low: UInt64)

    /// The source of the tag.
    private enum Authentication {
        /// HMAC-SHA1 with the session authentication key, truncated to 80 bits.
        case hmacSHA1(SRTPHMACSHA1)
        /// The AES-GCM tag.
        case galoisCounter
    }

    /// The bytes SRTCP appends: the tag and the E-flag ‖ SRTCP index word.
    var rtcpTrailerLength: Int { tagLength + 4 }

    /// Creates the transform for `profile` with the session keys of one direction.
    init(profile: SRTPProfile, keys: SRTPSessionKeys) throws(SRTPError) {
        guard keys.salt.count == profile.saltLength, keys.salt.count <= 16 else {
            throw .invalidKeyLength(
                expectedKey: profile.keyLength, expectedSalt: profile.saltLength, actualKey: keys.encryptionKey.count,
                actualSalt: keys.salt.count)
        }
        self.profile = profile
        switch profile {
        case .aesCM128HMACSHA1_80:
            cipher = try SRTPCipher(.counter, key: keys.encryptionKey)
            authentication = .hmacSHA1(try SRTPHMACSHA1(key: keys.authenticationKey))
            tagLength = 10
        case .aeadAES128GCM:
            cipher = try SRTPCipher(.galoisCounter, key: keys.encryptionKey)
            authentication = .galoisCounter
            tagLength = SRTPCipher.galoisCounterTagLength
        }
        let padded = keys.salt + [UInt8](repeating: 0, count: 16 - keys.salt.count)
        salt = (
            padded[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, padded[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        )
    }

    /// Protects the RTP packet in `packet[0..<length]`, whose header (CSRCs and extension included) is
    /// `headerLength` bytes, as packet `index` (ROC · 2^16 + SEQ) of `ssrc`: the payload is encrypted in place and
    /// the tag appended. Returns the SRTP length, `length + tagLength`.
    func protectRTP(
        _ packet: UnsafeMutableRawBufferPointer, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64
    ) throws(SRTPError) -> Int {
        let base = try Self.room(packet, length: length, trailer: tagLength, header: headerLength)
        try start(ssrc: ssrc, index: index)
        switch authentication {
        case .hmacSHA1(let hmac):
            try cipher.encrypt(base + headerLength, count: length - headerLength)
            try hmac.authenticate(
                base, count: length, suffix: UInt32(truncatingIfNeeded: index >> 16), tag: base + length,
                tagLength: tagLength)
        case .galoisCounter:
            try cipher.authenticateOnly(base, count: headerLength)
            try cipher.encrypt(base + headerLength, count: length - headerLength)
            try cipher.finish(tag: base + length)
        }
        return length + tagLength
    }

    /// Protects the RTCP compound packet in `packet[0..<length]` as SRTCP packet `index` (1 ..< 2^31) of `ssrc` (the
    /// first packet's sender SSRC): everything after the first 8 bytes is encrypted and the trailer appended — for
    /// AES-CM the E ‖ index word then the tag over everything before it (RFC 3711 §3.4), for GCM the tag then the
    /// E ‖ index word, which is authenticated with the first 8 bytes (RFC 7714 §9, §17). Returns the SRTCP length,
    /// `length + rtcpTrailerLength`.
    func protectRTCP(
        _ packet: UnsafeMutableRawBufferPointer, length: Int, ssrc: UInt32, index: UInt32
    ) throws(SRTPError) -> Int {
        let headerLength = 8
        let base = try Self.room(packet, length: length, trailer: rtcpTrailerLength, header: headerLength)
        let word = (0x8000_0000 | index).bigEndian  // E = 1: encrypted
        try start(ssrc: ssrc, index: UInt64(index))
        switch authentication {
        case .hmacSHA1(let hmac):
            try cipher.encrypt(base + headerLength, count: length - headerLength)
            base.storeBytes(of: word, toByteOffset: length, as: UInt32.self)
            try hmac.authenticate(base, count: length + 4, suffix: nil, tag: base + length + 4, tagLength: tagLength)
        case .galoisCounter:
            try cipher.authenticateOnly(base, count: headerLength)
            var authenticatedWord = word
            try cipher.authenticateOnly(&authenticatedWord, count: 4)
            try cipher.encrypt(base + headerLength, count: length - headerLength)
            try cipher.finish(tag: base + length)
            base.storeBytes(of: word, toByteOffset: length + tagLength, as: UInt32.self)
        }
        return length + rtcpTrailerLength
    }

    /// The packet's base address, after checking that its `header` bytes fit in `length` and that `trailer` bytes
    /// fit after it in the buffer (and that lengths stay within what OpenSSL's `int` counts take).
    @inline(__always)
    static func room(
        _ packet: UnsafeMutableRawBufferPointer, length: Int, trailer: Int, header: Int
    ) throws(SRTPError) -> UnsafeMutableRawPointer {
        guard length >= header else { throw .bufferTooSmall(needed: header, available: max(length, 0)) }
        guard length <= packet.count - trailer, length <= Int(Int32.max) - trailer, let base = packet.baseAddress
        else { throw .bufferTooSmall(needed: length &+ trailer, available: packet.count) }
        return base
    }

    /// Loads the IV for `index` of `ssrc` into the cipher.
    @inline(__always)
    private func start(ssrc: UInt32, index: UInt64) throws(SRTPError) {
        var high = salt.high
        var low = salt.low
        switch profile {
        case .aesCM128HMACSHA1_80:  // SSRC in bytes 4–7, the 48-bit index in bytes 8–13
            high ^= UInt64(ssrc)
            low ^= index << 16
        case .aeadAES128GCM:  // SSRC in bytes 2–5, the 48-bit index in bytes 6–11
            high ^= UInt64(ssrc) << 16 | index >> 32
            low ^= index << 32
        }
        var iv = (high.bigEndian, low.bigEndian)
        try cipher.start(iv: &iv)
    }
}
