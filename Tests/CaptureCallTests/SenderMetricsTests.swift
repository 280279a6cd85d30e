import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureTestSupport
import CaptureVP8
import CoreMetrics
import Foundation
import MetricsTestKit
import Testing

// The sender gets its own TestMetrics factory, so nothing is bootstrapped process-wide.
@Suite("VideoSender metrics")
struct SenderMetricsTests {
    @Test("swift-metrics counters, timers and gauges match the sender's statistics, per device")
    func counters() async throws {
        let metrics = TestMetrics()
        let peer = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { peer.close() }
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(remote: peer.localAddress, metricsDeviceID: "cam9"),
            metricsFactory: metrics)
        defer { sender.finish() }
        var generator = SeededGenerator(state: 0x5E11)
        for index in 0..<20 {
            let size = index == 0 ? 3_000 : 700
            let frame = EncodedFrame(
                bytes: (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }, isKeyFrame: index == 0,
                rtpTimestamp: UInt32(index * 3_000), captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
                dimensions: Dimensions(width: 320, height: 240), qp: 30)
            sender.consume(frame)
        }
        // The peer's feedback, on the sender's RTCP port: PLI, REMB 300 kbit/s, NACK, a receiver report, junk.
        let ssrc = sender.ssrc
        let feedback = RTCPCompoundPacket.serialize([
            .receiverReport(
                RTCPReceiverReport(
                    ssrc: 7,
                    reportBlocks: [
                        RTCPReportBlock(
                            ssrc: ssrc, fractionLost: 64, cumulativeLost: 3, extendedHighestSequence: 40, jitter: 2,
                            lastSenderReport: 0, delaySinceLastSenderReport: 0)
                    ])),
            .pictureLossIndication(senderSSRC: 7, mediaSSRC: ssrc),
            .receiverEstimatedMaximumBitrate(RTCPREMB(senderSSRC: 7, bitrate: 300_000, ssrcs: [ssrc])),
            .genericNACK(senderSSRC: 7, mediaSSRC: ssrc, entries: [RTCPNACKEntry(packetID: 3, lostBitmask: 0)]),
        ])
        let rtcpPort = sender.localAddress.withPort(sender.localAddress.port + 1)
        _ = feedback.withUnsafeBytes { peer.send($0, to: rtcpPort) }
        _ = [UInt8](repeating: 0xFF, count: 9).withUnsafeBytes { peer.send($0, to: rtcpPort) }
        var statistics = sender.statistics
        for _ in 0..<100 where statistics.rtcpMalformed < 1 || statistics.nacksReceived < 1 {
            try await Task.sleep(for: .milliseconds(20))
            statistics = sender.statistics
        }
        let device = [("device", "cam9")]
        func total(_ name: String) throws -> Int {
            Int(try metrics.expectCounter("camera_rtp_sender_\(name)", device).totalValue)
        }
        #expect(try total("frames") == statistics.frames && statistics.frames == 20)
        #expect(try total("packets") == statistics.packets && statistics.packets >= 22)
        #expect(try total("bytes") == statistics.bytes)
        #expect(try total("key_frames") == 1 && statistics.keyFramesSent == 1)
        #expect(try total("pli_received") == 1 && statistics.plisReceived == 1)
        #expect(try total("nack_received") == 1 && statistics.nacksReceived == 1)
        #expect(try total("remb_received") == 1 && statistics.rembsReceived == 1)
        #expect(try total("rtcp_malformed") == statistics.rtcpMalformed && statistics.rtcpMalformed == 1)
        #expect(try metrics.expectGauge("camera_rtp_sender_requested_bitrate_kbps", device).lastValue == 300)
        #expect(try metrics.expectGauge("camera_rtp_sender_remote_fraction_lost", device).lastValue == 0.25)
        let glassToWire = try metrics.expectTimer("camera_rtp_sender_glass_to_wire", device)
        #expect(glassToWire.values.count == 20)
    }
}
