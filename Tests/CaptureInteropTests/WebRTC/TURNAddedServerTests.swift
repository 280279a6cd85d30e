import CaptureDTLS
import CaptureICE
import CaptureLabSupport
import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

/// A TURN server given to a running transport (as a WHIP endpoint's `Link` header gives one after the offer): the
/// relay candidate comes as an event, is paired with the peer's candidates already known, and carries ICE and DTLS.
@Suite("TURN: a server added after the start, through coturn", .tags(.interop), .selectedByTags, .serialized)
struct TURNAddedServerTests {
    @Test("policy relay, no TURN server at start: one added later allocates, is reported, pairs and connects")
    func addedTURNServerConnectsARelayOnlyTransport() async throws {
        guard let coturn = try await CoturnServer.startOrSkip() else { return }
        defer { coturn.stop() }
        let publisher = try WebRTCTransport(
            configuration: .init(role: .controlling, hostAddresses: TURNRelayTests.loopback, transportPolicy: .relay))
        defer { publisher.close() }
        let viewer = try WebRTCTransport(
            configuration: .init(role: .controlled, hostAddresses: TURNRelayTests.loopback))
        defer { viewer.close() }
        #expect(await publisher.gatheredCandidates(timeout: .seconds(2)).isEmpty)

        // The peers know each other's credentials and fingerprints; the viewer knows none of our candidates (it
        // learns the relayed address as peer-reflexive from our checks).
        publisher.start(
            remote: TURNRelayTests.remote(of: viewer, candidates: viewer.localCandidates, dtlsRole: .server))
        viewer.start(remote: TURNRelayTests.remote(of: publisher, candidates: [], dtlsRole: .client))

        let events = publisher.addICEServers(stun: [], turn: [coturn.server()])
        var reported: [ICEEvent] = []
        for await event in events { reported.append(event) }
        let relay = reported.compactMap { if case .localCandidate(let c) = $0 { c } else { nil } }
        #expect(relay.map(\.kind) == [.relay], "\(reported)")
        #expect(reported.last == .gatheringComplete)
        #expect(publisher.localCandidates.map(\.kind) == [.relay])

        async let publisherKeys = publisher.connected(timeout: .seconds(15))
        async let viewerKeys = viewer.connected(timeout: .seconds(15))
        _ = try await (publisherKeys, viewerKeys)
        #expect(publisher.iceStatistics.selectedPair?.candidateTypes == "relay → host")
        #expect(coturn.log.contains("username=<\(CoturnServer.username)>"))

        // Nothing more to add: the stream gives the candidates known already, then ends at once.
        let again = publisher.addICEServers(stun: [], turn: [coturn.server()])
        var after: [ICEEvent] = []
        for await event in again { after.append(event) }
        #expect(after == relay.map { .localCandidate($0) } + [.gatheringComplete])
    }
}
