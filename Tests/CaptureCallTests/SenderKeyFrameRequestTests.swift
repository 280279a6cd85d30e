import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import Foundation
import Testing

@Suite("VideoSender: key-frame requests are rate-limited as WebRTC does")
struct SenderKeyFrameRequestTests {
    static func send(_ packet: RTCPPacket, to sender: VideoSender) {
        var bytes = RTCPCompoundPacket.serialize([packet])
        let length = bytes.count
        bytes.withUnsafeMutableBytes { sender.receiveRTCP($0, length: length) }
    }

    @Test("a burst of PLIs asks for one key frame; a PLI 300 ms later asks again")
    func burstOfPLIs() async throws {
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: .loopbackIPv4(port: 9), packetizer: RTPPacketizerConfiguration(ssrc: 0xCAFE)),
            transport: RecordingTransport())
        defer { sender.finish() }
        for _ in 0..<5 { Self.send(.pictureLossIndication(senderSSRC: 1, mediaSSRC: 0xCAFE), to: sender) }
        #expect(sender.statistics.plisReceived == 5)
        #expect(sender.statistics.keyFramesRequested == 1)
        #expect(sender.statistics.keyFrameRequestsThrottled == 4)
        try await Task.sleep(for: .milliseconds(350))
        Self.send(.pictureLossIndication(senderSSRC: 1, mediaSSRC: 0xCAFE), to: sender)
        #expect(sender.statistics.keyFramesRequested == 2)
    }
}
