/// Why bytes received from the network are not a valid RTP packet or VP8 payload.
///
/// Every case names what was wrong and the sizes involved, so a receiver can count and log it; none of them is ever
/// turned into a crash.
public enum RTPParseError: Error, Sendable, Hashable, Codable {
    /// Fewer bytes than the fixed 12-byte RTP header.
    case truncatedHeader(length: Int)
    /// The version field is not 2.
    case unsupportedVersion(UInt8)
    /// The CSRC count points past the end of the packet.
    case csrcPastEnd(count: Int, length: Int)
    /// The header extension (its 4-byte header or its declared length) runs past the end of the packet.
    case extensionPastEnd(declaredBytes: Int, available: Int)
    /// An RFC 8285 extension element's length runs past the end of the extension block.
    case extensionElementPastEnd(id: UInt8)
    /// The padding count is zero or larger than the bytes after the header.
    case invalidPadding(count: Int, available: Int)
    /// The VP8 payload descriptor is cut short or the payload after it is empty.
    case truncatedPayloadDescriptor(length: Int)
}
