package import SystemPackage

/// Why a `UDPSocket` operation failed.
package enum UDPSocketError: Error, Sendable, Hashable {
    /// Another socket is bound to the address (`EADDRINUSE`).
    case portInUse(SocketAddress)
    /// A system call failed.
    case systemCall(name: String, errno: Errno)
    /// The socket was closed.
    case closed
}
