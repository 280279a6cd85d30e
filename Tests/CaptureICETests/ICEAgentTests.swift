import CaptureICE
import CaptureNet
import Testing

/// Agents wired together in memory: every datagram an agent transmits reaches the agent (or fake STUN server) at its
/// destination, from the sender's host address of that family, unless the link is cut.
final class FakeNetwork {
    var agents: [SocketAddress: ICEAgent] = [:]
    /// Addresses whose traffic (either way) is dropped.
    var cut: Set<SocketAddress> = []
    /// A STUN server at this address answers Binding requests with this mapped address.
    var stunServer: (address: SocketAddress, mapped: SocketAddress)?
    var nowNs: UInt64 = 0
    var events: [ObjectIdentifier: [ICEEvent]] = [:]
    var delivered = 0

    func attach(_ agent: ICEAgent, at address: SocketAddress) { agents[address] = agent }

    /// Runs every agent's timers and delivers all traffic, in steps of `stepNs`, until `until` holds or `forNs` pass.
    func run(forNs duration: UInt64, stepNs: UInt64 = 5_000_000, until done: () -> Bool = { false }) {
        let end = nowNs + duration
        while nowNs < end {
            for (address, agent) in agents.sorted(by: { $0.key.description < $1.key.description }) {
                agent.handleTimeout(nowNs: nowNs)
                drain(agent, from: address)
            }
            if done() { return }
            nowNs += stepNs
        }
    }

    private func drain(_ agent: ICEAgent, from source: SocketAddress) {
        while let event = agent.pollEvent() { events[ObjectIdentifier(agent), default: []].append(event) }
        while let (bytes, destination) = agent.pollTransmit() {
            guard !cut.contains(source), !cut.contains(destination) else { continue }
            if let server = stunServer, destination == server.address {
                let request = try? STUNMessage(parsing: bytes)
                if let request {
                    let response = STUNMessage(
                        .successResponse, transactionID: request.transactionID,
                        attributes: [.xorMappedAddress(server.mapped)])
                    agent.handle(datagram: response.serialized(fingerprint: true), from: server.address, nowNs: nowNs)
                }
                continue
            }
            guard let peer = agents[destination] else { continue }
            delivered += 1
            peer.handle(datagram: bytes, from: source, nowNs: nowNs)
            drain(peer, from: destination)
        }
        while let event = agent.pollEvent() { events[ObjectIdentifier(agent), default: []].append(event) }
    }

    func events(of agent: ICEAgent) -> [ICEEvent] { events[ObjectIdentifier(agent)] ?? [] }
}

@Suite struct ICEAgentTests {
    static func address(_ text: String) -> SocketAddress {
        (try? SocketAddress(text)) ?? SocketAddress.anyIPv4(port: 0)
    }

    static func pair(
        aggressive: Bool = false, roleB: ICERole = .controlled, tieBreakers: (UInt64, UInt64) = (2, 1),
        signalA: Bool = true
    ) -> (ICEAgent, ICEAgent, FakeNetwork, SocketAddress, SocketAddress) {
        let hostA = address("10.0.0.1:5000")
        let hostB = address("10.0.0.2:6000")
        var configA = ICEAgent.Configuration(role: .controlling, tieBreaker: tieBreakers.0, hostAddresses: [hostA])
        configA.aggressiveNomination = aggressive
        let configB = ICEAgent.Configuration(role: roleB, tieBreaker: tieBreakers.1, hostAddresses: [hostB])
        let a = ICEAgent(configuration: configA)
        let b = ICEAgent(configuration: configB)
        a.setRemote(credentials: configB.localCredentials)
        b.setRemote(credentials: configA.localCredentials)
        for candidate in b.localCandidates { a.addRemoteCandidate(candidate) }
        if signalA { for candidate in a.localCandidates { b.addRemoteCandidate(candidate) } }
        let network = FakeNetwork()
        network.attach(a, at: hostA)
        network.attach(b, at: hostB)
        return (a, b, network, hostA, hostB)
    }

