/// What a `UDPSocket` has sent, received and failed to send.
package struct UDPSocketStatistics: Sendable, Hashable, Codable {
    /// Datagrams sent.
    package var datagramsSent: Int = 0
    /// Bytes sent.
    package var bytesSent: Int = 0
    /// Datagrams received.
    package var datagramsReceived: Int = 0
    /// Bytes received.
    package var bytesReceived: Int = 0
    /// Received datagrams longer than the caller's buffer (their tail was lost).
    package var datagramsTruncated: Int = 0
    /// Sends refused because the peer's port is closed or its host unreachable (`ECONNREFUSED`, `EHOSTUNREACH`,
    /// `ENETUNREACH`, reported after an ICMP error), connected or not.
    package var connectionRefused: Int = 0
    /// ICMP error reports (port or host unreachable) the kernel queued for earlier sends, taken off the socket's
    /// error queue. Each send that met a closed port is counted here once.
    package var icmpErrors: Int = 0
    /// Sends dropped for lack of kernel buffer space (`ENOBUFS`).
    package var noBufferSpace: Int = 0
    /// Sends dropped because the socket buffer was full (`EAGAIN`).
    package var wouldBlock: Int = 0
    /// Sends that failed with another error.
    package var otherSendErrors: Int = 0
    /// The errno of the last failed send.
    package var lastSendErrno: Int32?

    /// Creates empty statistics.
    package init() {}
}
