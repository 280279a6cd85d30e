#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import SystemPackage

/// A bound, listening TCP socket, opened for a server framework to adopt (SwiftNIO's `ServerBootstrap.bind(_:)`).
///
/// ## Why not the framework's own bind
/// The descriptor is opened with `SOCK_CLOEXEC`: a child process the app starts (`posix_spawn`, `Process`) does not
/// inherit it, so the port is free again as soon as the server closes it. SwiftNIO opens its listening sockets without
/// close-on-exec, so a child started while the preview ran kept its port bound after the preview stopped.
///
/// ## Contract
/// Non-blocking, `SO_REUSEADDR` (a port left in TIME_WAIT by a stopped server binds again at once), IPv6 sockets
/// IPv6-only. The caller owns the descriptor: it hands it over to exactly one owner, which closes it.
///
/// ## Threading
/// Stateless; callable from any thread. `socket`, `bind` and `listen` do not block.
package enum ListeningSocket {
    /// Opens a TCP socket bound to `address` (port 0: an ephemeral one) listening with `backlog`; returns the
    /// descriptor and the bound address (with the real port).
    package static func open(
        bindingTo address: SocketAddress, backlog: Int32
    ) throws(SocketError) -> (descriptor: Int32, address: SocketAddress) {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let descriptor = socket(domain, type, 0)
        guard descriptor >= 0 else { throw .systemCall(name: "socket", errno: Errno(rawValue: errno)) }
        func fail(_ name: String) -> SocketError {
            let code = errno
            Glibc.close(descriptor)
            return code == EADDRINUSE ? .portInUse(address) : .systemCall(name: name, errno: Errno(rawValue: code))
        }
        var on: Int32 = 1
        guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw fail("setsockopt(SO_REUSEADDR)")
        }
        if address.family == .ipv6,
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size)) != 0
        {
            throw fail("setsockopt(IPV6_V6ONLY)")
        }
        var storage = sockaddr_storage()
        let length = address.write(to: &storage)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw fail("bind") }
        guard listen(descriptor, backlog) == 0 else { throw fail("listen") }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &localLength) }
        }
        guard named == 0, let resolved = SocketAddress(local) else { throw fail("getsockname") }
        return (descriptor, resolved)
    }
}
