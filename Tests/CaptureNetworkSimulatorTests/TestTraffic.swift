import CaptureNetworkSimulator

/// Helpers shared by the simulator's tests: numbered datagrams, periodic sending, draining every delivery.
enum TestTraffic {
    /// A datagram of `size` bytes (at least 4) whose first four bytes are `sequence`, big-endian.
    static func datagram(sequence: Int, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: max(4, size))
        let value = UInt32(truncatingIfNeeded: sequence)
        bytes[0] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: value)
        return bytes
    }

    /// The sequence number written by ``datagram(sequence:size:)``.
    static func sequence<Bytes: Collection<UInt8>>(of bytes: Bytes) -> Int {
        bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }

    /// Sends `count` numbered datagrams of `size` bytes, one every `interval` from `first`, and returns the outcomes
    /// in sequence order.
    static func sendPeriodic(
        on network: SimulatedNetwork<String>,
        from source: String = "A",
        to destination: String = "B",
        count: Int,
        interval: Duration,
        size: Int,
        first: ContinuousClock.Instant
    ) -> [SendOutcome] {
        (0..<count).map { sequence in
            network.send(
                datagram(sequence: sequence, size: size),
                from: source,
                to: destination,
                at: first + interval * sequence
            )
        }
    }

    /// Pops every pending delivery, in delivery order.
    static func drain(_ network: SimulatedNetwork<String>) -> [Delivery<String>] {
        var deliveries: [Delivery<String>] = []
        while let due = network.nextDelivery, let delivery = network.popDelivery(notAfter: due) {
            deliveries.append(delivery)
        }
        return deliveries
    }

    /// Bits per second of wire bytes (payload plus `overhead` per datagram) delivered in `window`.
    static func throughput(
        of deliveries: [Delivery<String>],
        in window: Range<ContinuousClock.Instant>,
        overhead: Int = 28
    ) -> Double {
        let bytes = deliveries.filter { window.contains($0.at) }.reduce(0) { $0 + $1.bytes.count + overhead }
        let span = window.lowerBound.duration(to: window.upperBound)
        return Double(bytes * 8) / span.seconds
    }
}

extension Duration {
    /// The span in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
