internal import CaptureCall

/// The packets a connection's pacer holds, unprotected, in a slab of fixed-size slots with a free list: a handle is
/// a slot's index, taken when a packet is stored and given back when it leaves, in whatever order the pacer chose
/// (retransmissions overtake media). Each slot has room for an RTX copy of the largest packet and its SRTP trailer,
/// so a packet is protected in place when it leaves.
///
/// ## Performance
/// Storing and releasing allocate nothing once the slab has grown to the most the queue holds (it doubles when full,
/// up to ``maximumSlots``; past that a packet is refused, which the session counts).
///
/// Not thread-safe: the connection's owner uses it.
final class PacedPacketStore {
    /// The most packets the store grows to hold (about 2 s of a 10 Mbit/s stream of 1,200-byte packets).
    static let maximumSlots = 2_048

    /// The largest packet (with its SRTP trailer) a slot holds.
    let slotSize: Int
    private var storage: UnsafeMutableRawBufferPointer
    private var lengths: [Int]
    private var kinds: [PacedPacketKind]
    /// Which of the connection's streams (simulcast layer) each slot's packet belongs to.
    private var streams: [Int]
    private var free: [Int]
    /// A slot outside the slab where padding packets are built and protected.
    let scratch: UnsafeMutableRawBufferPointer

    /// A store of `slots` slots of `slotSize` bytes, allocated now.
    init(slots: Int = 128, slotSize: Int) {
        let slots = max(1, slots)
        self.slotSize = max(64, slotSize)
        storage = .allocate(byteCount: slots * self.slotSize, alignment: 16)
        lengths = Array(repeating: 0, count: slots)
        kinds = Array(repeating: .media, count: slots)
        streams = Array(repeating: 0, count: slots)
        free = Array((0..<slots).reversed())
        free.reserveCapacity(Self.maximumSlots)
        scratch = .allocate(byteCount: self.slotSize, alignment: 16)
    }

    deinit {
        storage.deallocate()
        scratch.deallocate()
    }

    /// Packets held.
    var count: Int { lengths.count - free.count }

    /// Stores a copy of `packet` as `kind` of stream `stream`; returns its handle, or `nil` when it does not fit a slot
    /// or the store is at its most.
    func store(_ packet: UnsafeRawBufferPointer, kind: PacedPacketKind, stream: Int = 0) -> Int? {
        guard !packet.isEmpty, packet.count <= slotSize else { return nil }
        if free.isEmpty, !grow() { return nil }
        guard let handle = free.popLast() else { return nil }
        slot(handle).copyMemory(from: packet)
        lengths[handle] = packet.count
        kinds[handle] = kind
        streams[handle] = stream
        return handle
    }

    /// The packet under `handle`: its slot (room for the trailer after it), length, kind and stream; `nil` for a
    /// handle not in use.
    func packet(
        _ handle: Int
    ) -> (buffer: UnsafeMutableRawBufferPointer, length: Int, kind: PacedPacketKind, stream: Int)? {
        guard lengths.indices.contains(handle), lengths[handle] > 0 else { return nil }
        return (slot(handle), lengths[handle], kinds[handle], streams[handle])
    }

    /// Gives `handle`'s slot back.
    func release(_ handle: Int) {
        guard lengths.indices.contains(handle), lengths[handle] > 0 else { return }
        lengths[handle] = 0
        free.append(handle)
    }

    /// Gives every slot back.
    func removeAll() {
        for handle in lengths.indices where lengths[handle] > 0 { release(handle) }
    }

    private func slot(_ handle: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[(handle * slotSize)..<((handle + 1) * slotSize)])
    }

    /// Doubles the slab (handles stay valid: the slots keep their indexes); `false` at the most.
    private func grow() -> Bool {
        let slots = lengths.count
        guard slots < Self.maximumSlots else { return false }
        let grown = min(slots * 2, Self.maximumSlots)
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: grown * slotSize, alignment: 16)
        UnsafeMutableRawBufferPointer(rebasing: bigger[0..<(slots * slotSize)]).copyMemory(
            from: UnsafeRawBufferPointer(storage))
        storage.deallocate()
        storage = bigger
        lengths += Array(repeating: 0, count: grown - slots)
        kinds += Array(repeating: .media, count: grown - slots)
        streams += Array(repeating: 0, count: grown - slots)
        free.append(contentsOf: (slots..<grown).reversed())
        return true
    }
}
