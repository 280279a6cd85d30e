/// Extends 16-bit RTP sequence numbers to a monotonic 64-bit count across wrap-arounds (65535 → 0).
///
/// Each number is placed at the 64-bit value nearest to the previous one, so reordering by less than half the
/// 16-bit range (32768 packets) is unwrapped correctly in both directions.
package struct SequenceNumberUnwrapper: Sendable, Hashable, Codable {
    private var last: Int64?

    /// Creates an unwrapper that has seen nothing.
    package init() {}

    /// The unwrapped value of `sequenceNumber`; the first number maps to itself (plus 65536, so that packets
    /// reordered before it stay positive).
    package mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        guard let last else {
            let value = Int64(sequenceNumber) + 0x1_0000
            self.last = value
            return value
        }
        let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: last)))
        let value = last + delta
        self.last = value
        return value
    }

    /// The 16-bit sequence number of an unwrapped value.
    package static func wrap(_ value: Int64) -> UInt16 {
        UInt16(truncatingIfNeeded: value)
    }
}
