#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns a STUN server's host name into addresses (`getaddrinfo`, UDP), for server-reflexive gathering.
package enum HostResolver {
    /// The addresses of `host` (a name or a numeric address) with `port`, IPv4 first; empty when it does not resolve.
    package static func resolve(host: String, port: UInt16) -> [SocketAddress] {
        let trimmed = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(trimmed, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            defer { entry = current.pointee.ai_next }
            guard let address = current.pointee.ai_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            let family = current.pointee.ai_family
            let converted: UnsafePointer<CChar>? =
                if family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                        withUnsafePointer(to: inet.pointee.sin_addr) {
                            inet_ntop(AF_INET, $0, &text, socklen_t(text.count))
                        }
                    }
                } else if family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
                        withUnsafePointer(to: inet6.pointee.sin6_addr) {
                            inet_ntop(AF_INET6, $0, &text, socklen_t(text.count))
                        }
                    }
                } else { nil }
            guard converted != nil else { continue }
            let numeric = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let form = family == AF_INET6 ? "[\(numeric)]:\(port)" : "\(numeric):\(port)"
            if let parsed = try? SocketAddress(form), !addresses.contains(parsed) { addresses.append(parsed) }
        }
        return addresses.filter { $0.family == .ipv4 } + addresses.filter { $0.family == .ipv6 }
    }
}
