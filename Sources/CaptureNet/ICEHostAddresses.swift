#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The addresses of this machine's interfaces, for host candidates (RFC 8445 §5.1.1.1).
package enum ICEHostAddresses {
    /// The addresses (port 0: give each the socket's port with `withPort`) of interfaces that are up: IPv4 and
    /// IPv6, without link-local IPv6 (fe80::/10, which needs a scope ID no candidate carries) and, unless
    /// `includeLoopback`, without loopback. In `getifaddrs` order, duplicates removed; empty if it fails.
    package static func current(includeLoopback: Bool = false) -> [SocketAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var result: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            let flags = entry.pointee.ifa_flags
            guard flags & UInt32(IFF_UP) != 0, let raw = entry.pointee.ifa_addr else { continue }
            if !includeLoopback && flags & UInt32(IFF_LOOPBACK) != 0 { continue }
            let address: SocketAddress?
            switch Int32(raw.pointee.sa_family) {
            case AF_INET:
                let v4 = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in.self)
                address = withUnsafeBytes(of: v4.sin_addr) { SocketAddress(networkBytes: Array($0), port: 0) }
            case AF_INET6:
                let v6 = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in6.self)
                let bytes = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
                if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { continue }
                address = SocketAddress(networkBytes: bytes, port: 0)
            default:
                address = nil
            }
            if let address, !result.contains(address) { result.append(address) }
        }
        return result
    }
}
