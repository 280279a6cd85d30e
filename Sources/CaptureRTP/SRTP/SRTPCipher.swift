internal import CSSL

/// One OpenSSL cipher context for AES-128, keyed once, whose IV is set per packet: AES-128 in counter mode (the
/// RFC 3711 key derivation PRF and AES_CM_128_HMAC_SHA1_80) or in Galois/counter mode (AEAD_AES_128_GCM, RFC 7714).
///
/// Nothing is allocated after `init`: ``start(iv:)`` calls `EVP_EncryptInit_ex` with no cipher and no key, which in
/// OpenSSL 3 keeps the context's cipher and provider state and only loads the new IV (and resets the counter or GCM
/// state); the other calls work on caller memory. Not thread-safe: one thread at a time (``SRTPProtector``'s owner
/// holds a lock).
final class SRTPCipher {
    /// The AES-128 mode of operation.
    enum Mode {
        /// AES-128-CTR: the IV is the 16-byte initial counter block.
        case counter
        /// AES-128-GCM: the IV is 12 bytes; the 16-byte tag is taken with ``finish(tag:)``.
        case galoisCounter
    }

    /// The GCM tag length this type produces (RFC 7714's AEAD_AES_128_GCM uses the full 16 bytes).
    static let galoisCounterTagLength = 16

    /// The `EVP_CIPHER_CTX *`, owned.
    private let context: OpaquePointer

    /// Creates a context for `mode` keyed with `key` (16 bytes).
    init(_ mode: Mode, key: [UInt8]) throws(SRTPError) {
        guard key.count == 16 else {
            throw .invalidKeyLength(expectedKey: 16, expectedSalt: 0, actualKey: key.count, actualSalt: 0)
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw .openSSLFailure("EVP_CIPHER_CTX_new") }
        self.context = context
        // Fully initialized from here: if keying fails, deinit frees the context.
        let cipher = mode == .counter ? EVP_aes_128_ctr() : EVP_aes_128_gcm()
        try SRTPError.requireOpenSSLSuccess(EVP_EncryptInit_ex(context, cipher, nil, key, nil), "EVP_EncryptInit_ex")
    }

    deinit {
        EVP_CIPHER_CTX_free(context)  // also wipes the expanded key
    }

    /// Starts a message: loads `iv` (16 bytes in counter mode, 12 in GCM) and resets the keystream position and, in
    /// GCM, the authentication state.
    @inline(__always)
    func start(iv: UnsafeRawPointer) throws(SRTPError) {
        try SRTPError.requireOpenSSLSuccess(
            EVP_EncryptInit_ex(context, nil, nil, nil, iv.assumingMemoryBound(to: UInt8.self)), "EVP_EncryptInit_ex")
    }

    /// GCM only: authenticates `count` bytes at `bytes` without encrypting them (additional authenticated data).
    /// Call before ``encrypt(_:count:)``.
    @inline(__always)
    func authenticateOnly(_ bytes: UnsafeRawPointer, count: Int) throws(SRTPError) {
        guard count > 0 else { return }
        var written: Int32 = 0
        try SRTPError.requireOpenSSLSuccess(
            EVP_EncryptUpdate(context, nil, &written, bytes.assumingMemoryBound(to: UInt8.self), Int32(count)),
            "EVP_EncryptUpdate")
    }

    /// Encrypts `count` bytes at `bytes` in place (in GCM, also authenticates them).
    @inline(__always)
    func encrypt(_ bytes: UnsafeMutableRawPointer, count: Int) throws(SRTPError) {
        guard count > 0 else { return }
        let data = bytes.assumingMemoryBound(to: UInt8.self)
        var written: Int32 = 0
        try SRTPError.requireOpenSSLSuccess(
            EVP_EncryptUpdate(context, data, &written, data, Int32(count)), "EVP_EncryptUpdate")
    }

    /// GCM only: ends the message and writes its ``galoisCounterTagLength``-byte tag at `tag`.
    @inline(__always)
    func finish(tag: UnsafeMutableRawPointer) throws(SRTPError) {
        var unused: UInt8 = 0  // GCM has no block left to flush: EVP_EncryptFinal_ex writes nothing
        var written: Int32 = 0
        try SRTPError.requireOpenSSLSuccess(EVP_EncryptFinal_ex(context, &unused, &written), "EVP_EncryptFinal_ex")
        try SRTPError.requireOpenSSLSuccess(
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.galoisCounterTagLength), tag),
            "EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_GET_TAG)")
    }
}