    @Test(arguments: [false, true])
    func controllingAndControlledConnectOnTheSamePair(aggressive: Bool) {
        let (a, b, network, hostA, hostB) = Self.pair(aggressive: aggressive)
        network.run(forNs: 5_000_000_000) { a.state == .connected && b.state == .connected }
        #expect(a.state == .connected)
        #expect(b.state == .connected)
        #expect(a.canSendMedia && b.canSendMedia)
        #expect(a.selectedPair?.remote.address == hostB)
        #expect(a.selectedPair?.local.address == hostA)
        #expect(b.selectedPair?.remote.address == hostA)
        #expect(b.selectedPair?.local.address == hostB)
        #expect(a.selectedPair?.nominated == true && b.selectedPair?.nominated == true)
        #expect(a.statistics.timeToConnected != nil)
        #expect(a.statistics.selectedPair == a.selectedPair)
        #expect(a.statistics.successes >= 1)
        #expect(a.statistics.integrityFailures == 0 && b.statistics.integrityFailures == 0)
        #expect(network.events(of: a).contains(.stateChanged(.connected)))
        #expect(network.events(of: b).contains { if case .selectedPair = $0 { true } else { false } })
    }

    /// The controlled side is not told the controlling side's candidate: it learns it as peer-reflexive from the
    /// first check, and still connects.
    @Test func peerReflexiveRemoteCandidate() {
        let (a, b, network, hostA, _) = Self.pair(signalA: false)
        network.run(forNs: 5_000_000_000) { a.state == .connected && b.state == .connected }
        #expect(b.state == .connected)
        #expect(b.remoteCandidates.first?.kind == .prflx)
        #expect(b.selectedPair?.remote.address == hostA)
        #expect(b.statistics.peerReflexiveCandidates == 1)
    }

    /// Both think they are controlling; the larger tie-breaker stays controlling, and they connect.
    @Test func roleConflictResolves() {
        let (a, b, network, _, _) = Self.pair(roleB: .controlling, tieBreakers: (1, 2))
        network.run(forNs: 10_000_000_000) { a.state == .connected && b.state == .connected }
        #expect(a.state == .connected && b.state == .connected)
        #expect(a.role == .controlled)
        #expect(b.role == .controlling)
        #expect(a.statistics.roleConflicts + b.statistics.roleConflicts >= 1)
        #expect(network.events(of: a).contains(.roleChanged(.controlled)))
    }

    /// A lite controlled peer (what the preview server will be) sends no checks; our controlling agent still
    /// connects, and the lite side selects the pair it nominated.
    @Test func controllingAgainstLite() {
        let hostA = Self.address("10.0.0.1:5000")
        let hostB = Self.address("10.0.0.2:6000")
        let a = ICEAgent(configuration: .init(role: .controlling, hostAddresses: [hostA]))
        var configB = ICEAgent.Configuration(role: .controlling, hostAddresses: [hostB])
        configB.lite = true
        let b = ICEAgent(configuration: configB)
        #expect(b.role == .controlled)
        a.setRemote(credentials: b.configuration.localCredentials)
        b.setRemote(credentials: a.configuration.localCredentials)
        for candidate in b.localCandidates { a.addRemoteCandidate(candidate) }
        let network = FakeNetwork()
        network.attach(a, at: hostA)
        network.attach(b, at: hostB)
        network.run(forNs: 5_000_000_000) { a.state == .connected && b.state == .connected }
        #expect(a.state == .connected && b.state == .connected)
        #expect(b.selectedPair?.remote.address == hostA)
        #expect(a.selectedPair?.remote.address == hostB)
        #expect(b.statistics.checksSent == 0)
        network.run(forNs: 40_000_000_000, stepNs: 100_000_000)
        #expect(b.statistics.consentRequestsSent == 0)
        #expect(b.state == .connected)
        #expect(a.state == .connected)
    }

