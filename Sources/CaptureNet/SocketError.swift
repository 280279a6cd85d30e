package import SystemPackage

/// Why a socket operation (`UDPSocket`, `ListeningSocket`) failed.
package enum SocketError: Error, Sendable, Hashable {
    /// Another socket is bound to the address (`EADDRINUSE`).
    case portInUse(SocketAddress)
    /// A system call failed.
    case systemCall(name: String, errno: Errno)
    /// The socket was closed.
    case closed
}

extension SocketError {
    /// The failed call's name and `errno` for `systemCall`, for modules that report them without importing
    /// SystemPackage.
    package var systemCall: (name: String, errno: Int32)? {
        if case .systemCall(let name, let errno) = self { return (name, errno.rawValue) }
        return nil
    }
}
