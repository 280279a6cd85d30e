#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import SystemPackage
internal import CLinuxIO

/// Waits with `ppoll(2)` until one of a fixed set of descriptors is readable or a deadline passes: one system call
/// per wake, with the deadline to the nanosecond (no tick), retried when interrupted.
///
/// Not thread-safe: the one thread that waits owns it. Allocates its descriptor table once.
package struct SocketPoller {
    private var descriptors: [pollfd]

    /// A poller over `descriptors` (readability).
    package init(descriptors: [Int32]) {
        self.descriptors = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    }

    /// Waits until a descriptor is readable (or in error) or `timeout` has passed (`nil`: no limit; zero or less:
    /// just looks). Afterwards ``isReady(_:)`` says which are.
    package mutating func wait(timeout: Duration?) throws(SocketError) {
        for index in descriptors.indices { descriptors[index].revents = 0 }
        var spec = timespec()
        if let timeout {
            let (seconds, attoseconds) = max(timeout, .zero).components
            spec = timespec(tv_sec: Int(clamping: seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        }
        let count = descriptors.count
        while true {
            let ready = descriptors.withUnsafeMutableBufferPointer { table in
                timeout == nil
                    ? clinuxio_ppoll(table.baseAddress, nfds_t(count), nil)
                    : clinuxio_ppoll(table.baseAddress, nfds_t(count), &spec)
            }
            if ready >= 0 { return }
            guard errno == EINTR else { throw .systemCall(name: "ppoll", errno: Errno(rawValue: errno)) }
        }
    }

    /// Whether the descriptor at `index` (in the order given) was readable, or in error, after the last wait.
    package func isReady(_ index: Int) -> Bool {
        descriptors.indices.contains(index) && descriptors[index].revents != 0
    }
}
