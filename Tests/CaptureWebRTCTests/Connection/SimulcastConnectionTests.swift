import CaptureCall
import CaptureCore
import CaptureNet
import CaptureNetworkSimulator
import CaptureRTP
import CaptureVP8
import CaptureWebRTC
import Testing

/// A connection that sends three simulcast layers (one RTP stream each, with its own RTX stream) to our answering
/// side, in virtual time: frames go to their layer's stream, RTCP that names one stream's SSRC acts on that stream
/// only, what concerns the whole transport is acted on once, and feedback for SSRCs we do not send is counted.
@Suite("WebRTCConnection: simulcast layers as streams (virtual time)")
struct SimulcastConnectionTests {
    typealias Scenario = WholeConnectionTests.Scenario

    static func scenario(seed: UInt64, transportWideCC: Bool = false) throws -> Scenario {
        try Scenario(seed: seed, mediaFor: .seconds(20), transportWideCC: transportWideCC, layers: 3)
    }

    @Test("three layers: each layer's frames leave on its own SSRC, counted per stream and in the stats report")
    func layersLeaveOnTheirStreams() throws {
        let scenario = try Self.scenario(seed: 21)
        scenario.run(for: .seconds(3))
        let publisher = scenario.publisher.connection
        let layers = publisher.layerStatistics
        try #require(layers.count == 3)
        for (index, layer) in layers.enumerated() {
            let ssrc = SimulatedPublisher.ssrc + UInt32(index)
            #expect(layer.frames == scenario.publisher.framesSent, "layer \(index) sent every frame")
            #expect(scenario.viewer.packetsBySSRC[ssrc] == layer.packets, "layer \(index) arrived whole")
            #expect(layer.keyFramesSent == 1, "each layer starts with its own key frame")
        }
        let report = publisher.statsReport(at: scenario.loop.now)
        #expect(report.outboundRTP?.ssrc == SimulatedPublisher.ssrc)
        #expect(report.outboundRTP?.encodingIndex == 0)
        #expect(report.simulcastLayers.map(\.encodingIndex) == [1, 2])
        #expect(report.outboundRTP?.rid == "l" && report.simulcastLayers.map(\.rid) == ["m", "h"])
        #expect(report.simulcastLayers.map(\.ssrc) == [SimulatedPublisher.ssrc + 1, SimulatedPublisher.ssrc + 2])
        #expect(
            report.simulcastLayers.map(\.rtxSsrc) == [SimulatedPublisher.rtxSSRC + 1, SimulatedPublisher.rtxSSRC + 2])
        #expect(publisher.statistics.framesForUnknownLayer == 0)
    }

    @Test("a PLI names a layer: only that layer is asked for a key frame; a PLI storm makes one; unknown SSRCs counted")
    func keyFrameRequestsPerLayer() throws {
        let scenario = try Self.scenario(seed: 22)
        scenario.run(for: .seconds(1))
        let viewer = scenario.viewer.connection
        viewer.sendPictureLossIndication(mediaSSRC: SimulatedPublisher.ssrc + 1, at: scenario.loop.now)
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequestsByLayer == [1: 1])
        viewer.sendPictureLossIndication(mediaSSRC: 0xDEAD_BEEF, at: scenario.loop.now)
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequestsByLayer == [1: 1], "a PLI for an SSRC we do not send asks nothing")
        #expect(scenario.publisher.connection.statistics.feedbackForUnknownSSRC == 1)
        // A burst of PLIs for the top layer: one request per 300 ms, the other layers untouched.
        for _ in 0..<20 {
            viewer.sendPictureLossIndication(mediaSSRC: SimulatedPublisher.ssrc + 2, at: scenario.loop.now)
        }
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequestsByLayer == [1: 1, 2: 1])
        let layers = scenario.publisher.connection.layerStatistics
        #expect(layers.map(\.plisReceived) == [0, 1, 20])
        #expect(layers[2].keyFrameRequestsThrottled == 19)
        #expect(layers[1].keyFramesSent == 2 && layers[2].keyFramesSent == 2 && layers[0].keyFramesSent == 1)
    }

    @Test("a FIR storm for one layer: that layer keys once per 300 ms, repeats are not new, unknown SSRCs counted")
    func firStormPerLayer() throws {
        let scenario = try Self.scenario(seed: 25)
        scenario.run(for: .seconds(1))
        let viewer = scenario.viewer.connection
        let middle = SimulatedPublisher.ssrc + 1
        // 30 new requests (numbers 1…30) within 100 ms, then the last one repeated 10 times.
        for number in 1...30 {
            viewer.sendFullIntraRequest(mediaSSRC: middle, sequenceNumber: UInt8(number), at: scenario.loop.now)
        }
        for _ in 0..<10 { viewer.sendFullIntraRequest(mediaSSRC: middle, sequenceNumber: 30, at: scenario.loop.now) }
        viewer.sendFullIntraRequest(mediaSSRC: 0xDEAD_BEEF, sequenceNumber: 1, at: scenario.loop.now)
        scenario.run(for: .milliseconds(100))
        #expect(scenario.publisher.keyFrameRequestsByLayer == [1: 1], "one key frame for the storm, on its layer")
        var layers = scenario.publisher.connection.layerStatistics
        #expect(layers.map(\.firsReceived) == [0, 40, 0], "every FIR naming the layer counted by it")
        #expect(layers[1].keyFrameRequestsThrottled == 29, "new requests within 300 ms ride on the first")
        #expect(scenario.publisher.connection.statistics.feedbackForUnknownSSRC == 1)
        // A new number after 300 ms is a new request; the stream goes on.
        scenario.run(for: .milliseconds(300))
        viewer.sendFullIntraRequest(mediaSSRC: middle, sequenceNumber: 31, at: scenario.loop.now)
        scenario.run(for: .seconds(1))
        #expect(scenario.publisher.keyFrameRequestsByLayer == [1: 2])
        layers = scenario.publisher.connection.layerStatistics
        #expect(layers[1].keyFramesSent == 3 && layers[0].keyFramesSent == 1 && layers[2].keyFramesSent == 1)
        #expect(layers.allSatisfy { $0.frames == scenario.publisher.framesSent })
    }

    @Test("after a narrowing, padding lets the estimate grow past 1.5 × what the encoder sends, to the padding target")
    func paddingLetsTheEstimateGrow() throws {
        // A 5 Mbit/s link narrowed to 400 kbit/s from 5 s to 12 s: the encoder follows the target until the link
        // widens, then sends 2500-byte frames (600 kbit/s) whatever the target, as a simulcast encoder whose top layer
        // went off sends only the lower layers' rate. GCC's estimate may grow only to 1.5 × the acknowledged rate.
        func run(padding: Int) throws -> (kbps: Int, reached: Duration?, padded: Int) {
            let link = LinkConfiguration(
                delay: .milliseconds(20), rate: 5_000_000, queueBytes: 100_000,
                schedule: [.setRate(400_000, at: .seconds(5)), .setRate(5_000_000, at: .seconds(12))])
            let scenario = try WholeConnectionTests.Scenario(
                seed: 27, forward: link, mediaFor: .seconds(40), transportWideCC: true)
            scenario.publisher.followsTarget = true
            scenario.publisher.connection.setPaddingTarget(kbps: padding)
            scenario.run(for: .seconds(12))
            scenario.publisher.followsTarget = false
            let narrowed = scenario.publisher.targetKbps
            scenario.run(for: .seconds(28))
            let widened = scenario.start + .seconds(12)
            let reached = scenario.publisher.targets.first { $0.at > widened && $0.kbps >= 2_000 }
            print(
                "padding target \(padding) kbit/s: \(narrowed) kbit/s at the widening, "
                    + "\(scenario.publisher.targetKbps) at 40 s"
                    + (reached.map { ", ≥ 2000 \(widened.duration(to: $0.at)) after the widening" } ?? ""))
            let padded = scenario.publisher.connection.statistics.pacer?.paddingBytesSent ?? 0
            return (scenario.publisher.targetKbps, reached.map { widened.duration(to: $0.at) }, padded)
        }
        let without = try run(padding: 0)
        let with = try run(padding: 2_000)
        #expect(without.kbps < 1_200, "held near 1.5 × 600 kbit/s without padding: \(without.kbps)")
        #expect(with.kbps >= 2_000, "padding up to 2000 kbit/s lets it through: \(with.kbps)")
        // From 360 kbit/s at GCC's multiplicative increase (8 % a second): about 22 s to 2000 kbit/s.
        #expect((with.reached ?? .seconds(99)) < .seconds(25))
        #expect(with.padded > without.padded)
    }

    @Test("padding holds no standing queue on a narrowed link: the loss of a full drop-tail queue is congestion")
    func paddingHoldsNoStandingQueue() throws {
        // 5 Mbit/s narrowed to 500 kbit/s at 5 s, a 300 ms drop-tail queue; the encoder sends 1250-byte frames
        // (300 kbit/s, as the lower layers of a simulcast encoder whose top layer is off, under their targets) and
        // the connection pads up to 1370 kbit/s (the 720p layout's need), at most its estimate.
        let link = LinkConfiguration(
            delay: .milliseconds(25), rate: 5_000_000, queueBytes: 500_000 / 8 * 3 / 10,
            schedule: [.setRate(500_000, at: .seconds(5))])
        let scenario = try WholeConnectionTests.Scenario(
            seed: 28, forward: link, mediaFor: .seconds(30), transportWideCC: true, frameBytes: 1_250)
        scenario.publisher.connection.setPaddingTarget(kbps: 1_370)
        let path = (WholeConnectionTests.publisherAddress, WholeConnectionTests.viewerAddress)
        scenario.run(for: .seconds(15))
        let before = scenario.network.statistics(from: path.0, to: path.1)
        scenario.run(for: .seconds(15))
        let after = scenario.network.statistics(from: path.0, to: path.1)
        let targets = scenario.publisher.targets.filter { $0.at > scenario.start + .seconds(15) }.map(\.kbps)
        let sent = after.packetsSent - before.packetsSent
        let dropped = after.packetsDroppedAtQueue - before.packetsDroppedAtQueue
        print(
            "narrowed with padding, 15-30 s: targets \(targets.min() ?? 0)...\(targets.max() ?? 0) kbit/s, "
                + "\(dropped) of \(sent) packets dropped at the queue")
        #expect((targets.max() ?? 0) < 700, "the target keeps to the 500 kbit/s link, not 1.5 × its throughput")
        #expect(dropped * 100 <= sent * 3, "no standing queue overflowing: \(dropped) of \(sent) dropped")
    }

    @Test("a frame for a layer the connection was not given is counted and dropped")
    func unknownLayer() throws {
        let scenario = try Self.scenario(seed: 23)
        scenario.run(for: .milliseconds(500))
        scenario.publisher.connection.send(
            frame: EncodedFrame(
                bytes: [1, 2, 3], isKeyFrame: true, rtpTimestamp: 0, captureTimeNs: 0, rotation: .degrees0,
                dimensions: Dimensions(width: 2, height: 2), qp: 1, simulcastIndex: 3),
            at: scenario.loop.now)
        #expect(scenario.publisher.connection.statistics.framesForUnknownLayer == 1)
    }

    @Test("NACKs for the top layer are answered on the top layer's RTX stream; transport-wide feedback acted on once")
    func retransmissionAndSharedFeedback() throws {
        let scenario = try Self.scenario(seed: 24, transportWideCC: true)
        scenario.run(for: .seconds(2))
        let top = SimulatedPublisher.ssrc + 2
        let asked = Array(try #require(scenario.viewer.recentBySSRC[top]).suffix(3))
        try #require(asked.count == 3)
        scenario.viewer.connection.sendNACK(mediaSSRC: top, sequenceNumbers: asked, at: scenario.loop.now)
        scenario.run(for: .seconds(1))
        let layers = scenario.publisher.connection.layerStatistics
        #expect(layers.map(\.retransmissions) == [0, 0, 3], "only the top layer resends")
        #expect(scenario.viewer.packetsBySSRC[SimulatedPublisher.rtxSSRC + 2] == 3, "on the top layer's RTX SSRC")
        let feedbackSent = scenario.viewer.connection.statistics.transportWideCC.feedbackSent
        let received = scenario.publisher.connection.statistics.transportWideCC.feedbackReceived
        #expect(feedbackSent > 5)
        #expect(received <= feedbackSent && received >= feedbackSent - 2, "each feedback message processed once")
        #expect(scenario.viewer.packetsBySSRC[SimulatedPublisher.rtxSSRC] == nil, "no RTX on layer 0's stream")
    }
}
