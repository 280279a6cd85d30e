/// A binary min-heap of pending deliveries keyed by (delivery instant, send sequence): earliest first, and
/// deliveries due at the same instant in the order they were sent.
struct DeliveryHeap<Address: Hashable & Sendable> {
    struct Entry {
        var delivery: Delivery<Address>
        var sequence: UInt64
        /// The index of the direction the delivery crossed, for its statistics.
        var link: Int

        func precedes(_ other: Entry) -> Bool {
            (delivery.at, sequence) < (other.delivery.at, other.sequence)
        }
    }

    private var entries: [Entry] = []

    var count: Int { entries.count }

    var first: Entry? { entries.first }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let removed = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].precedes(entries[smallest]) { smallest = left }
            if right < entries.count, entries[right].precedes(entries[smallest]) { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return removed
    }
}
