#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension SocketAddress {
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    package var networkBytes: [UInt8] {
        switch family {
        case .ipv4:
            var address = in_addr()
            guard inet_pton(AF_INET, host, &address) == 1 else { return [0, 0, 0, 0] }
            return withUnsafeBytes(of: &address) { Array($0) }
        case .ipv6:
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { return [UInt8](repeating: 0, count: 16) }
            return withUnsafeBytes(of: &address) { Array($0) }
        }
    }

    /// An address from 4 (IPv4) or 16 (IPv6) network-order bytes; `nil` for any other count.
    package init?(networkBytes bytes: [UInt8], port: UInt16) {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted: Bool
        switch bytes.count {
        case 4:
            var address = in_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            converted = inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil
        case 16:
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            converted = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil
        default:
            return nil
        }
        guard converted else { return nil }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let address = try? SocketAddress(host: host, port: port) else { return nil }
        self = address
    }
}
