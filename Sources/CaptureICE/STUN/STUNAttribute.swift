package import CaptureNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A STUN attribute (RFC 8489 §14, RFC 8445 §16.1, RFC 8656 §18): the ones ICE and a TURN client use typed, any
/// other kept raw.
///
/// ``messageIntegrity(_:)`` and ``fingerprint(_:)`` are what a parsed message carried; when serializing, a message
/// computes them itself (`STUNMessage/serialized(integrityKey:fingerprint:)`) and skips these cases.
package enum STUNAttribute: Sendable, Hashable {
    /// MAPPED-ADDRESS (0x0001): the reflexive address, not obfuscated (old servers only).
    case mappedAddress(SocketAddress)
    /// USERNAME (0x0006): for ICE, `"receiverUfrag:senderUfrag"`.
    case username(String)
    /// MESSAGE-INTEGRITY (0x0008): the 20-byte HMAC-SHA1 as received.
    case messageIntegrity([UInt8])
    /// ERROR-CODE (0x0009): class and number as one code (e.g. 401, 487) and a reason phrase.
    case errorCode(code: Int, reason: String)
    /// XOR-MAPPED-ADDRESS (0x0020): the reflexive transport address of the request's source.
    case xorMappedAddress(SocketAddress)
    /// PRIORITY (0x0024): the priority a peer-reflexive candidate learned from this check would have.
    case priority(UInt32)
    /// USE-CANDIDATE (0x0025): the controlling agent nominates this pair.
    case useCandidate
    /// FINGERPRINT (0x8028): CRC-32 of the message xor 0x5354554e, as received.
    case fingerprint(UInt32)
    /// ICE-CONTROLLED (0x8029): the sender is controlled; its tie-breaker.
    case iceControlled(UInt64)
    /// ICE-CONTROLLING (0x802A): the sender is controlling; its tie-breaker.
    case iceControlling(UInt64)
    /// CHANNEL-NUMBER (0x000C, TURN): a channel number 0x4000–0x4FFF (followed by two reserved bytes on the wire).
    case channelNumber(UInt16)
    /// LIFETIME (0x000D, TURN): an allocation's lifetime in seconds.
    case lifetime(UInt32)
    /// XOR-PEER-ADDRESS (0x0012, TURN): a peer's address as the relay sees it.
    case xorPeerAddress(SocketAddress)
    /// DATA (0x0013, TURN): a datagram to or from a peer, in a Send or Data indication.
    case data([UInt8])
    /// REALM (0x0014): the long-term credentials' realm.
    case realm(String)
    /// NONCE (0x0015): the server's nonce for long-term credentials.
    case nonce(String)
    /// XOR-RELAYED-ADDRESS (0x0016, TURN): the allocation's address on the relay.
    case xorRelayedAddress(SocketAddress)
    /// REQUESTED-TRANSPORT (0x0019, TURN): the IP protocol number of the relayed transport (17, UDP).
    case requestedTransport(UInt8)
    /// Any other attribute: its type and value (without padding).
    case unknown(type: UInt16, value: [UInt8])

    /// Attribute type codes.
    package enum Code {
        /// MAPPED-ADDRESS.
        package static let mappedAddress: UInt16 = 0x0001
        /// USERNAME.
        package static let username: UInt16 = 0x0006
        /// MESSAGE-INTEGRITY.
        package static let messageIntegrity: UInt16 = 0x0008
        /// ERROR-CODE.
        package static let errorCode: UInt16 = 0x0009
        /// XOR-MAPPED-ADDRESS.
        package static let xorMappedAddress: UInt16 = 0x0020
        /// PRIORITY.
        package static let priority: UInt16 = 0x0024
        /// USE-CANDIDATE.
        package static let useCandidate: UInt16 = 0x0025
        /// FINGERPRINT.
        package static let fingerprint: UInt16 = 0x8028
        /// ICE-CONTROLLED.
        package static let iceControlled: UInt16 = 0x8029
        /// ICE-CONTROLLING.
        package static let iceControlling: UInt16 = 0x802A
        /// CHANNEL-NUMBER.
        package static let channelNumber: UInt16 = 0x000C
        /// LIFETIME.
        package static let lifetime: UInt16 = 0x000D
        /// XOR-PEER-ADDRESS.
        package static let xorPeerAddress: UInt16 = 0x0012
        /// DATA.
        package static let data: UInt16 = 0x0013
        /// REALM.
        package static let realm: UInt16 = 0x0014
        /// NONCE.
        package static let nonce: UInt16 = 0x0015
        /// XOR-RELAYED-ADDRESS.
        package static let xorRelayedAddress: UInt16 = 0x0016
        /// REQUESTED-TRANSPORT.
        package static let requestedTransport: UInt16 = 0x0019
    }

    /// This attribute's type code.
    package var type: UInt16 {
        switch self {
        case .mappedAddress: Code.mappedAddress
        case .username: Code.username
        case .messageIntegrity: Code.messageIntegrity
        case .errorCode: Code.errorCode
        case .xorMappedAddress: Code.xorMappedAddress
        case .priority: Code.priority
        case .useCandidate: Code.useCandidate
        case .fingerprint: Code.fingerprint
        case .iceControlled: Code.iceControlled
        case .iceControlling: Code.iceControlling
        case .channelNumber: Code.channelNumber
        case .lifetime: Code.lifetime
        case .xorPeerAddress: Code.xorPeerAddress
        case .data: Code.data
        case .realm: Code.realm
        case .nonce: Code.nonce
        case .xorRelayedAddress: Code.xorRelayedAddress
        case .requestedTransport: Code.requestedTransport
        case .unknown(let type, _): type
        }
    }

    /// Decodes one attribute value (without padding). `transactionID` unmasks XOR-MAPPED-ADDRESS.
    static func decode(
        type: UInt16, value: UnsafeRawBufferPointer, transactionID: STUNTransactionID
    ) throws(STUNParseError) -> STUNAttribute {
        switch type {
        case Code.mappedAddress:
            return .mappedAddress(try decodeAddress(value, type: type, mask: nil))
        case Code.xorMappedAddress:
            return .xorMappedAddress(try decodeAddress(value, type: type, mask: transactionID))
        case Code.username:
            guard value.count <= 763 else { throw .malformedAttribute(type: type) }
            return .username(String(decoding: value, as: UTF8.self))
        case Code.messageIntegrity:
            guard value.count == 20 else { throw .malformedAttribute(type: type) }
            return .messageIntegrity(Array(value))
        case Code.errorCode:
            guard value.count >= 4, (3...6).contains(value[2] & 0x07), value[3] < 100 else {
                throw .malformedAttribute(type: type)
            }
            let code = Int(value[2] & 0x07) * 100 + Int(value[3])
            return .errorCode(code: code, reason: String(decoding: value[4...], as: UTF8.self))
        case Code.priority:
            guard value.count == 4 else { throw .malformedAttribute(type: type) }
            return .priority(UInt32(bigEndianBytes: value))
        case Code.useCandidate:
            guard value.isEmpty else { throw .malformedAttribute(type: type) }
            return .useCandidate
        case Code.fingerprint:
            guard value.count == 4 else { throw .malformedAttribute(type: type) }
            return .fingerprint(UInt32(bigEndianBytes: value))
        case Code.iceControlled, Code.iceControlling:
            guard value.count == 8 else { throw .malformedAttribute(type: type) }
            let tieBreaker = UInt64(bigEndianBytes: value)
            return type == Code.iceControlled ? .iceControlled(tieBreaker) : .iceControlling(tieBreaker)
        case Code.xorPeerAddress:
            return .xorPeerAddress(try decodeAddress(value, type: type, mask: transactionID))
        case Code.xorRelayedAddress:
            return .xorRelayedAddress(try decodeAddress(value, type: type, mask: transactionID))
        case Code.channelNumber:
            guard value.count == 4 else { throw .malformedAttribute(type: type) }
            return .channelNumber(UInt16(bigEndianBytes: value))
        case Code.lifetime:
            guard value.count == 4 else { throw .malformedAttribute(type: type) }
            return .lifetime(UInt32(bigEndianBytes: value))
        case Code.data:
            return .data(Array(value))
        case Code.realm, Code.nonce:
            guard value.count <= 763 else { throw .malformedAttribute(type: type) }
            let text = String(decoding: value, as: UTF8.self)
            return type == Code.realm ? .realm(text) : .nonce(text)
        case Code.requestedTransport:
            guard value.count == 4 else { throw .malformedAttribute(type: type) }
            return .requestedTransport(value[0])
        default:
            return .unknown(type: type, value: Array(value))
        }
    }

    /// Appends this attribute's value (without padding). `transactionID` masks XOR-MAPPED-ADDRESS.
    func encodeValue(into bytes: inout [UInt8], transactionID: STUNTransactionID) {
        switch self {
        case .mappedAddress(let address): Self.encodeAddress(address, mask: nil, into: &bytes)
        case .xorMappedAddress(let address): Self.encodeAddress(address, mask: transactionID, into: &bytes)
        case .username(let name): bytes.append(contentsOf: name.utf8)
        case .messageIntegrity(let mac): bytes.append(contentsOf: mac)
        case .errorCode(let code, let reason):
            let clamped = max(300, min(699, code))
            bytes.append(contentsOf: [0, 0, UInt8(clamped / 100), UInt8(clamped % 100)])
            bytes.append(contentsOf: reason.utf8.prefix(763))
        case .priority(let value): bytes.appendBigEndian(value)
        case .useCandidate: break
        case .fingerprint(let value): bytes.appendBigEndian(value)
        case .iceControlled(let value), .iceControlling(let value): bytes.appendBigEndian(value)
        case .channelNumber(let number):
            bytes.appendBigEndian(number)
            bytes.appendBigEndian(UInt16(0))
        case .lifetime(let seconds): bytes.appendBigEndian(seconds)
        case .xorPeerAddress(let address), .xorRelayedAddress(let address):
            Self.encodeAddress(address, mask: transactionID, into: &bytes)
        case .data(let value): bytes.append(contentsOf: value)
        case .realm(let text), .nonce(let text): bytes.append(contentsOf: text.utf8.prefix(763))
        case .requestedTransport(let proto): bytes.append(contentsOf: [proto, 0, 0, 0])
        case .unknown(_, let value): bytes.append(contentsOf: value)
        }
    }

    /// The family byte, port and address of (XOR-)MAPPED-ADDRESS, unmasked when `mask` is given.
    private static func decodeAddress(
        _ value: UnsafeRawBufferPointer, type: UInt16, mask: STUNTransactionID?
    ) throws(STUNParseError) -> SocketAddress {
        guard value.count >= 4 else { throw .malformedAttribute(type: type) }
        let family = value[1]
        let length: Int
        switch family {
        case 0x01: length = 4
        case 0x02: length = 16
        default: throw .malformedAttribute(type: type)
        }
        guard value.count == 4 + length else { throw .malformedAttribute(type: type) }
        let keyBytes = mask.map { STUNMessage.magicCookieBytes + $0.bytes } ?? [UInt8](repeating: 0, count: 16)
        let port = (UInt16(value[2]) << 8 | UInt16(value[3])) ^ (mask == nil ? 0 : 0x2112)
        var address = [UInt8](repeating: 0, count: length)
        for index in 0..<length { address[index] = value[4 + index] ^ keyBytes[index] }
        guard let result = SocketAddress(networkBytes: address, port: port) else {
            throw .malformedAttribute(type: type)
        }
        return result
    }

    /// Appends (XOR-)MAPPED-ADDRESS's value, masked when `mask` is given.
    private static func encodeAddress(_ address: SocketAddress, mask: STUNTransactionID?, into bytes: inout [UInt8]) {
        let keyBytes = mask.map { STUNMessage.magicCookieBytes + $0.bytes } ?? [UInt8](repeating: 0, count: 16)
        let port = address.port ^ (mask == nil ? 0 : 0x2112)
        bytes.append(0)
        bytes.append(address.family == .ipv4 ? 0x01 : 0x02)
        bytes.appendBigEndian(port)
        for (index, byte) in address.networkBytes.enumerated() { bytes.append(byte ^ keyBytes[index]) }
    }
}

extension FixedWidthInteger {
    /// Reads a big-endian integer from the first `bitWidth / 8` bytes of `bytes` (which must hold that many).
    init(bigEndianBytes bytes: some Collection<UInt8>) {
        var value: Self = 0
        for byte in bytes.prefix(Self.bitWidth / 8) { value = value << 8 | Self(byte) }
        self = value
    }
}

extension [UInt8] {
    /// Appends `value` in network order.
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}
