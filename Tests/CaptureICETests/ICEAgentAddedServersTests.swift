import CaptureICE
import CaptureNet
import Testing

/// STUN and TURN servers given after the agent started (a WHIP endpoint's `Link` servers): gathering resumes for them,
/// and nothing changes when nothing new is given.
@Suite struct ICEAgentAddedServersTests {
    static let host = ICEAgentTests.address("10.0.0.1:5000")
    static let server = ICEAgentTests.address("198.51.100.1:3478")
    static let mapped = ICEAgentTests.address("203.0.113.5:40000")

    static func gathered(_ events: [ICEEvent]) -> [ICECandidate] {
        events.compactMap { if case .localCandidate(let candidate) = $0 { candidate } else { nil } }
    }

    @Test func stunServerAddedAfterGatheringGivesACandidateAndASecondCompletion() {
        let a = ICEAgent(configuration: .init(hostAddresses: [Self.host]))
        let network = FakeNetwork()
        network.stunServer = (Self.server, Self.mapped)
        network.attach(a, at: Self.host)
        network.run(forNs: 100_000_000)
        #expect(a.isGatheringComplete)
        #expect(Self.gathered(network.events(of: a)).isEmpty)

        #expect(a.add(stunServers: [Self.server], turnServers: []) == 1)
        #expect(!a.isGatheringComplete)
        network.run(forNs: 1_000_000_000) { network.events(of: a).filter { $0 == .gatheringComplete }.count == 1 }
        let gathered = Self.gathered(network.events(of: a))
        #expect(gathered.map(\.kind) == [.srflx])
        #expect(gathered.first?.address == Self.mapped)
        #expect(a.isGatheringComplete)
        #expect(network.events(of: a).filter { $0 == .gatheringComplete }.count == 1)

        // The same server again, or nothing: no change, no event.
        let before = network.events(of: a).count
        #expect(a.add(stunServers: [Self.server], turnServers: []) == 0)
        #expect(a.add(stunServers: [], turnServers: []) == 0)
        network.run(forNs: 200_000_000)
        #expect(network.events(of: a).count == before)
        #expect(a.localCandidates.count == 2)
    }

    @Test func relayPolicyIgnoresAddedSTUNAndTURNNeedsAHostOfItsFamily() {
        var configuration = ICEAgent.Configuration(hostAddresses: [Self.host])
        configuration.transportPolicy = .relay
        let a = ICEAgent(configuration: configuration)
        a.handleTimeout(nowNs: 0)
        #expect(a.add(stunServers: [Self.server], turnServers: []) == 0)
        let ipv6 = TURNServer(address: ICEAgentTests.address("[2001:db8::1]:3478"), username: "u", password: "p")
        #expect(a.add(stunServers: [], turnServers: [ipv6]) == 0)
        let turn = TURNServer(address: Self.server, username: "u", password: "p")
        #expect(a.add(stunServers: [], turnServers: [turn]) == 1)
        #expect(a.add(stunServers: [], turnServers: [turn]) == 0)
        #expect(a.isTURNServer(Self.server))
        a.handleTimeout(nowNs: 1_000_000)
        // The new allocation's first Allocate goes to the server.
        var destinations: [SocketAddress] = []
        while let transmit = a.pollTransmit() { destinations.append(transmit.destination) }
        #expect(destinations.contains(Self.server))
        #expect(!a.isGatheringComplete)
    }
}
