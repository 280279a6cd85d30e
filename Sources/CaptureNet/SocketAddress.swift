#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why a string is not a socket address.
public enum SocketAddressError: Error, Sendable, Hashable, Codable {
    /// The string is not `HOST:PORT` or `[IPV6]:PORT`.
    case malformed(String)
    /// The host is neither a numeric IPv4/IPv6 address nor `localhost`.
    case invalidHost(String)
    /// The port is not a number in 0...65535.
    case invalidPort(String)
}

/// An IPv4 or IPv6 address and a UDP port, without name resolution.
///
/// Parsed from `"HOST:PORT"` or `"[IPV6]:PORT"` where HOST is a numeric address or `localhost` (127.0.0.1). Encoded
/// (`Codable`) as that string.
public struct SocketAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// An address family.
    public enum Family: Sendable, Hashable, Codable {
        /// IPv4.
        case ipv4
        /// IPv6.
        case ipv6
    }

    /// The address family.
    public let family: Family
    /// The port.
    public let port: UInt16
    /// The address bytes in network order: IPv4 in the low 4 bytes of `low`'s big-endian form, IPv6 in both words.
    private let high: UInt64
    private let low: UInt64

    /// Parses `"HOST:PORT"` or `"[IPV6]:PORT"`.
    public init(_ string: String) throws(SocketAddressError) {
        let host: Substring
        let portText: Substring
        if string.hasPrefix("[") {
            guard let close = string.firstIndex(of: "]"), string[close...].hasPrefix("]:") else {
                throw .malformed(string)
            }
            host = string[string.index(after: string.startIndex)..<close]
            portText = string[string.index(close, offsetBy: 2)...]
            guard host.contains(":") else { throw .invalidHost(String(host)) }
        } else {
            guard let colon = string.lastIndex(of: ":"), !string[..<colon].contains(":") else {
                throw .malformed(string)
            }
            host = string[..<colon]
            portText = string[string.index(after: colon)...]
        }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), portText.count <= 5,
            let port = UInt16(portText)
        else { throw .invalidPort(String(portText)) }
        try self.init(host: String(host), port: port)
    }

    /// An address from a numeric host (or `localhost`) and a port.
    public init(host: String, port: UInt16) throws(SocketAddressError) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            let words = withUnsafeBytes(of: &v4) { Self.words(networkOrder: $0) }
            self.init(family: .ipv4, port: port, high: 0, low: words.low)
        } else if inet_pton(AF_INET6, name, &v6) == 1 {
            let words = withUnsafeBytes(of: &v6) { Self.words(networkOrder: $0) }
            self.init(family: .ipv6, port: port, high: words.high, low: words.low)
        } else {
            throw .invalidHost(host)
        }
    }

    /// Packs up to 16 network-order bytes into two words; the last 8 (or fewer) go to `low`.
    private static func words(networkOrder bytes: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < bytes.count - 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        return (high, low)
    }

    /// The IPv4 loopback address 127.0.0.1 with `port`.
    public static func loopbackIPv4(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, port: port, high: 0, low: 0x7F00_0001)
    }

    /// The IPv6 loopback address ::1 with `port`.
    public static func loopbackIPv6(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, port: port, high: 0, low: 1)
    }

    /// The IPv4 wildcard address 0.0.0.0 with `port` (for binding).
    public static func anyIPv4(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv4, port: port, high: 0, low: 0)
    }

    /// The IPv6 wildcard address :: with `port` (for binding).
    public static func anyIPv6(port: UInt16) -> SocketAddress {
        SocketAddress(family: .ipv6, port: port, high: 0, low: 0)
    }

    private init(family: Family, port: UInt16, high: UInt64, low: UInt64) {
        self.family = family
        self.port = port
        self.high = high
        self.low = low
    }

    /// The same host with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(family: family, port: port, high: high, low: low)
    }

    /// The host as text: `"127.0.0.1"` or `"::1"`.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let capacity = socklen_t(text.count)
        let converted: Bool
        switch family {
        case .ipv4:
            var address = in_addr()
            address.s_addr = UInt32(truncatingIfNeeded: low).bigEndian
            converted = inet_ntop(AF_INET, &address, &text, capacity) != nil
        case .ipv6:
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { bytes in
                bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            converted = inet_ntop(AF_INET6, &address, &text, capacity) != nil
        }
        guard converted else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `"127.0.0.1:5004"` or `"[::1]:5004"`.
    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// Decodes the address from its string form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a socket address: \(text) (\(error))")
        }
    }

    /// Encodes the address as its string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Writes the address as a `sockaddr_in` or `sockaddr_in6` into `storage`; returns its length. No allocation.
    func write(to storage: inout sockaddr_storage) -> socklen_t {
        storage = sockaddr_storage()
        return withUnsafeMutableBytes(of: &storage) { raw in
            switch family {
            case .ipv4:
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = UInt32(truncatingIfNeeded: low).bigEndian
                raw.storeBytes(of: address, as: sockaddr_in.self)
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            case .ipv6:
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                withUnsafeMutableBytes(of: &address.sin6_addr) { bytes in
                    bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                    bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
                }
                raw.storeBytes(of: address, as: sockaddr_in6.self)
                return socklen_t(MemoryLayout<sockaddr_in6>.size)
            }
        }
    }

    /// Reads a `sockaddr_in` or `sockaddr_in6` from `storage`; `nil` for other families. No allocation.
    init?(_ storage: sockaddr_storage) {
        let family = Int32(storage.ss_family)
        let result: SocketAddress? = withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET:
                let address = raw.loadUnaligned(as: sockaddr_in.self)
                return SocketAddress(
                    family: .ipv4, port: UInt16(bigEndian: address.sin_port), high: 0,
                    low: UInt64(UInt32(bigEndian: address.sin_addr.s_addr)))
            case AF_INET6:
                let address = raw.loadUnaligned(as: sockaddr_in6.self)
                return withUnsafeBytes(of: address.sin6_addr) { bytes in
                    SocketAddress(
                        family: .ipv6, port: UInt16(bigEndian: address.sin6_port),
                        high: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                        low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                }
            default:
                return nil
            }
        }
        guard let result else { return nil }
        self = result
    }
}
