import CaptureCall
import CaptureNetworkSimulator
import CaptureRTP
import CaptureNet
import CaptureDTLS
import CaptureICE
import CaptureWebRTC
import Testing

/// Two whole connections (our publisher, controlling and DTLS server, against our own answering side, controlled
/// and DTLS client, as the preview's is) through a seeded simulated network in virtual time: no sockets, no sleeps.
@Suite("WebRTCConnection: whole connections in virtual time")
struct WholeConnectionTests {
    static let publisherAddress = SocketAddress.loopbackIPv4(port: 40_000)
    static let viewerAddress = SocketAddress.loopbackIPv4(port: 50_000)

    /// A publisher and a viewer on a network whose links are `link` both ways (and `forward` from the publisher to
    /// the viewer when given), started as a WHIP publisher and its answerer would be.
    struct Scenario {
        let start = ContinuousClock.now
        let network: SimulatedNetwork<SocketAddress>
        let loop: VirtualTimeLoop<SocketAddress>
        let publisher: SimulatedPublisher
        let viewer: SimulatedViewer

        init(
            seed: UInt64, link: LinkConfiguration = LinkConfiguration(delay: .milliseconds(20)),
            forward: LinkConfiguration? = nil, mediaFor: Duration = .seconds(5), transportWideCC: Bool = false,
            probesStaleEstimate: Bool = false, layers: Int = 1, startBitrateKbps: Int = 1_000,
            frameBytes: Int = 2_500
        ) throws {
            network = SimulatedNetwork(seed: seed, start: start, defaultLink: link)
            if let forward { network.setLink(from: publisherAddress, to: viewerAddress, forward) }
            loop = VirtualTimeLoop(network: network, now: start)
            publisher = try SimulatedPublisher(
                address: publisherAddress, start: start, frameBytes: frameBytes, stopAt: start + mediaFor)
            viewer = try SimulatedViewer(address: viewerAddress, start: start)
            // Transport-wide congestion control, as negotiated in a BUNDLE: one id both ways (3, as Chromium's).
            let twcc: UInt8? = transportWideCC ? 3 : nil
            viewer.connection.start(
                remote: publisher.remote(dtlsRole: .client, transportWideCCExtensionID: twcc), media: nil, at: start)
            var media = SimulatedPublisher.media(transportWideCCExtensionID: twcc, layers: layers)
            media.startBitrateKbps = startBitrateKbps
            media.probesStaleEstimate = probesStaleEstimate
            publisher.layers = layers
            publisher.connection.start(remote: viewer.remote(dtlsRole: .server), media: media, at: start)
        }

        @discardableResult
        func run(for duration: Duration, until done: () -> Bool = { false }) -> VirtualTimeLoopResult {
            loop.run(peers: [publisher, viewer], until: loop.now + duration, stopWhen: done)
        }
    }

    @Test("connect: ICE and DTLS complete in a few round trips, the keys agree crosswise")
    func connects() throws {
        let scenario = try Scenario(seed: 1)
        let wall = ContinuousClock.now
        let result = scenario.run(for: .seconds(5)) {
            scenario.publisher.connectedAt != nil && scenario.viewer.connectedAt != nil
        }
        let elapsed = ContinuousClock.now - wall
        let connected = try #require(scenario.publisher.connectedAt)
        let took = scenario.start.duration(to: connected)
        print("virtual-time connect: \(took) simulated, \(elapsed) wall, \(result.steps) steps")
        // 20 ms each way: a check and its response, then two DTLS flights each way.
        #expect(took < .milliseconds(400), "connected after \(took)")
        guard case .connected(let ours) = scenario.publisher.connection.state,
            case .connected(let theirs) = scenario.viewer.connection.state
        else {
            Issue.record("not connected: \(scenario.publisher.connection.state), \(scenario.viewer.connection.state)")
            return
        }
        #expect(ours.local == theirs.remote)
        #expect(ours.remote == theirs.local)
        #expect(scenario.publisher.connection.selectedPair?.remote.address == Self.viewerAddress)
    }

    @Test("media: 5 s of 30 fps video arrive whole and in order, and sender reports go out about once a second")
    func mediaFlows() throws {
        let scenario = try Scenario(seed: 2)
        let wall = ContinuousClock.now
        scenario.run(for: .seconds(6))
        let elapsed = ContinuousClock.now - wall
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        print(
            "virtual-time media: \(scenario.publisher.framesSent) frames, \(sent.packets) packets, "
                + "\(sent.rtcpSent) reports, \(elapsed) wall for 6 s")
        #expect(scenario.publisher.framesSent >= 145)
        #expect(sent.frames == scenario.publisher.framesSent)
        #expect(scenario.viewer.mediaPackets == sent.packets, "every packet arrived")
        #expect(scenario.viewer.nacksSent == 0)
        #expect((4...9).contains(sent.rtcpSent), "sender reports: \(sent.rtcpSent)")
        #expect(scenario.viewer.connection.statistics.rtcpReceived == sent.rtcpSent)
    }

