/// One RFC 8285 header-extension element: a local identifier and its bytes.
public struct RTPHeaderExtensionElement: Sendable, Hashable, Codable {
    /// The local identifier (1...14 in the one-byte form, 1...255 in the two-byte form).
    public var id: UInt8
    /// The element's data.
    public var data: [UInt8]

    /// Creates an element.
    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

/// The RFC 8285 form a header extension block uses.
public enum RTPHeaderExtensionForm: Sendable, Hashable, Codable {
    /// Profile 0xBEDE: one byte of ID (4 bits) and length-1 (4 bits) per element, up to 16 data bytes.
    case oneByte
    /// Profile 0x100X: one byte of ID and one byte of length per element, up to 255 data bytes.
    case twoByte
    /// Another profile (RFC 3550 generic extension); its elements are not interpreted.
    case other(profile: UInt16)

    /// The one-byte form's profile value.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// The two-byte form's profile value (the low 4 bits are application bits).
    public static let twoByteProfile: UInt16 = 0x1000
}

extension RTPHeaderExtensionElement {
    /// Where one header-extension element lies in a packet's bytes, found in place by
    /// ``locate(id:in:)``.
    public struct Location: Sendable, Hashable, Codable {
        /// The block's form: ``RTPHeaderExtensionForm/oneByte`` or ``RTPHeaderExtensionForm/twoByte``.
        public var form: RTPHeaderExtensionForm
        /// The offset of the element's ID byte (in the one-byte form it also holds length − 1 in its low 4 bits).
        public var idOffset: Int
        /// The offset of the element's first data byte.
        public var dataOffset: Int
        /// The number of data bytes.
        public var dataLength: Int

        /// Creates a location.
        public init(form: RTPHeaderExtensionForm, idOffset: Int, dataOffset: Int, dataLength: Int) {
            self.form = form
            self.idOffset = idOffset
            self.dataOffset = dataOffset
            self.dataLength = dataLength
        }

        /// The element's bytes, ID byte(s) to the last data byte.
        public var elementRange: Range<Int> { idOffset..<(dataOffset + dataLength) }
    }

    /// Finds the first element with `id` in the header extension of `packet` (a whole RTP packet, unprotected or
    /// SRTP-protected: header extensions are not encrypted), reading the bytes in place and allocating nothing; `nil`
    /// when the packet has no extension block in the RFC 8285 one-byte or two-byte form, no such element, or a
    /// malformed header.
    ///
    /// What a sender uses to change a copy of a packet in place: a fresh transport-wide number on an RTX copy, or
    /// its `rtp-stream-id` element turned into `repaired-rtp-stream-id` (``RTXPacket``).
    ///
    /// ## RFC 8285
    /// - §4.2 (one-byte form, profile 0xBEDE): ID in the high 4 bits, length − 1 in the low 4 bits; a zero byte is
    ///   padding; ID 15 stops the parsing (nothing after it is found). `id` must be in 1...14 to be found.
    /// - §4.3 (two-byte form, profile 0x100X): an ID byte and a length byte; a zero ID byte is padding.
    public static func locate(id: UInt8, in packet: UnsafeRawBufferPointer) -> Location? {
        guard packet.count >= RTPHeader.fixedSize, packet[0] & 0x10 != 0, id != 0 else { return nil }
        let start = RTPHeader.fixedSize + Int(packet[0] & 0x0F) * 4
        guard packet.count >= start + 4 else { return nil }
        let profile = packet.rtpLoadUInt16(at: start)
        let end = start + 4 + Int(packet.rtpLoadUInt16(at: start + 2)) * 4
        guard end <= packet.count else { return nil }
        var offset = start + 4
        if profile == RTPHeaderExtensionForm.oneByteProfile {
            while offset < end {
                let byte = packet[offset]
                let elementID = byte >> 4
                if elementID == 0 {
                    offset += 1
                    continue
                }
                guard elementID != 15 else { return nil }
                let length = Int(byte & 0x0F) + 1
                guard offset + 1 + length <= end else { return nil }
                if elementID == id {
                    return Location(form: .oneByte, idOffset: offset, dataOffset: offset + 1, dataLength: length)
                }
                offset += 1 + length
            }
        } else if profile & 0xFFF0 == RTPHeaderExtensionForm.twoByteProfile {
            while offset < end {
                let elementID = packet[offset]
                if elementID == 0 {
                    offset += 1
                    continue
                }
                guard offset + 2 <= end else { return nil }
                let length = Int(packet[offset + 1])
                guard offset + 2 + length <= end else { return nil }
                if elementID == id {
                    return Location(form: .twoByte, idOffset: offset, dataOffset: offset + 2, dataLength: length)
                }
                offset += 2 + length
            }
        }
        return nil
    }
}
