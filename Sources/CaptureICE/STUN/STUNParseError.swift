/// Why a datagram is not a well-formed STUN message (RFC 8489 §5, §14).
///
/// Parsing never traps: every length is checked against the bytes at hand before it is read.
package enum STUNParseError: Error, Sendable, Hashable, Codable {
    /// Fewer bytes than the 20-byte header.
    case tooShort(count: Int)
    /// The two most significant bits of the first byte are not zero (not STUN; RFC 7983 would not route it here).
    case notSTUN
    /// The magic cookie is not 0x2112A442 (an RFC 3489 message or not STUN at all).
    case badMagicCookie(UInt32)
    /// The header's message length is not a multiple of 4.
    case misalignedLength(Int)
    /// The header's message length disagrees with the bytes that follow the header.
    case lengthMismatch(declared: Int, available: Int)
    /// An attribute header or value runs past the end of the message.
    case truncatedAttribute(type: UInt16, offset: Int)
    /// A known attribute whose value has the wrong size or content.
    case malformedAttribute(type: UInt16)
}
