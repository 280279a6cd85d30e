#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import SystemPackage
internal import CLinuxIO

/// A self-pipe one thread waits on (its read end, in `SocketPoller`) and any thread signals: how a driver thread
/// blocked in `ppoll` is woken for a command without a timer tick. (Swift's Glibc module does not export
/// `eventfd(2)`; a non-blocking pipe does the same job with calls it does.)
///
/// Thread-safe: ``signal()`` may be called from any thread, ``reset()`` by the waiting thread. `write` and `read` of
/// one byte on a pipe are atomic in the kernel. The descriptors are closed in `deinit`, when no thread can signal any
/// more: closing them earlier could let a late ``signal()`` write into whatever file reused the number.
package final class EventNotifier: Sendable {
    /// The read end, for `SocketPoller`.
    package let descriptor: Int32
    private let writeDescriptor: Int32

    /// Creates the pipe (both ends non-blocking and close-on-exec).
    package init() throws(SocketError) {
        var ends: [Int32] = [-1, -1]
        guard clinuxio_pipe2(&ends, O_NONBLOCK | O_CLOEXEC) == 0 else {
            throw .systemCall(name: "pipe2", errno: Errno(rawValue: errno))
        }
        descriptor = ends[0]
        writeDescriptor = ends[1]
    }

    /// Wakes the waiting thread (one byte; a full pipe already holds a wake-up, so EAGAIN is fine; EINTR retried).
    package func signal() {
        var one: UInt8 = 1
        while write(writeDescriptor, &one, 1) < 0 && errno == EINTR {}
    }

    /// Takes every pending signal; a no-op when there is none.
    package func reset() {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while true {
            let count = withUnsafeMutableBytes(of: &bytes) { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 32 { return }
        }
    }

    deinit {
        _ = Glibc.close(descriptor)
        _ = Glibc.close(writeDescriptor)
    }
}
