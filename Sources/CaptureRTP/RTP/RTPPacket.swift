/// A parsed RTP packet: its header and where its payload lies in the bytes it was parsed from.
///
/// Parsing validates every length against the buffer before reading, so hostile input (truncated packets, CSRC
/// counts or extension lengths pointing past the end, oversized padding, a version other than 2) gives an
/// ``RTPParseError`` and never an out-of-bounds read.
public struct RTPPacket: Sendable, Hashable {
    /// The header.
    public var header: RTPHeader
    /// The payload's byte range in the parsed buffer, padding removed.
    public var payloadRange: Range<Int>

    /// Parses `bytes` as an RTP packet.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(RTPParseError) {
        let length = bytes.count
        guard length >= RTPHeader.fixedSize else { throw .truncatedHeader(length: length) }
        let first = bytes[0]
        let version = first >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = bytes[1]
        var header = RTPHeader(
            marker: second & 0x80 != 0, payloadType: second & 0x7F, sequenceNumber: bytes.rtpLoadUInt16(at: 2),
            timestamp: bytes.rtpLoadUInt32(at: 4), ssrc: bytes.rtpLoadUInt32(at: 8))
        var offset = RTPHeader.fixedSize
        guard offset + 4 * csrcCount <= length else { throw .csrcPastEnd(count: csrcCount, length: length) }
        if csrcCount > 0 {
            header.csrcs = (0..<csrcCount).map { bytes.rtpLoadUInt32(at: RTPHeader.fixedSize + 4 * $0) }
        }
        offset += 4 * csrcCount
        if hasExtension {
            guard offset + 4 <= length else { throw .extensionPastEnd(declaredBytes: 4, available: length - offset) }
            let profile = bytes.rtpLoadUInt16(at: offset)
            let extensionBytes = 4 * Int(bytes.rtpLoadUInt16(at: offset + 2))
            offset += 4
            guard offset + extensionBytes <= length else {
                throw .extensionPastEnd(declaredBytes: extensionBytes, available: length - offset)
            }
            let block = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + extensionBytes])
            if profile == RTPHeaderExtensionForm.oneByteProfile {
                header.extensionForm = .oneByte
                header.extensionElements = try Self.parseOneByteElements(block)
            } else if profile & 0xFFF0 == RTPHeaderExtensionForm.twoByteProfile {
                header.extensionForm = .twoByte
                header.extensionElements = try Self.parseTwoByteElements(block)
            } else {
                header.extensionForm = .other(profile: profile)
            }
            offset += extensionBytes
        }
        var end = length
        if hasPadding {
            let count = Int(bytes[length - 1])
            guard count > 0, count <= length - offset else {
                throw .invalidPadding(count: count, available: length - offset)
            }
            header.paddingLength = count
            end -= count
        }
        self.header = header
        self.payloadRange = offset..<end
    }

    /// The first header-extension element with `id`, if any.
    public func extensionElement(id: UInt8) -> RTPHeaderExtensionElement? {
        header.extensionElement(id: id)
    }

    /// RFC 8285 §4.2: ID (4 bits), length - 1 (4 bits); ID 0 is a padding byte, ID 15 stops parsing.
    private static func parseOneByteElements(
        _ block: UnsafeRawBufferPointer
    ) throws(RTPParseError) -> [RTPHeaderExtensionElement] {
        var elements: [RTPHeaderExtensionElement] = []
        var index = 0
        while index < block.count {
            let id = block[index] >> 4
            if id == 0 {
                index += 1
                continue
            }
            if id == 15 { break }
            let size = Int(block[index] & 0x0F) + 1
            index += 1
            guard index + size <= block.count else { throw .extensionElementPastEnd(id: id) }
            elements.append(RTPHeaderExtensionElement(id: id, data: Array(block[index..<index + size])))
            index += size
        }
        return elements
    }

    /// RFC 8285 §4.3: ID byte and length byte; ID 0 is a padding byte.
    private static func parseTwoByteElements(
        _ block: UnsafeRawBufferPointer
    ) throws(RTPParseError) -> [RTPHeaderExtensionElement] {
        var elements: [RTPHeaderExtensionElement] = []
        var index = 0
        while index < block.count {
            let id = block[index]
            if id == 0 {
                index += 1
                continue
            }
            guard index + 2 <= block.count else { throw .extensionElementPastEnd(id: id) }
            let size = Int(block[index + 1])
            index += 2
            guard index + size <= block.count else { throw .extensionElementPastEnd(id: id) }
            elements.append(RTPHeaderExtensionElement(id: id, data: Array(block[index..<index + size])))
            index += size
        }
        return elements
    }
}

extension UnsafeRawBufferPointer {
    /// The big-endian 16-bit value at `offset` (the caller has checked the bounds).
    func rtpLoadUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    /// The big-endian 32-bit value at `offset` (the caller has checked the bounds).
    func rtpLoadUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8
            | UInt32(self[offset + 3])
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Stores `value` big-endian at `offset` (the caller has checked the bounds).
    func rtpStore(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    /// Stores `value` big-endian at `offset` (the caller has checked the bounds).
    func rtpStore(_ value: UInt32, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 24)
        self[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        self[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}
