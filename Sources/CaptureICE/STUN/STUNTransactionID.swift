/// A STUN transaction ID: 96 bits chosen at random by the client of a transaction (RFC 8489 §6).
package struct STUNTransactionID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The first 4 bytes, big-endian.
    private let high: UInt32
    /// The last 8 bytes, big-endian.
    private let low: UInt64

    /// A transaction ID from exactly 12 bytes; `nil` for any other count.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var high: UInt32 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 4 { high = high << 8 | UInt32(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// A transaction ID from its two big-endian words.
    init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random transaction ID.
    package static func random() -> STUNTransactionID {
        var generator = SystemRandomNumberGenerator()
        return STUNTransactionID(high: generator.next(), low: generator.next())
    }

    /// The 12 bytes in wire order.
    package var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(12)
        for shift in stride(from: 24, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: high >> shift)) }
        for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: low >> shift)) }
        return result
    }

    /// The 12 bytes as 24 hexadecimal digits.
    package var description: String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
