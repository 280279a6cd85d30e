import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureTestSupport
import CaptureVP8
import Testing

@Suite("VideoSender with SRTP")
struct SenderSRTPTests {
    /// A frame split into packets close to the 1200-byte maximum: each needs libsrtp's whole trailer room (144 bytes,
    /// SRTP_MAX_TRAILER_LEN) behind it. With only the 16-byte tag's room, every packet over 1072 bytes failed to
    /// protect and was counted as a send error instead of sent.
    @Test("full-size packets are protected and sent, with the default packetizer configuration")
    func fullSizePackets() throws {
        let peer = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { peer.close() }
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(remote: peer.localAddress, srtp: SRTPKeyingMaterial.random()))
        defer { sender.finish() }
        var generator = SeededGenerator(state: 0x5A7)
        let frame = EncodedFrame(
            bytes: (0..<4_300).map { _ in UInt8.random(in: 0...255, using: &generator) }, isKeyFrame: true,
            rtpTimestamp: 0, captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0,
            dimensions: Dimensions(width: 640, height: 480), qp: 30)
        sender.consume(frame)
        let statistics = sender.statistics
        #expect(statistics.sendErrors == 0)
        #expect(statistics.packets == 4, "4,300 bytes in balanced packets of about 1,090 bytes")
    }
}
