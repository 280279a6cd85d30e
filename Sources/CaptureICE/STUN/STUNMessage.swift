package import CaptureNet

/// A STUN message (RFC 8489 §5): class, method, transaction ID and attributes.
///
/// Parsed from a datagram with every length checked (``init(parsing:)`` throws `STUNParseError`, never traps), and
/// serialized with MESSAGE-INTEGRITY and FINGERPRINT computed over the bytes as written
/// (``serialized(integrityKey:fingerprint:)``). Checking a received message's integrity needs its bytes, not this
/// value: see `STUNMessageIntegrity`.
package struct STUNMessage: Sendable, Hashable {
    /// A message class (RFC 8489 §5: the C1 and C0 bits).
    package enum Class: UInt16, Sendable, Hashable, Codable {
        /// A request.
        case request = 0b00
        /// An indication.
        case indication = 0b01
        /// A success response.
        case successResponse = 0b10
        /// An error response.
        case errorResponse = 0b11
    }

    /// The Binding method, the only one ICE uses.
    package static let binding: UInt16 = 0x001
    /// The magic cookie 0x2112A442.
    package static let magicCookie: UInt32 = 0x2112_A442
    /// The magic cookie in wire order.
    static let magicCookieBytes: [UInt8] = [0x21, 0x12, 0xA4, 0x42]
    /// The header's size.
    package static let headerSize = 20

    /// The class.
    package var messageClass: Class
    /// The 12-bit method (``binding``).
    package var method: UInt16
    /// The transaction ID.
    package var transactionID: STUNTransactionID
    /// The attributes in order.
    package var attributes: [STUNAttribute]

    /// A message from its parts.
    package init(
        _ messageClass: Class, method: UInt16 = STUNMessage.binding, transactionID: STUNTransactionID = .random(),
        attributes: [STUNAttribute] = []
    ) {
        self.messageClass = messageClass
        self.method = method & 0x0FFF
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// Whether `bytes` looks like a STUN message: at least a header, top two bits zero, the magic cookie.
    package static func isSTUN(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= headerSize && bytes[0] & 0xC0 == 0 && bytes[4] == 0x21 && bytes[5] == 0x12
            && bytes[6] == 0xA4 && bytes[7] == 0x42
    }

    /// Parses one message that fills `bytes` exactly (a datagram).
    package init(parsing bytes: UnsafeRawBufferPointer) throws(STUNParseError) {
        guard bytes.count >= Self.headerSize else { throw .tooShort(count: bytes.count) }
        guard bytes[0] & 0xC0 == 0 else { throw .notSTUN }
        let type = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        let cookie = UInt32(bigEndianBytes: bytes[4..<8])
        guard cookie == Self.magicCookie else { throw .badMagicCookie(cookie) }
        guard length % 4 == 0 else { throw .misalignedLength(length) }
        guard Self.headerSize + length == bytes.count else {
            throw .lengthMismatch(declared: length, available: bytes.count - Self.headerSize)
        }
        guard let transactionID = STUNTransactionID(bytes: bytes[8..<20]) else { throw .tooShort(count: bytes.count) }
        // Type bits: M11…M7 C1 M6…M4 C0 M3…M0.
        let classBits = (type >> 7) & 0b10 | (type >> 4) & 0b01
        let method = (type & 0x000F) | (type & 0x00E0) >> 1 | (type & 0x3E00) >> 2
        var attributes: [STUNAttribute] = []
        var offset = Self.headerSize
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw .truncatedAttribute(type: 0, offset: offset) }
            let attributeType = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
            let attributeLength = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let valueStart = offset + 4
            guard valueStart + attributeLength <= bytes.count else {
                throw .truncatedAttribute(type: attributeType, offset: offset)
            }
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueStart + attributeLength])
            attributes.append(try STUNAttribute.decode(type: attributeType, value: value, transactionID: transactionID))
            offset = valueStart + (attributeLength + 3) & ~3
        }
        self.messageClass = Class(rawValue: classBits) ?? .request
        self.method = method
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// Parses one message from `bytes`.
    package init(parsing bytes: [UInt8]) throws(STUNParseError) {
        let result: Result<STUNMessage, STUNParseError> = bytes.withUnsafeBytes { raw in
            do throws(STUNParseError) { return .success(try STUNMessage(parsing: raw)) } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// The 16-bit message type: method and class bits interleaved.
    var messageType: UInt16 {
        let method = self.method & 0x0FFF
        let classBits = messageClass.rawValue
        return (method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2 | (classBits & 0b01) << 4
            | (classBits & 0b10) << 7
    }

    /// The message as bytes: the attributes (any `STUNAttribute/messageIntegrity(_:)` or
    /// `STUNAttribute/fingerprint(_:)` among them skipped), then MESSAGE-INTEGRITY keyed with `integrityKey` when
    /// given, then FINGERPRINT when `fingerprint` is true.
    package func serialized(integrityKey: [UInt8]? = nil, fingerprint: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        bytes.appendBigEndian(messageType)
        bytes.appendBigEndian(UInt16(0))
        bytes.append(contentsOf: Self.magicCookieBytes)
        bytes.append(contentsOf: transactionID.bytes)
        for attribute in attributes {
            switch attribute {
            case .messageIntegrity, .fingerprint: continue
            default: break
            }
            let start = bytes.count
            bytes.appendBigEndian(attribute.type)
            bytes.appendBigEndian(UInt16(0))
            attribute.encodeValue(into: &bytes, transactionID: transactionID)
            let length = bytes.count - start - 4
            bytes[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
            bytes[start + 3] = UInt8(truncatingIfNeeded: length)
            while bytes.count % 4 != 0 { bytes.append(0) }
        }
        if let integrityKey {
            Self.setLength(bytes.count - Self.headerSize + 24, in: &bytes)
            let mac = STUNMessageIntegrity.hmacSHA1(key: integrityKey, message: bytes)
            bytes.appendBigEndian(STUNAttribute.Code.messageIntegrity)
            bytes.appendBigEndian(UInt16(20))
            bytes.append(contentsOf: mac.count == 20 ? mac : [UInt8](repeating: 0, count: 20))
        }
        if fingerprint {
            Self.setLength(bytes.count - Self.headerSize + 8, in: &bytes)
            let crc = STUNMessageIntegrity.fingerprint(of: bytes)
            bytes.appendBigEndian(STUNAttribute.Code.fingerprint)
            bytes.appendBigEndian(UInt16(4))
            bytes.appendBigEndian(crc)
        }
        Self.setLength(bytes.count - Self.headerSize, in: &bytes)
        return bytes
    }

    /// Writes ``serialized(integrityKey:fingerprint:)`` into `buffer`; returns the byte count, or `nil` (nothing
    /// written) when `buffer` is too small.
    package func serialize(
        into buffer: UnsafeMutableRawBufferPointer, integrityKey: [UInt8]? = nil, fingerprint: Bool = false
    ) -> Int? {
        let bytes = serialized(integrityKey: integrityKey, fingerprint: fingerprint)
        guard bytes.count <= buffer.count else { return nil }
        buffer.copyBytes(from: bytes)
        return bytes.count
    }

    /// Sets the header's message length.
    static func setLength(_ length: Int, in bytes: inout [UInt8]) {
        bytes[2] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: length)
    }

    /// The first attribute of `type`'s case, if any (e.g. `message.first { if case .username = $0 … }`).
    package func first<T>(_ extract: (STUNAttribute) -> T?) -> T? {
        for attribute in attributes { if let value = extract(attribute) { return value } }
        return nil
    }

    /// USERNAME, if present.
    package var username: String? { first { if case .username(let name) = $0 { name } else { nil } } }
    /// XOR-MAPPED-ADDRESS (or MAPPED-ADDRESS when absent), if present.
    package var mappedAddress: SocketAddress? {
        first { if case .xorMappedAddress(let address) = $0 { address } else { nil } }
            ?? first { if case .mappedAddress(let address) = $0 { address } else { nil } }
    }
    /// PRIORITY, if present.
    package var priority: UInt32? { first { if case .priority(let value) = $0 { value } else { nil } } }
    /// Whether USE-CANDIDATE is present.
    package var useCandidate: Bool { attributes.contains(.useCandidate) }
    /// ICE-CONTROLLING's tie-breaker, if present.
    package var iceControlling: UInt64? { first { if case .iceControlling(let value) = $0 { value } else { nil } } }
    /// ICE-CONTROLLED's tie-breaker, if present.
    package var iceControlled: UInt64? { first { if case .iceControlled(let value) = $0 { value } else { nil } } }
    /// ERROR-CODE's code, if present.
    package var errorCode: Int? { first { if case .errorCode(let code, _) = $0 { code } else { nil } } }
    /// LIFETIME (TURN), if present.
    package var lifetime: UInt32? { first { if case .lifetime(let seconds) = $0 { seconds } else { nil } } }
    /// REALM, if present.
    package var realm: String? { first { if case .realm(let text) = $0 { text } else { nil } } }
    /// NONCE, if present.
    package var nonce: String? { first { if case .nonce(let text) = $0 { text } else { nil } } }
}
