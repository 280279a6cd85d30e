/// Why an RTCP datagram was rejected. Every case names the byte offset of the packet at fault.
public enum RTCPParseError: Error, Sendable, Hashable {
    /// The datagram was empty.
    case empty
    /// Fewer than the 4 header bytes remained at `offset`.
    case truncatedHeader(offset: Int)
    /// The version field was not 2.
    case unsupportedVersion(UInt8, offset: Int)
    /// The length field claims more bytes than the datagram holds.
    case lengthExceedsDatagram(offset: Int, declared: Int, available: Int)
    /// The padding count is 0 or larger than the packet.
    case invalidPadding(offset: Int, count: Int)
    /// The packet is too short for its type and count (e.g. report blocks past the end).
    case truncatedBody(packetType: UInt8, offset: Int, needed: Int, available: Int)
    /// The packet's contents are malformed (e.g. an SDES chunk without its terminator).
    case malformed(packetType: UInt8, offset: Int, reason: String)
}
