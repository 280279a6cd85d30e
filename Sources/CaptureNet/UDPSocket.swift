#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import CaptureCore
internal import SystemPackage
internal import CLinuxIO

/// A UDP socket (IPv4 or IPv6) for RTP and RTCP.
///
/// Sending never throws on transient errors: `ECONNREFUSED` (an earlier datagram met a closed port), `ENOBUFS` and
/// `EAGAIN` are counted in ``statistics`` and ``send(_:to:)`` returns `false`; a media stream keeps going. Sending
/// and receiving allocate nothing. Receiving blocks in `poll` up to a timeout.
///
/// Linux reports an ICMP error (port or host unreachable) on an unconnected UDP socket only with `IP_RECVERR`
/// (`IPV6_RECVERR`), which every socket here sets: a send to an address no one listens on is then refused and
/// counted whether or not the socket is connected. The kernel also queues each such error on the socket's error
/// queue, which is drained (and counted as `UDPSocketStatistics/icmpErrors`) by the next failed send and by
/// ``receive(into:timeout:)``, so it never holds receive-buffer space or wakes `poll` in a loop.
///
/// Thread-safe: one thread may send while another receives; ``close()`` may be called from any thread and is
/// idempotent. The descriptor is only used under the lock (`sendto`/`recvfrom` are non-blocking there), so it is
/// never used after being closed; only `poll` runs outside it, and a close during `poll` makes the next step
/// report `SocketError/closed`.
package final class UDPSocket: Sendable {
    private struct State {
        var descriptor: Int32
        var statistics = UDPSocketStatistics()
    }

    /// The address the socket is bound to (with the real port when bound to port 0).
    package let localAddress: SocketAddress
    private let state: Locked<State>
    /// The descriptor, for `poll` only (see the type's discussion): a driver waits on it in `SocketPoller` and
    /// then calls ``receiveIfReady(into:)``.
    package let pollDescriptor: Int32

    /// The socket buffer size requested with `SO_RCVBUF`/`SO_SNDBUF` (the kernel caps it at its `rmem_max`/
    /// `wmem_max`).
    package static let requestedBufferSize: Int32 = 4 << 20

    /// Opens a socket bound to `address` (port 0: an ephemeral port, see ``localAddress``).
    package init(bindingTo address: SocketAddress) throws(SocketError) {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let descriptor = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .systemCall(name: "socket", errno: Errno(rawValue: errno)) }
        var size = Self.requestedBufferSize
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var on: Int32 = 1
        if address.family == .ipv6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_RECVERR, &on, socklen_t(MemoryLayout<Int32>.size))
        } else {
            _ = setsockopt(descriptor, Int32(IPPROTO_IP), IP_RECVERR, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        var storage = sockaddr_storage()
        let length = address.write(to: &storage)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(descriptor)
            if code == EADDRINUSE { throw .portInUse(address) }
            throw .systemCall(name: "bind", errno: Errno(rawValue: code))
        }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &localLength) }
        }
        guard named == 0, let resolved = SocketAddress(local) else {
            let code = errno
            Glibc.close(descriptor)
            throw .systemCall(name: "getsockname", errno: Errno(rawValue: code))
        }
        localAddress = resolved
        pollDescriptor = descriptor
        state = Locked(State(descriptor: descriptor))
    }

    deinit {
        close()
    }

    /// What has been sent and received so far.
    package var statistics: UDPSocketStatistics { state.withLock { $0.statistics } }

    /// Connects the socket to `peer`: ``send(_:to:)`` without an address goes there, and only its datagrams are
    /// received. Also makes the kernel report `ECONNREFUSED` for a closed peer port.
    package func connect(to peer: SocketAddress) throws(SocketError) {
        var storage = sockaddr_storage()
        let length = peer.write(to: &storage)
        let result: Result<Void, SocketError> = state.withLock { state in
            guard state.descriptor >= 0 else { return .failure(.closed) }
            let status = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(state.descriptor, $0, length) }
            }
            guard status == 0 else { return .failure(.systemCall(name: "connect", errno: Errno(rawValue: errno))) }
            return .success(())
        }
        try result.get()
    }

    /// Sends one datagram to `peer` (or to the connected peer when `nil`). Returns whether it was sent; transient
    /// failures are counted in ``statistics``, never thrown. Allocates nothing.
    @discardableResult
    package func send(_ datagram: UnsafeRawBufferPointer, to peer: SocketAddress? = nil) -> Bool {
        var storage = sockaddr_storage()
        let length = peer?.write(to: &storage) ?? 0
        return state.withLock { state in
            guard state.descriptor >= 0 else {
                state.statistics.otherSendErrors += 1
                state.statistics.lastSendErrno = EBADF
                return false
            }
            let sent: Int
            if peer == nil {
                sent = Glibc.send(state.descriptor, datagram.baseAddress, datagram.count, Int32(MSG_DONTWAIT))
            } else {
                sent = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(state.descriptor, datagram.baseAddress, datagram.count, Int32(MSG_DONTWAIT), $0, length)
                    }
                }
            }
            guard sent < 0 else {
                state.statistics.datagramsSent += 1
                state.statistics.bytesSent += sent
                return true
            }
            let code = errno
            Self.drainErrorQueue(&state)
            switch code {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH: state.statistics.connectionRefused += 1
            case ENOBUFS: state.statistics.noBufferSpace += 1
            case EAGAIN, EWOULDBLOCK: state.statistics.wouldBlock += 1
            default: state.statistics.otherSendErrors += 1
            }
            state.statistics.lastSendErrno = code
            return false
        }
    }

    /// Waits up to `timeout` for a datagram and copies it into `buffer`. Returns its length (at most
    /// `buffer.count`; longer datagrams are truncated and counted) and its source, or `nil` on timeout.
    package func receive(
        into buffer: UnsafeMutableRawBufferPointer, timeout: Duration
    ) throws(SocketError) -> (count: Int, source: SocketAddress)? {
        let (seconds, attoseconds) = timeout.components
        // Clamped to poll's range without overflowing, whatever the caller passes.
        let clampedSeconds = max(0, min(seconds, Int64(Int32.max) / 1000))
        let milliseconds = min(Int64(Int32.max), clampedSeconds * 1000 + max(0, attoseconds) / 1_000_000_000_000_000)
        var descriptor = pollfd(fd: pollDescriptor, events: Int16(POLLIN), revents: 0)
        while true {
            guard state.withLock({ $0.descriptor >= 0 }) else { throw .closed }
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready == 0 { return nil }
            if ready < 0 {
                if errno == EINTR { continue }
                throw .systemCall(name: "poll", errno: Errno(rawValue: errno))
            }
            if let received = try receiveNow(into: buffer) { return received }
            // A spurious wakeup (or an error queued for a failed send, now consumed): poll again.
        }
    }

    /// Takes one datagram if one is waiting, without blocking (a driver calls it after `SocketPoller` said the
    /// socket is readable, until it returns `nil`): its length and source, as ``receive(into:timeout:)``.
    package func receiveIfReady(
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(SocketError) -> (count: Int, source: SocketAddress)? {
        try receiveNow(into: buffer)
    }

    /// One non-blocking `recvfrom` under the lock; `nil` when nothing was pending.
    private func receiveNow(
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(SocketError) -> (count: Int, source: SocketAddress)? {
        let result: Result<(count: Int, source: SocketAddress)?, SocketError> = state.withLock { state in
            guard state.descriptor >= 0 else { return .failure(.closed) }
            var source = sockaddr_storage()
            var sourceLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = withUnsafeMutablePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(
                        state.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC), $0,
                        &sourceLength)
                }
            }
            guard count >= 0 else {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK || code == EINTR || code == ECONNREFUSED
                    || code == EHOSTUNREACH || code == ENETUNREACH
                {
                    // Woken with no datagram: an ICMP error for an earlier send (IP_RECVERR) may be queued; take it
                    // off the error queue, or poll would keep reporting POLLERR.
                    Self.drainErrorQueue(&state)
                    return .success(nil)
                }
                return .failure(.systemCall(name: "recvfrom", errno: Errno(rawValue: code)))
            }
            if count > buffer.count { state.statistics.datagramsTruncated += 1 }
            let copied = min(count, buffer.count)
            state.statistics.datagramsReceived += 1
            state.statistics.bytesReceived += copied
            guard let address = SocketAddress(source) else { return .success(nil) }
            return .success((copied, address))
        }
        return try result.get()
    }

    /// Takes every pending ICMP error report off the socket's error queue (`recvmsg` with `MSG_ERRQUEUE`, no data
    /// copied), counting them. Allocates nothing. At most 256 a call, so a flood cannot hold the lock for long.
    private static func drainErrorQueue(_ state: inout State) {
        var message = msghdr()
        for _ in 0..<256 {
            let received = recvmsg(state.descriptor, &message, Int32(MSG_ERRQUEUE) | Int32(MSG_DONTWAIT))
            guard received >= 0 else { return }
            state.statistics.icmpErrors += 1
        }
    }

    /// Closes the socket. Idempotent; later sends return `false` and receives throw `SocketError/closed`.
    package func close() {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            Glibc.close(state.descriptor)
            state.descriptor = -1
        }
    }
}