    @Test("NACK → RTX: 5 % loss from the publisher after the handshake; every lost packet is recovered by RTX")
    func lossIsRepairedByRetransmission() throws {
        var forward = LinkConfiguration(delay: .milliseconds(20))
        forward.schedule = [.setLossRate(0.05, at: .seconds(1))]
        let scenario = try Scenario(seed: 3, forward: forward)
        scenario.run(for: .seconds(7))
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        let lost = scenario.network.statistics(from: Self.publisherAddress, to: Self.viewerAddress).packetsLost
        let viewer = scenario.viewer
        print(
            "virtual-time NACK: \(lost) datagrams lost, \(viewer.nacksSent) NACKs, \(sent.retransmissions) RTX sent, "
                + "\(viewer.rtxReceived) RTX received, \(viewer.recovered.count) recovered, \(viewer.missing.count) "
                + "still missing")
        #expect(lost > 10, "the schedule made losses")
        #expect(viewer.nacksSent > 0)
        #expect(sent.nacksReceived > 0)
        #expect(sent.retransmissions > 0)
        #expect(viewer.rtxReceived > 0)
        #expect(viewer.missing.isEmpty, "nothing left unrepaired: \(viewer.missing.keys.sorted())")
        #expect(viewer.received.count == sent.packets, "every media packet arrived, first time or by RTX")
    }

    @Test(
        "PLI: the viewer's picture-loss indications reach the publisher as key-frame requests, at most one per 300 ms")
    func pictureLossIndication() throws {
        let scenario = try Scenario(seed: 4)
        scenario.run(for: .seconds(1))
        #expect(scenario.publisher.connectedAt != nil)
        let viewer = scenario.viewer.connection
        viewer.sendPictureLossIndication(mediaSSRC: SimulatedPublisher.ssrc, at: scenario.loop.now)
        viewer.sendPictureLossIndication(mediaSSRC: SimulatedPublisher.ssrc, at: scenario.loop.now)
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequests == 1, "two PLIs within 300 ms make one request")
        scenario.run(for: .milliseconds(400))
        viewer.sendPictureLossIndication(mediaSSRC: SimulatedPublisher.ssrc, at: scenario.loop.now)
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequests == 2)
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        #expect(sent.plisReceived == 3)
        #expect(sent.keyFrameRequestsThrottled == 1)
        #expect(sent.keyFramesSent >= 3, "the first frame and one per request")
    }

    @Test("consent: a path that goes dead fails the connection with consent lost about 30 s later, media stops")
    func consentLoss() throws {
        var link = LinkConfiguration(delay: .milliseconds(20))
        link.schedule = [.linkDown(at: .seconds(2))]
        let scenario = try Scenario(seed: 5, link: link, mediaFor: .seconds(60))
        let wall = ContinuousClock.now
        scenario.run(for: .seconds(45)) { scenario.publisher.failure != nil }
        let elapsed = ContinuousClock.now - wall
        let failure = try #require(scenario.publisher.failure)
        let after = (scenario.start + .seconds(2)).duration(to: failure.at)
        print("virtual-time consent loss: failed \(after) after the path died (\(elapsed) wall): \(failure.error)")
        #expect(failure.error.code == .iceFailed)
        #expect(failure.error.message.contains("consent"))
        #expect(after > .seconds(25) && after < .seconds(37), "consent expires 30 s after the last answer: \(after)")
        let blocked = scenario.publisher.connection.statistics.mediaBlocked
        scenario.run(for: .seconds(1))
        #expect(scenario.publisher.connection.statistics.mediaBlocked > blocked, "frames after the failure are blocked")
    }

    @Test("a bottleneck: 600 kbit/s with a 30 kB queue drops at the queue, and RTX repairs what it dropped")
    func bottleneckQueue() throws {
        var forward = LinkConfiguration(delay: .milliseconds(20), rate: 600_000, queueBytes: 30_000)
        forward.schedule = []
        let scenario = try Scenario(seed: 6, forward: forward)
        scenario.run(for: .seconds(7))
        let link = scenario.network.statistics(from: Self.publisherAddress, to: Self.viewerAddress)
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        print(
            "virtual-time bottleneck: \(link.packetsDroppedAtQueue) dropped at the queue, max queueing delay "
                + "\(link.maximumQueueingDelay), \(sent.retransmissions) RTX")
        #expect(link.packetsDroppedAtQueue > 0, "key frames overflow a 30 kB queue at 600 kbit/s")
        #expect(link.maximumQueueingDelay > .milliseconds(100))
        #expect(sent.retransmissions > 0)
    }

    @Test("close: BYE and close_notify reach the peer, the connection reports closed and sends nothing after")
    func closes() throws {
        let scenario = try Scenario(seed: 7)
        scenario.run(for: .seconds(2))
        let reportsBefore = try #require(scenario.publisher.connection.mediaStatistics).rtcpSent
        scenario.publisher.connection.close(at: scenario.loop.now)
        let reportsAfter = try #require(scenario.publisher.connection.mediaStatistics).rtcpSent
        scenario.publisher.stopAt = scenario.loop.now
        scenario.run(for: .seconds(1))
        #expect(scenario.publisher.connection.state == .closed)
        #expect(scenario.publisher.events.contains { $0.event == .closed })
        #expect(reportsAfter == reportsBefore + 1, "the last report, with BYE")
        #expect(scenario.viewer.connection.statistics.rtcpReceived == reportsAfter, "every report arrived")
        #expect(scenario.publisher.connection.pollTransmit() == nil)
        #expect(scenario.publisher.connection.nextTimeout == nil)
    }
}
