public import CaptureNet
internal import CaptureRTP

/// One datagram a ``WebRTCConnection`` wants sent, from ``WebRTCConnection/pollTransmit()``.
///
/// `bytes` is lent: it stays valid until the next call into the connection that produced it (any input, command or
/// poll), so the driver sends it (or copies it) before calling the connection again.
public struct Transmit {
    /// The local address it leaves from: the host address of the destination's family (one socket per family; on a
    /// real host the kernel picks the source address of that socket).
    public var source: SocketAddress
    /// Where it goes.
    public var destination: SocketAddress
    /// The datagram, lent (see the type's discussion).
    public var bytes: UnsafeRawBufferPointer
}

/// The connection's outgoing datagrams, in order, in a slab of fixed-size slots reused for every datagram: the send
/// path allocates nothing per packet once the queue has grown to the most a burst needs (it doubles when full, which
/// a steady state never meets).
///
/// Not thread-safe: the connection's owner uses it.
final class TransmitQueue {
    private struct Entry {
        var source: SocketAddress
        var destination: SocketAddress
        var length: Int
    }

    /// The largest datagram a slot holds.
    let slotSize: Int
    private var storage: UnsafeMutableRawBufferPointer
    private var entries: [Entry?]
    private var head = 0
    private(set) var count = 0
    /// Every datagram appended, and their bytes.
    private(set) var appended = TrafficCount()

    init(slots: Int = 64, slotSize: Int = 2_048) {
        self.slotSize = slotSize
        storage = .allocate(byteCount: slots * slotSize, alignment: 16)
        entries = Array(repeating: nil, count: slots)
    }

    deinit {
        storage.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Appends a datagram that `fill` writes into a slot (returning its length, or `nil` to give up).
    @discardableResult
    func append(
        from source: SocketAddress, to destination: SocketAddress,
        fill: (UnsafeMutableRawBufferPointer) -> Int?
    ) -> Bool {
        if count == entries.count { grow() }
        let index = (head + count) % entries.count
        let slot = UnsafeMutableRawBufferPointer(rebasing: storage[(index * slotSize)..<((index + 1) * slotSize)])
        guard let length = fill(slot), length > 0, length <= slotSize else { return false }
        entries[index] = Entry(source: source, destination: destination, length: length)
        count += 1
        appended.count(length)
        return true
    }

    /// Appends a copy of `bytes`.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer, from source: SocketAddress, to destination: SocketAddress) -> Bool {
        append(from: source, to: destination) { slot in
            guard bytes.count <= slot.count else { return nil }
            UnsafeMutableRawBufferPointer(rebasing: slot[0..<bytes.count]).copyMemory(from: bytes)
            return bytes.count
        }
    }

    /// The oldest datagram, lent until the next append.
    func pop() -> Transmit? {
        guard count > 0, let entry = entries[head] else { return nil }
        entries[head] = nil
        let start = head * slotSize
        head = (head + 1) % entries.count
        count -= 1
        return Transmit(
            source: entry.source, destination: entry.destination,
            bytes: UnsafeRawBufferPointer(rebasing: storage[start..<(start + entry.length)]))
    }

    /// Doubles the slab, keeping the queued datagrams in order.
    private func grow() {
        let slots = entries.count * 2
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: slots * slotSize, alignment: 16)
        var moved: [Entry?] = Array(repeating: nil, count: slots)
        for offset in 0..<count {
            let from = (head + offset) % entries.count
            let source = UnsafeRawBufferPointer(rebasing: storage[(from * slotSize)..<((from + 1) * slotSize)])
            UnsafeMutableRawBufferPointer(rebasing: bigger[(offset * slotSize)..<((offset + 1) * slotSize)])
                .copyMemory(from: source)
            moved[offset] = entries[from]
        }
        storage.deallocate()
        storage = bigger
        entries = moved
        head = 0
    }
}

/// Datagrams and their bytes, counted.
struct TrafficCount {
    private(set) var packets = 0
    private(set) var bytes = 0

    /// Counts one datagram of `length` bytes.
    mutating func count(_ length: Int) {
        packets += 1
        bytes += length
    }
}
