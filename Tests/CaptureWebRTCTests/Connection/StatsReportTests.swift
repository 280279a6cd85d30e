import CaptureCall
import CaptureDTLS
import CaptureICE
import CaptureNet
import CaptureNetworkSimulator
import CaptureWebRTC
import Foundation
import Testing

/// The W3C webrtc-stats report of a whole connection in virtual time, checked against what the simulated network
/// carried and what the peer received.
@Suite("WebRTCConnection: W3C stats report")
struct StatsReportTests {
    typealias Scenario = WholeConnectionTests.Scenario

    @Test("transport, candidate-pair and outbound-rtp agree with the network and the peer; JSON reads as W3C's")
    func reportAgreesWithTheNetwork() throws {
        let scenario = try Scenario(seed: 12)
        scenario.run(for: .seconds(3))
        let publisher = WholeConnectionTests.publisherAddress
        let viewer = WholeConnectionTests.viewerAddress
        let report = scenario.publisher.connection.statsReport(at: scenario.loop.now)
        let out = scenario.network.statistics(from: publisher, to: viewer)
        let back = scenario.network.statistics(from: viewer, to: publisher)

        // transport: every datagram the engine sent entered the network, and every one delivered to it was counted.
        #expect(report.transport.packetsSent == out.packetsSent)
        #expect(report.transport.bytesSent == out.bytesSent)
        #expect(report.transport.packetsReceived == back.packetsDelivered)
        #expect(report.transport.bytesReceived == back.bytesDelivered)
        #expect(report.transport.iceRole == .controlling)
        #expect(report.transport.iceState == .connected)
        #expect(report.transport.dtlsState == .connected)
        #expect(report.transport.dtlsRole == .server, "the answerer chose active, as Janus does")
        #expect(report.transport.srtpCipher != nil)
        #expect(report.transport.selectedCandidatePairChanges == 1)

        // candidate-pair: the selected one, linked to its candidates and the transport; STUN checks are not media.
        let pair = try #require(report.candidatePair)
        #expect(report.transport.selectedCandidatePairId == pair.id)
        #expect(pair.localCandidateId == report.localCandidate?.id)
        #expect(pair.remoteCandidateId == report.remoteCandidate?.id)
        #expect(pair.state == .succeeded && pair.nominated)
        #expect(report.remoteCandidate?.address == viewer.host && report.remoteCandidate?.port == Int(viewer.port))
        #expect(report.localCandidate?.candidateType == .host)
        #expect(pair.packetsSent > 0 && pair.packetsSent < report.transport.packetsSent)
        #expect(pair.packetsReceived > 0 && pair.packetsReceived <= report.transport.packetsReceived)
        #expect(pair.requestsSent > 0 && pair.responsesReceived > 0 && pair.responsesSent > 0)
        #expect(pair.currentRoundTripTime.map { $0 >= .milliseconds(40) && $0 < .milliseconds(60) } == true)

        // outbound-rtp: what the viewer received (no loss on this link, so no retransmission).
        let outbound = try #require(report.outboundRTP)
        #expect(outbound.packetsSent == scenario.viewer.mediaPackets)
        #expect(outbound.framesSent == scenario.publisher.framesSent)
        #expect(outbound.retransmittedPacketsSent == 0)
        #expect(outbound.headerBytesSent > 0 && outbound.bytesSent > outbound.headerBytesSent)
        #expect(outbound.targetBitrate == Double(SimulatedPublisher.media.startBitrateKbps) * 1_000)
        #expect(outbound.framesEncoded == nil, "the encoder is not the connection's")
        #expect(report.timestamp == .seconds(3))

        // JSON: W3C's type names, times in seconds, and it decodes to the same report.
        let json = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let pairJSON = try #require(object["candidatePair"] as? [String: Any])
        #expect(pairJSON["type"] as? String == "candidate-pair")
        #expect((pairJSON["currentRoundTripTime"] as? Double).map { $0 >= 0.04 && $0 < 0.06 } == true)
        #expect((object["outboundRTP"] as? [String: Any])?["type"] as? String == "outbound-rtp")
        #expect(try JSONDecoder().decode(WebRTCStatsReport.self, from: json) == report)
    }

    @Test("NACK → RTX and a closed connection: retransmissions and NACKs counted, the last figures kept after close")
    func retransmissionsAndClose() throws {
        var forward = LinkConfiguration(delay: .milliseconds(20))
        forward.schedule = [.setLossRate(0.05, at: .seconds(1))]
        let scenario = try Scenario(seed: 3, forward: forward)
        scenario.run(for: .seconds(4))
        scenario.publisher.connection.close(at: scenario.loop.now)
        let report = scenario.publisher.connection.statsReport(at: scenario.loop.now)
        let outbound = try #require(report.outboundRTP)
        let sent = try #require(scenario.publisher.connection.mediaStatistics)
        #expect(outbound.retransmittedPacketsSent == sent.retransmissions && sent.retransmissions > 0)
        #expect(outbound.nackCount == sent.nacksReceived && outbound.nackCount > 0)
        #expect(outbound.packetsSent == sent.packets + sent.retransmissions)
        #expect(report.transport.dtlsState == .closed)
        #expect(report.transport.iceState == .closed)
    }
}
