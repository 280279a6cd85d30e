import CaptureCall
import CaptureCore
import CaptureDTLS
import CaptureICE
import CaptureLabSupport
import CaptureNet
import CaptureTestSupport
import CaptureVP8
import CaptureWebRTC
import Foundation
import Testing

/// Two transports on loopback, one of them relay-only through a real coturn: ICE must select the relay pair, DTLS
/// and SRTP must cross it both ways, and coturn must say it carried them.
@Suite("TURN: relayed candidates through coturn", .tags(.interop), .selectedByTags, .serialized)
struct TURNRelayTests {
    static let loopback = [SocketAddress.loopbackIPv4(port: 0)]

    static func remote(
        of peer: WebRTCTransport, candidates: [ICECandidate], dtlsRole: DTLSRole
    )
        -> WebRTCTransport.Remote
    {
        WebRTCTransport.Remote(
            credentials: peer.localCredentials, candidates: candidates, fingerprint: peer.certificate.fingerprint,
            dtlsRole: dtlsRole, endOfCandidates: true)
    }

    /// A video stream for a transport to send once connected.
    static func media(from transport: WebRTCTransport) -> ConnectionMedia {
        ConnectionMedia(
            sender: VideoSenderConfiguration(remote: transport.localAddress, rtcpMux: true),
            minBitrateKbps: 100, maxBitrateKbps: 2_500, startBitrateKbps: 1_000)
    }

    static func frame(_ index: Int) -> EncodedFrame {
        EncodedFrame(
            bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 3_000), isKeyFrame: index == 0,
            rtpTimestamp: UInt32(index * 3_000), captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
            dimensions: Dimensions(width: 320, height: 240), qp: 30)
    }

    @Test("policy relay: ICE selects relay → host, DTLS completes, SRTP flows both ways, coturn counts the packets")
    func relayOnlyPublisherConnectsThroughCoturn() async throws {
        guard let coturn = try await CoturnServer.startOrSkip() else { return }
        defer { coturn.stop() }
        let publisher = try WebRTCTransport(
            configuration: .init(
                role: .controlling, hostAddresses: Self.loopback, turnServers: [coturn.server()],
                transportPolicy: .relay))
        defer { publisher.close() }
        let viewer = try WebRTCTransport(configuration: .init(role: .controlled, hostAddresses: Self.loopback))
        defer { viewer.close() }

        let offered = await publisher.gatheredCandidates(timeout: .seconds(10))
        #expect(offered.map(\.kind) == [.relay], "relay policy: the relayed candidate only, \(offered)")
        let relay = try #require(offered.first)
        #expect(relay.priority >> 24 == 0, "type preference 0")
        #expect(relay.relatedAddress?.port == publisher.localAddress.port, "related address: the mapped one")
        let allocation = try #require(publisher.turnAllocations.first)
        #expect(allocation.state == .allocated)
        #expect(allocation.relayedAddress == relay.address)

        viewer.start(
            remote: Self.remote(of: publisher, candidates: offered, dtlsRole: .client), media: Self.media(from: viewer))
        publisher.start(
            remote: Self.remote(of: viewer, candidates: viewer.localCandidates, dtlsRole: .server),
            media: Self.media(from: publisher))
        async let publisherKeys = publisher.connected(timeout: .seconds(15))
        async let viewerKeys = viewer.connected(timeout: .seconds(15))
        _ = try await (publisherKeys, viewerKeys)
        let pair = try #require(publisher.iceStatistics.selectedPair)
        #expect(pair.candidateTypes == "relay → host")
        #expect(pair.local.address == relay.address)

        for index in 0..<20 {
            publisher.consume(Self.frame(index))
            viewer.consume(Self.frame(index))
            try await Task.sleep(for: .milliseconds(5))
        }
        // Hang detectors, not timing: a sanitized parallel run starves this task's sleeps for seconds at a time.
        let deadline = ContinuousClock.now + .seconds(30)
        while viewer.statistics.rtpReceived < 60 || publisher.statistics.rtpReceived < 60,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        let turn = try #require(publisher.turnAllocations.first)
        print(
            "TURN relay: pair \(pair.candidateTypes), relayed \(turn.relayedAddress.map { "\($0)" } ?? "-"), "
                + "RTP publisher → viewer \(viewer.statistics.rtpReceived), viewer → publisher "
                + "\(publisher.statistics.rtpReceived), channels bound \(turn.channelsBound), permissions "
                + "\(turn.permissionsInstalled), datagrams via the allocation \(turn.datagramsSent) out / "
                + "\(turn.datagramsReceived) in, TURN messages \(publisher.statistics.turnReceived)")
        #expect(viewer.statistics.rtpReceived == 60, "20 frames of 3,000 bytes: 3 packets each")
        #expect(publisher.statistics.rtpReceived == 60)
        #expect(publisher.mediaStatistics?.sendErrors == 0)
        #expect(publisher.statistics.mediaBlocked == 0)
        #expect(turn.channelsBound >= 1, "media went as ChannelData")
        #expect(turn.permissionsInstalled >= 1)

        // Releasing the allocation makes coturn log the session's usage: packets it received from us (rp) and sent
        // to us (sp), which must include the 60 SRTP packets each way.
        publisher.close()
        var usage: (received: Int, sent: Int)?
        let logDeadline = ContinuousClock.now + .seconds(30)  // coturn logged it past 5 s in a TSan dry run
        while usage == nil, ContinuousClock.now < logDeadline {
            usage = Self.usage(in: coturn.log)
            if usage == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let lines = coturn.log.split(separator: "\n").filter { line in
            line.contains("usage") || line.contains("new, realm")
        }
        print("coturn:\n" + lines.joined(separator: "\n"))
        let counted = try #require(usage, "coturn logged no usage line for the session")
        #expect(counted.received >= 60 && counted.sent >= 60, "coturn relayed \(counted)")
        #expect(coturn.log.contains("username=<\(CoturnServer.username)>"))
    }

    @Test("a wrong password: a typed unauthorized error naming the server, no relay candidate, no crash")
    func wrongPasswordIsATypedError() async throws {
        guard let coturn = try await CoturnServer.startOrSkip() else { return }
        defer { coturn.stop() }
        let server = coturn.server(password: "wrong")
        let publisher = try WebRTCTransport(
            configuration: .init(
                role: .controlling, hostAddresses: Self.loopback, turnServers: [server], transportPolicy: .all))
        defer { publisher.close() }
        let offered = await publisher.gatheredCandidates(timeout: .seconds(10))
        #expect(offered.map(\.kind) == [.host], "no relay candidate: \(offered)")
        let allocation = try #require(publisher.turnAllocations.first)
        print("TURN wrong password: \(allocation.lastError.map { "\($0)" } ?? "no error")")
        #expect(allocation.state == .failed)
        #expect(allocation.lastError?.code == .unauthorized)
        #expect(allocation.lastError?.errorCode == 401)
        #expect(allocation.lastError?.server == server.name)
        #expect(publisher.iceStatistics.relayFailures == 1)
        #expect(publisher.iceStatistics.relayCandidates == 0)
    }

    /// `rp` and `sp` of coturn's `usage:` line, once logged.
    static func usage(in log: String) -> (received: Int, sent: Int)? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("usage: realm=") }) else { return nil }
        func number(after key: String) -> Int? {
            guard let range = line.range(of: key) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        guard let received = number(after: "rp="), let sent = number(after: "sp=") else { return nil }
        return (received, sent)
    }
}