    @Test func badIntegrityIsCountedAndNotAnswered() throws {
        let credentials = ICECredentials(ufrag: "ours", password: "0123456789abcdefghijkl")
        let agent = ICEAgent(
            configuration: .init(localCredentials: credentials, hostAddresses: [Self.address("10.0.0.1:5000")]))
        let peer = Self.address("10.0.0.9:7000")
        let request = STUNMessage(
            .request, attributes: [.username("ours:them"), .priority(1), .iceControlled(5)])
        let wrongKey = request.serialized(
            integrityKey: STUNMessageIntegrity.key(password: "not the password at all"), fingerprint: true)
        #expect(agent.handle(datagram: wrongKey, from: peer, nowNs: 0) == .rejected)
        #expect(agent.statistics.integrityFailures == 1)
        let reply = try #require(agent.pollTransmit())
        #expect(reply.destination == peer)
        let response = try STUNMessage(parsing: reply.bytes)
        #expect(response.messageClass == .errorResponse)
        #expect(response.errorCode == 401)
        #expect(agent.pollTransmit() == nil)

        var badFingerprint = request.serialized(
            integrityKey: STUNMessageIntegrity.key(password: credentials.password), fingerprint: true)
        badFingerprint[badFingerprint.count - 1] ^= 0xFF
        #expect(agent.handle(datagram: badFingerprint, from: peer, nowNs: 0) == .dropped)
        #expect(agent.statistics.integrityFailures == 2)
        #expect(agent.pollTransmit() == nil)

        let wrongUser = STUNMessage(.request, attributes: [.username("other:them")])
            .serialized(integrityKey: STUNMessageIntegrity.key(password: credentials.password), fingerprint: true)
        #expect(agent.handle(datagram: wrongUser, from: peer, nowNs: 0) == .rejected)
        #expect(agent.statistics.usernameMismatches == 1)
        #expect(try STUNMessage(parsing: try #require(agent.pollTransmit()).bytes).errorCode == 401)

        let good = request.serialized(
            integrityKey: STUNMessageIntegrity.key(password: credentials.password), fingerprint: true)
        #expect(agent.handle(datagram: good, from: peer, nowNs: 0) == .answered)
        let success = try #require(agent.pollTransmit())
        #expect(
            success.bytes.withUnsafeBytes {
                STUNMessageIntegrity.verifyIntegrity($0, key: STUNMessageIntegrity.key(password: credentials.password))
            } == .valid)
        #expect(try STUNMessage(parsing: success.bytes).mappedAddress == peer)
        #expect(agent.remoteCandidates.map(\.address) == [peer])
        #expect(agent.remoteCandidates.first?.kind == .prflx)
    }

    @Test func garbageNeverTraps() {
        let agent = ICEAgent(configuration: .init(hostAddresses: [Self.address("10.0.0.1:5000")]))
        let peer = Self.address("10.0.0.9:7000")
        #expect(agent.handle(datagram: [0x80, 0x60, 0, 1], from: peer, nowNs: 0) == .notSTUN)
        #expect(!ICEAgent.Disposition.notSTUN.isConsumed && ICEAgent.Disposition.dropped.isConsumed)
        #expect(agent.handle(datagram: [UInt8](), from: peer, nowNs: 0) == .notSTUN)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 20..<120, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            bytes[0] &= 0x01
            bytes.replaceSubrange(4..<8, with: [0x21, 0x12, 0xA4, 0x42])
            _ = agent.handle(datagram: bytes, from: peer, nowNs: 0)
        }
        let stale = STUNMessage(.successResponse).serialized(fingerprint: true)
        #expect(agent.handle(datagram: stale, from: peer, nowNs: 0) == .dropped)
    }

    /// Consent freshness: while the peer answers, consent checks keep the pair; when it goes silent, consent is lost
    /// 30 s after the last response and media must stop.
    @Test func consentLossAfterPeerStopsAnswering() {
        let (a, b, network, _, hostB) = Self.pair()
        network.run(forNs: 5_000_000_000) { a.state == .connected && b.state == .connected }
        #expect(a.state == .connected)
        network.run(forNs: 40_000_000_000, stepNs: 50_000_000)
        #expect(a.state == .connected)
        #expect(a.statistics.consentRequestsSent >= 6)
        #expect(a.statistics.consentResponsesReceived >= 6)
        let cutAt = network.nowNs
        network.cut.insert(hostB)
        // The last response came at most one consent interval (6 s) before the cut.
        network.run(forNs: 23_000_000_000, stepNs: 50_000_000)
        #expect(a.state == .connected)
        network.run(forNs: 10_000_000_000, stepNs: 50_000_000) { a.state == .disconnected }
        #expect(a.state == .disconnected)
        #expect(!a.canSendMedia)
        #expect(network.nowNs - cutAt >= 24_000_000_000)
        #expect(network.events(of: a).last == .stateChanged(.disconnected))
    }

    @Test func failsWhenNothingAnswers() {
        let a = ICEAgent(configuration: .init(hostAddresses: [Self.address("10.0.0.1:5000")]))
        a.setRemote(credentials: .random())
        a.addRemoteCandidate(
            ICECandidate(foundation: "1", priority: 100, address: Self.address("10.0.0.3:1"), kind: .host))
        a.endOfCandidates()
        let network = FakeNetwork()
        network.attach(a, at: Self.address("10.0.0.1:5000"))
        network.run(forNs: 15_000_000_000, stepNs: 10_000_000) { a.state == .failed }
        #expect(a.state == .failed)
        #expect(a.pairs.allSatisfy { $0.state == .failed })
        #expect(a.statistics.retransmissions == 6)
        #expect(network.nowNs > 9_000_000_000)
    }

    @Test func gathersServerReflexiveCandidate() {
        let host = Self.address("10.0.0.1:5000")
        let server = Self.address("198.51.100.1:3478")
        let mapped = Self.address("203.0.113.5:40000")
        let a = ICEAgent(configuration: .init(hostAddresses: [host], stunServers: [server]))
        let network = FakeNetwork()
        network.stunServer = (server, mapped)
        network.attach(a, at: host)
        network.run(forNs: 1_000_000_000) { network.events(of: a).contains(.gatheringComplete) }
        let gathered = network.events(of: a).compactMap { if case .localCandidate(let c) = $0 { c } else { nil } }
        #expect(gathered.count == 1)
        #expect(gathered.first?.kind == .srflx)
        #expect(gathered.first?.address == mapped)
        #expect(gathered.first?.relatedAddress == host)
        #expect(a.localCandidates.count == 2)
        #expect(a.statistics.serverReflexiveCandidates == 1)
        #expect(network.events(of: a).contains(.gatheringComplete))
    }

    /// A check carries what RFC 8445 §7.2.2 asks: USERNAME "remote:local", a peer-reflexive PRIORITY, our role and
    /// tie-breaker, MESSAGE-INTEGRITY keyed with the peer's password, FINGERPRINT; pairs are per address family.
    @Test func checkWireFormatAndFamilies() throws {
        let local = ICECredentials(ufrag: "ourf", password: "ourpassword0123456789ab")
        let remote = ICECredentials(ufrag: "peer", password: "peerpassword0123456789")
        let v4 = Self.address("10.0.0.1:5000")
        let v6 = Self.address("[2001:db8::1]:5002")
        let agent = ICEAgent(
            configuration: .init(localCredentials: local, tieBreaker: 0xABCD, hostAddresses: [v4, v6]))
        agent.setRemote(credentials: remote)
        let remoteV4 = Self.address("192.0.2.7:7000")
        agent.addRemoteCandidate(ICECandidate(foundation: "1", priority: 2_130_706_431, address: remoteV4, kind: .host))
        #expect(
            !agent.addRemoteCandidate(
                ICECandidate(foundation: "2", transport: .tcp, priority: 5, address: remoteV4.withPort(9), kind: .host))
        )
        #expect(agent.pairs.count == 1)
        #expect(agent.pairs.first?.local.address == v4)
        agent.handleTimeout(nowNs: 0)
        #expect(agent.state == .checking)
        let check = try #require(agent.pollTransmit())
        #expect(check.destination == remoteV4)
        let message = try STUNMessage(parsing: check.bytes)
        #expect(message.messageClass == .request)
        #expect(message.username == "peer:ourf")
        #expect(message.priority == ICECandidate.priority(kind: .prflx, localPreference: 65535))
        #expect(message.iceControlling == 0xABCD)
        #expect(!message.useCandidate)
        #expect(
            check.bytes.withUnsafeBytes {
                STUNMessageIntegrity.verifyIntegrity($0, key: STUNMessageIntegrity.key(password: remote.password))
            } == .valid)
        #expect(check.bytes.withUnsafeBytes { STUNMessageIntegrity.verifyFingerprint($0) } == .valid)
        // Retransmitted unchanged after the RTO.
        agent.handleTimeout(nowNs: 250_000_000)
        #expect(agent.pollTransmit()?.bytes == check.bytes)
        #expect(agent.statistics.retransmissions == 1)
    }

    @Test func pacingSpacesNewChecks() {
        let a = ICEAgent(configuration: .init(hostAddresses: [Self.address("10.0.0.1:5000")]))
        a.setRemote(credentials: .random())
        for port: UInt16 in 1...4 {
            a.addRemoteCandidate(
                ICECandidate(
                    foundation: "\(port)", priority: 100 + UInt32(port), address: Self.address("10.0.0.3:\(port)"),
                    kind: .host))
        }
        a.handleTimeout(nowNs: 0)
        #expect(a.pollTransmit() != nil)
        #expect(a.pollTransmit() == nil)
        #expect(a.nextTimeoutNs == 50_000_000)
        a.handleTimeout(nowNs: 10_000_000)
        #expect(a.pollTransmit() == nil)
        a.handleTimeout(nowNs: 50_000_000)
        #expect(a.pollTransmit()?.destination == Self.address("10.0.0.3:3"))
        #expect(a.statistics.checksSent == 2)
        #expect(a.pairs.first?.remote.address == Self.address("10.0.0.3:4"))
    }
}
