import CaptureCore
import CaptureICE
import CaptureNet
import CaptureWebRTC
import Testing

/// Two agents on real UDP sockets on the loopback interface, driven from one thread as a transport would: STUN
/// datagrams (told by RFC 7983's first byte) to the agent, its timers when due, its transmissions out. That thread is
/// one of ``BlockingExecutor``'s, not the cooperative pool's: the loop waits on the sockets.
@Suite struct ICELoopbackTests {
    /// What the loop saw, checked by the test once it is back on its task.
    private struct Outcome: Sendable {
        var states: (a: ICEState, b: ICEState)
        var unexpected: [String] = []
        var drops: [(dropped: Int, retransmissions: Int, statistics: String)] = []
        var selected: (a: SocketAddress?, b: SocketAddress?)
        var addresses: (a: SocketAddress, b: SocketAddress)
        var lastRoundTrip: Duration?
    }

    @Test(.timeLimit(.minutes(1)))
    func twoAgentsConnectOverLoopbackUDP() async throws {
        let outcome = try await BlockingExecutor.shared.run { () throws -> Outcome in try Self.connectOnThisThread() }
        #expect(outcome.unexpected.isEmpty, "\(outcome.unexpected)")
        #expect(outcome.states.a == .connected)
        #expect(outcome.states.b == .connected)
        for drop in outcome.drops {
            #expect(drop.dropped <= drop.retransmissions, "\(drop.dropped) responses dropped: \(drop.statistics)")
        }
        #expect(outcome.selected.a == outcome.addresses.b)
        #expect(outcome.selected.b == outcome.addresses.a)
        #expect(outcome.lastRoundTrip.map { $0 < .seconds(1) } == true)
    }

    private static func connectOnThisThread() throws -> Outcome {
        let socketA = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        let socketB = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer {
            socketA.close()
            socketB.close()
        }
        let a = ICEAgent(configuration: .init(role: .controlling, hostAddresses: [socketA.localAddress]))
        let b = ICEAgent(configuration: .init(role: .controlled, hostAddresses: [socketB.localAddress]))
        a.setRemote(credentials: b.configuration.localCredentials)
        b.setRemote(credentials: a.configuration.localCredentials)
        // Signalled as SDP text, as the transport will.
        for candidate in b.localCandidates {
            a.addRemoteCandidate(try ICECandidate(parsing: "a=" + candidate.sdpAttributeValue))
        }
        for candidate in a.localCandidates {
            b.addRemoteCandidate(try ICECandidate(parsing: "a=" + candidate.sdpAttributeValue))
        }

        let clock = ContinuousClock()
        let start = clock.now
        func nowNs() -> UInt64 {
            let (seconds, attoseconds) = (clock.now - start).components
            return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        }
        var buffer = [UInt8](repeating: 0, count: 1500)
        // Responses an agent dropped as answering no pending request: a second answer to a request it retransmitted
        // (a starved sanitized run delays the peer past the retransmission timeout), so at most one per retransmission.
        var dropped: [ObjectIdentifier: Int] = [:]
        var unexpected: [String] = []
        func step(_ agent: ICEAgent, _ socket: UDPSocket) throws {
            agent.handleTimeout(nowNs: nowNs())
            while let (bytes, destination) = agent.pollTransmit() {
                bytes.withUnsafeBytes { _ = socket.send($0, to: destination) }
            }
            while let received = try buffer.withUnsafeMutableBytes({
                try socket.receive(into: $0, timeout: .milliseconds(1))
            }) {
                buffer.withUnsafeBytes { raw in
                    let datagram = UnsafeRawBufferPointer(rebasing: raw[0..<received.count])
                    guard DatagramKind(classifying: datagram) == .stun else { return }
                    let disposition = agent.handle(datagram: datagram, from: received.source, nowNs: nowNs())
                    if disposition == .dropped { dropped[ObjectIdentifier(agent), default: 0] += 1 }
                    if disposition != .answered && disposition != .response && disposition != .dropped {
                        unexpected.append("\(disposition)")
                    }
                    while let (bytes, destination) = agent.pollTransmit() {
                        bytes.withUnsafeBytes { _ = socket.send($0, to: destination) }
                    }
                }
            }
        }
        while nowNs() < 5_000_000_000 && !(a.state == .connected && b.state == .connected) {
            try step(a, socketA)
            try step(b, socketB)
        }
        return Outcome(
            states: (a.state, b.state), unexpected: unexpected,
            drops: [a, b].map { agent in
                (dropped[ObjectIdentifier(agent), default: 0], agent.statistics.retransmissions, "\(agent.statistics)")
            },
            selected: (a.selectedPair?.remote.address, b.selectedPair?.remote.address),
            addresses: (socketA.localAddress, socketB.localAddress), lastRoundTrip: a.statistics.lastRoundTrip)
    }
}
