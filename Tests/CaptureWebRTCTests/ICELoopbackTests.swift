import CaptureICE
import CaptureNet
import CaptureWebRTC
import Testing

/// Two agents on real UDP sockets on the loopback interface, driven from one thread as a transport would: STUN
/// datagrams (told by RFC 7983's first byte) to the agent, its timers when due, its transmissions out.
@Suite struct ICELoopbackTests {
    @Test(.timeLimit(.minutes(1)))
    func twoAgentsConnectOverLoopbackUDP() throws {
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
                    #expect(disposition == .answered || disposition == .response || disposition == .dropped)
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
        #expect(a.state == .connected)
        #expect(b.state == .connected)
        for agent in [a, b] {
            let drops = dropped[ObjectIdentifier(agent), default: 0]
            #expect(drops <= agent.statistics.retransmissions, "\(drops) responses dropped: \(agent.statistics)")
        }
        #expect(a.selectedPair?.remote.address == socketB.localAddress)
        #expect(b.selectedPair?.remote.address == socketA.localAddress)
        #expect(a.statistics.lastRoundTrip.map { $0 < .seconds(1) } == true)
    }
}
