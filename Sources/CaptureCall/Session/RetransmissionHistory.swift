internal import CaptureCore
internal import CaptureRTP

/// The packets a sender sent lately, in a fixed ring indexed by sequence number, for answering NACKs.
///
/// One buffer of `slots × slotSize` bytes is allocated at creation; ``store(_:sequenceNumber:nowNs:)`` copies a packet
/// into its slot and ``packet(sequenceNumber:nowNs:maximumAgeNs:)`` lends it back, so nothing is allocated per packet.
/// Not thread-safe: the sender uses it under its wire lock.
final class RetransmissionHistory {
    /// What a lookup found.
    enum Lookup {
        /// The packet, lent for the duration of the call that asked.
        case found(UnsafeRawBufferPointer)
        /// The packet was sent longer ago than the maximum age, or its slot was reused since.
        case tooOld
        /// No packet with that sequence number was sent (or it was never stored).
        case unknown
    }

    private struct Slot {
        var sequenceNumber: UInt16 = 0
        var length = 0
        var sentNs: UInt64 = 0
        var occupied = false
    }

    let slotSize: Int
    private let storage: UnsafeMutableRawBufferPointer
    private var slots: [Slot]
    private let mask: Int
    /// The newest stored sequence number, unwrapped, and whether any was stored.
    private var newest: Int64 = 0
    private var unwrapper = SequenceNumberUnwrapper()
    private var hasNewest = false

    /// Creates a history of `packets` slots (rounded up to a power of two, at least 16) of `slotSize` bytes each.
    init(packets: Int, slotSize: Int) {
        var count = 16
        while count < packets, count < 1 << 16 { count <<= 1 }
        self.slotSize = slotSize
        mask = count - 1
        slots = Array(repeating: Slot(), count: count)
        storage = .allocate(byteCount: count * slotSize, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// The number of slots.
    var capacity: Int { slots.count }

    /// Copies `packet` (unprotected RTP, at most ``slotSize`` bytes) into the slot of its sequence number.
    func store(_ packet: UnsafeRawBufferPointer, sequenceNumber: UInt16, nowNs: UInt64) {
        guard packet.count <= slotSize else { return }
        let index = Int(sequenceNumber) & mask
        UnsafeMutableRawBufferPointer(rebasing: storage[index * slotSize..<index * slotSize + packet.count])
            .copyMemory(from: packet)
        slots[index] = Slot(sequenceNumber: sequenceNumber, length: packet.count, sentNs: nowNs, occupied: true)
        let unwrapped = unwrapper.unwrap(sequenceNumber)
        if !hasNewest || unwrapped > newest {
            newest = unwrapped
            hasNewest = true
        }
    }

    /// The stored packet `sequenceNumber`, if it is still there and younger than `maximumAgeNs`.
    func packet(sequenceNumber: UInt16, nowNs: UInt64, maximumAgeNs: UInt64) -> Lookup {
        guard hasNewest else { return .unknown }
        // How far behind the newest packet the request is, on the 16-bit circle: a request "ahead" of the newest
        // was never sent.
        let behind = Int(UInt16(truncatingIfNeeded: newest) &- sequenceNumber)
        if behind >= 1 << 15 { return .unknown }
        if behind > mask { return .tooOld }
        let slot = slots[Int(sequenceNumber) & mask]
        guard slot.occupied, slot.sequenceNumber == sequenceNumber else { return .tooOld }
        if MonotonicClock.elapsedNs(from: slot.sentNs, to: nowNs) > maximumAgeNs { return .tooOld }
        let index = Int(sequenceNumber) & mask
        return .found(UnsafeRawBufferPointer(rebasing: storage[index * slotSize..<index * slotSize + slot.length]))
    }
}
