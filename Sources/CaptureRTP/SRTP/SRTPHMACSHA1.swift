/// HMAC-SHA1 (RFC 2104) that allocates nothing per message, for SRTP's authentication tag.
///
/// OpenSSL 3's own HMAC (`HMAC_Init_ex` or `EVP_MAC_init` with a NULL key, to reuse the key) duplicates a digest
/// context per message, which allocates. This builds HMAC from two ``SRTPSHA1`` states instead, created once and
/// restarted per message: SHA-1((key ⊕ ipad) ‖ message ‖ suffix), then SHA-1((key ⊕ opad) ‖ inner digest). The two
/// padded key blocks are hashed again each time (two extra SHA-1 blocks), which costs less than any copy of a keyed
/// state would. Not thread-safe: one thread at a time (``SRTPProtector``'s owner holds a lock).
final class SRTPHMACSHA1 {
    /// The HMAC-SHA1 output length in bytes.
    static let digestLength = SRTPSHA1.digestLength
    /// SHA-1's block length: the length of the padded key blocks.
    private static let blockLength = 64

    /// The inner hash.
    private let inner: SRTPSHA1
    /// The outer hash.
    private let outer: SRTPSHA1
    /// key ⊕ ipad (64 bytes), key ⊕ opad (64 bytes), then room for the inner and the outer digest (20 bytes each).
    private let scratch: UnsafeMutableRawPointer
    private static let scratchLength = 2 * blockLength + 2 * digestLength

    /// Creates the authenticator for `key` (at most 64 bytes; SRTP's session authentication key has 20).
    init(key: [UInt8]) throws(SRTPError) {
        guard key.count <= Self.blockLength else {
            throw .invalidKeyLength(
                expectedKey: SRTPHMACSHA1.digestLength, expectedSalt: 0, actualKey: key.count, actualSalt: 0)
        }
        inner = try SRTPSHA1()
        outer = try SRTPSHA1()
        scratch = .allocate(byteCount: Self.scratchLength, alignment: 8)
        scratch.initializeMemory(as: UInt8.self, repeating: 0, count: Self.scratchLength)
        for index in 0..<Self.blockLength {
            let keyByte = index < key.count ? key[index] : 0
            scratch.storeBytes(of: keyByte ^ 0x36, toByteOffset: index, as: UInt8.self)
            scratch.storeBytes(of: keyByte ^ 0x5C, toByteOffset: Self.blockLength + index, as: UInt8.self)
        }
    }

    deinit {
        scratch.initializeMemory(as: UInt8.self, repeating: 0, count: Self.scratchLength)  // the padded keys
        scratch.deallocate()
    }

    /// Writes the first `tagLength` bytes (at most ``digestLength``) of HMAC-SHA1(`message[0..<count]` ‖ `suffix`)
    /// at `tag`; `suffix`, when given, is hashed as 4 big-endian bytes (SRTP's rollover counter).
    func authenticate(
        _ message: UnsafeRawPointer, count: Int, suffix: UInt32?, tag: UnsafeMutableRawPointer, tagLength: Int
    ) throws(SRTPError) {
        let innerDigest = scratch + 2 * Self.blockLength
        let outerDigest = innerDigest + Self.digestLength
        try inner.start()
        try inner.update(scratch, count: Self.blockLength)
        try inner.update(message, count: count)
        if let suffix {
            var bigEndian = suffix.bigEndian
            try inner.update(&bigEndian, count: 4)
        }
        try inner.finish(into: innerDigest)
        try outer.start()
        try outer.update(scratch + Self.blockLength, count: Self.blockLength)
        try outer.update(innerDigest, count: Self.digestLength)
        try outer.finish(into: outerDigest)
        tag.copyMemory(from: outerDigest, byteCount: min(tagLength, Self.digestLength))
    }
}
