import CaptureTestSupport
import Foundation
import Testing

import CaptureNet
@testable import CaptureRTP

/// GStreamer's `rtpvp8pay` as an independent sender: its packets go through our UDP socket into our assembler.
@Suite("RTP interop with GStreamer", .tags(.interop), .selectedByTags)
struct RTPGStreamerInteropTests {
    static let haveGStreamer = ExternalProcess.which("gst-launch-1.0") != nil

    @Test(
        "frames from GStreamer's rtpvp8pay reassemble, with key frames and picture IDs",
        .enabled(if: haveGStreamer, "gst-launch-1.0 missing"))
    func rtpvp8pay() async throws {
        let socket = try UDPSocket(bindingTo: .loopbackIPv4(port: 0))
        defer { socket.close() }
        let frameCount = 30
        let result = try await ExternalProcess.run(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=\(frameCount)", "!",
                "video/x-raw,width=160,height=120,framerate=30/1", "!", "vp8enc", "keyframe-max-dist=10",
                "deadline=1", "!", "rtpvp8pay", "pt=96", "mtu=1200", "picture-id-mode=15-bit", "!", "udpsink",
                "host=127.0.0.1", "port=\(socket.localAddress.port)", "sync=false",
            ])
        #expect(result.status == 0, "gst-launch-1.0 failed: \(result.stderrText)")
        // GStreamer has exited: every datagram is in the socket's receive buffer.
        let assembler = VP8FrameAssembler()
        var frames: [AssembledFrame] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        var clock: UInt64 = 1_000_000_000
        while true {
            let received = try buffer.withUnsafeMutableBytes {
                try socket.receive(into: $0, timeout: .milliseconds(200))
            }
            guard let (count, _) = received else { break }
            clock += 1_000_000
            for event in buffer.withUnsafeBytes({
                assembler.insert(UnsafeRawBufferPointer(rebasing: $0[0..<count]), arrivalTimeNs: clock)
            }) {
                if case .frame(let frame) = event { frames.append(frame) }
            }
        }
        #expect(frames.count == frameCount)
        #expect(frames.filter(\.isKeyFrame).count == 3)
        #expect(frames.first?.isKeyFrame == true)
        for frame in frames where frame.isKeyFrame {
            // RFC 6386 §9.1: a key frame's tag is followed by the start code 9d 01 2a.
            #expect(Array(frame.bytes[3..<6]) == [0x9D, 0x01, 0x2A])
        }
        let pictureIDs = frames.compactMap(\.pictureID)
        #expect(pictureIDs.count == frameCount)
        #expect(zip(pictureIDs, pictureIDs.dropFirst()).allSatisfy { ($0 + 1) & 0x7FFF == $1 })
        // 30 fps at 90 kHz: 3000 ticks apart, give or take GStreamer's rounding of 33.333 ms.
        #expect(
            zip(frames, frames.dropFirst()).allSatisfy { (2999...3001).contains($1.rtpTimestamp &- $0.rtpTimestamp) })
        let statistics = assembler.statistics
        #expect(statistics.lost == 0 && statistics.malformed == 0 && statistics.framesDropped == 0)
    }
}
