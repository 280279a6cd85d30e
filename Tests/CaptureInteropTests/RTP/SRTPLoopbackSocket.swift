import CaptureCore
import CaptureRTP
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A plain loopback UDP socket for interop tests (bound on 127.0.0.1), closed when released.
final class SRTPLoopbackSocket: @unchecked Sendable {
    // @unchecked: `descriptor` is immutable after init and only used by one receiving thread at a time (the test
    // calls `collect` once and awaits it); closing happens in deinit, after every use.
    let descriptor: Int32
    let port: UInt16

    struct SocketError: Error, CustomStringConvertible {
        let call: String
        let errno: Int32
        var description: String { "\(call) failed: errno \(errno)" }
    }

    init(port requested: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requested.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw SocketError(call: "bind", errno: error)
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    /// Two sockets on consecutive ports (RTP, RTCP), as `-f rtp rtp://127.0.0.1:port` expects.
    static func pair() throws -> (SRTPLoopbackSocket, SRTPLoopbackSocket) {
        for _ in 0..<50 {
            let rtp = try SRTPLoopbackSocket()
            guard rtp.port < UInt16.max, let rtcp = try? SRTPLoopbackSocket(port: rtp.port + 1) else { continue }
            return (rtp, rtcp)
        }
        throw SocketError(call: "bind (consecutive ports)", errno: EADDRINUSE)
    }

    /// Receives datagrams on a dedicated thread until `done` is set and the socket has been quiet for 0.5 s, or
    /// `limit` seconds pass.
    func collect(until done: Locked<Bool>, limit: Double = 30) async -> [[UInt8]] {
        await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                var datagrams: [[UInt8]] = []
                var buffer = [UInt8](repeating: 0, count: 2048)
                let start = Date()
                var quietSince = Date()
                while Date().timeIntervalSince(start) < limit {
                    let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                    if count > 0 {
                        datagrams.append(Array(buffer[..<count]))
                        quietSince = Date()
                    } else if done.withLock({ $0 }) && Date().timeIntervalSince(quietSince) > 0.5 {
                        break
                    }
                }
                continuation.resume(returning: datagrams)
            }
            thread.start()
        }
    }
}
