import Foundation
import SystemPackage
import Testing

@testable import CaptureNet

@Suite("UDP transport")
struct UDPSocketTests {
    @Test(
        "socket addresses parse and print",
        arguments: [
            ("127.0.0.1:5004", "127.0.0.1:5004"), ("localhost:9", "127.0.0.1:9"), ("[::1]:6000", "[::1]:6000"),
            ("[fe80::1:2]:0", "[fe80::1:2]:0"), ("0.0.0.0:65535", "0.0.0.0:65535"),
        ])
    func parse(input: String, printed: String) throws {
        let address = try SocketAddress(input)
        #expect(address.description == printed)
        #expect(try SocketAddress(address.description) == address)
        let json = try JSONEncoder().encode(address)
        #expect(try JSONDecoder().decode(SocketAddress.self, from: json) == address)
    }

    @Test(
        "malformed addresses give typed errors",
        arguments: [
            "", "127.0.0.1", "127.0.0.1:", ":5004", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:5a", "::1:5004",
            "[::1]5004", "[::1:5004", "[127.0.0.1]:5", "example.com:80", "256.1.1.1:80", "1.2.3.4:+80",
        ])
    func malformed(input: String) {
        #expect(throws: SocketAddressError.self) { try SocketAddress(input) }
    }

    private func roundTrip(bind: SocketAddress) throws {
        let receiver = try UDPSocket(bindingTo: bind)
        defer { receiver.close() }
        let sender = try UDPSocket(bindingTo: bind)
        defer { sender.close() }
        #expect(receiver.localAddress.port != 0)
        let payload: [UInt8] = Array(0..<200).map { UInt8($0) }
        let sent = payload.withUnsafeBytes { sender.send($0, to: receiver.localAddress) }
        #expect(sent)
        var buffer = [UInt8](repeating: 0, count: 2048)
        let received = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeout: .seconds(5)) }
        let (count, source) = try #require(received)
        #expect(Array(buffer[0..<count]) == payload)
        #expect(source == sender.localAddress)
        #expect(sender.statistics.datagramsSent == 1 && sender.statistics.bytesSent == 200)
        #expect(receiver.statistics.datagramsReceived == 1)
        // Nothing more: the timeout returns nil.
        let none = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeout: .milliseconds(20)) }
        #expect(none == nil)
        // Out-of-range timeouts are clamped, not trapped on.
        let negative = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeout: .seconds(-5)) }
        #expect(negative == nil)
    }

    @Test("IPv4 loopback send and receive")
    func ipv4() throws {
        try roundTrip(bind: .loopbackIPv4(port: 0))
    }

    @Test(
        "IPv6 loopback send and receive",
        .enabled(if: (try? UDPSocket(bindingTo: .loopbackIPv6(port: 0))) != nil, "IPv6 loopback unavailable"))
    func ipv6() throws {
        try roundTrip(bind: .loopbackIPv6(port: 0))
    }

    @Test("binding a port in use gives a typed error naming it")
    func portInUse() throws {
        let first = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { first.close() }
        #expect(throws: SocketError.portInUse(first.localAddress)) {
            try UDPSocket(bindingTo: first.localAddress)
        }
    }

    @Test("sending to a closed port is counted as ECONNREFUSED, not thrown")
    func connectionRefused() async throws {
        // Find a free port, then close it.
        let probe = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let closedPort = probe.localAddress
        probe.close()
        let sender = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { sender.close() }
        try sender.connect(to: closedPort)
        let datagram: [UInt8] = [1, 2, 3]
        var results: [Bool] = []
        for _ in 0..<5 {
            results.append(datagram.withUnsafeBytes { sender.send($0) })
            try await Task.sleep(for: .milliseconds(20))  // let the ICMP port-unreachable arrive
        }
        #expect(results.first == true)
        #expect(results.contains(false))
        #expect(sender.statistics.connectionRefused >= 1)
        #expect(sender.statistics.lastSendErrno == ECONNREFUSED)
    }

    @Test("an unconnected socket also counts sends to a closed port (IP_RECVERR), and a receiver is not woken forever")
    func connectionRefusedUnconnected() async throws {
        let probe = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let closedPort = probe.localAddress
        probe.close()
        let sender = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { sender.close() }
        let datagram: [UInt8] = [1, 2, 3]
        var refused = 0
        for _ in 0..<6 {
            if !datagram.withUnsafeBytes({ sender.send($0, to: closedPort) }) { refused += 1 }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(refused >= 1, "no send to a closed port was refused")
        #expect(sender.statistics.connectionRefused == refused)
        // The queued ICMP reports are drained by a receive, which then times out instead of spinning on POLLERR.
        var buffer = [UInt8](repeating: 0, count: 64)
        let started = ContinuousClock.now
        let received = try buffer.withUnsafeMutableBytes { try sender.receive(into: $0, timeout: .milliseconds(200)) }
        #expect(received == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        #expect(sender.statistics.icmpErrors >= 1)
        // And the socket still sends to a port that listens.
        let listener = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { listener.close() }
        #expect(datagram.withUnsafeBytes { sender.send($0, to: listener.localAddress) })
    }

    @Test("close is idempotent and later calls fail cleanly")
    func close() throws {
        let socket = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        socket.close()
        socket.close()
        let sent = [UInt8(1)].withUnsafeBytes { socket.send($0, to: .loopbackIPv4(port: 9)) }
        #expect(!sent)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(throws: SocketError.closed) {
            try buffer.withUnsafeMutableBytes { try socket.receive(into: $0, timeout: .milliseconds(10)) }
        }
    }
}
