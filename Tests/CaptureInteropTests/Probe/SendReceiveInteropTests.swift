import CaptureTestSupport
import Foundation
import Testing

/// `send` and `receive` against independent peers: ffmpeg and GStreamer decode what we send, and we decode what
/// ffmpeg and GStreamer send. Loopback only; every peer runs under `timeout`, so none outlives its test.
@Suite(
    "capturer-probe send/receive interop", .tags(.interop), .selectedByTags, .serialized,
    .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct SendReceiveInteropTests {
    static let width = 320
    static let height = 240

    /// A UDP port pair unlikely to collide with other suites.
    static func port(_ offset: Int) -> Int { 51_200 + (Int(getpid()) % 200) * 10 + offset }

    @Test("ffmpeg opens our SDP and decodes every frame we send, close to the Y4M source (PSNR)")
    func ffmpegReceivesUs() async throws {
        guard RTPPeers.ffmpegAvailable(for: "ffmpeg receives us") else { return }
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("x.sdp").path
        let decoded = directory.appendingPathComponent("ffmpeg.yuv").path
        let source = directory.appendingPathComponent("source.y4m").path
        try await RTPPeers.makeY4M(at: source, width: Self.width, height: Self.height, fps: 30, frames: 60)
        let target = "127.0.0.1:\(Self.port(0))"
        let common = ["--device", source, "--target", "\(Self.width)x\(Self.height)", "--to", target]
        let written = try await Probe.run(["send"] + common + ["--sdp", sdp, "--sdp-only"])
        #expect(written.status == 0, "\(written.stderr)")
        // The newest-frame mailbox rightly drops a frame when the encoder falls behind (a loaded or sanitized run):
        // the frames sent are then a subsequence of the source, so each decoded frame is paired with the best match
        // among the next source frames after the previous one's: the number dropped at the encoder queue ahead, and
        // a few more for frames a starved run drops before it. PSNR over all planes, as ffmpeg's average weighs
        // them, in our own arithmetic on ffmpeg's decoded frames.
        async let receiver = RTPPeers.ffmpegReceive(sdp: sdp, output: decoded, frames: 60, limitSeconds: 25)
        #expect(try await RTPPeers.waitForUDPListener(port: Self.port(0)), "the receiver never bound its port")
        let sent = try await Probe.run(["send"] + common + ["--frames", "60", "--key-frame-interval", "1", "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let report = try sent.json()
        let framesSent = try #require(report["framesSent"] as? Int)
        _ = try await receiver
        #expect(framesSent == 60)
        #expect(RTPPeers.rawFrameCount(decoded, width: Self.width, height: Self.height) == framesSent)
        let dropped = try #require(report["droppedAtEncoderQueue"] as? Int)
        let psnr = try #require(
            try RTPPeers.alignedPSNR(
                decoded: decoded, width: Self.width, height: Self.height, reference: source, maximumSkip: dropped + 5))
        // ffmpeg writes exactly the frames it decoded (-fps_mode passthrough): in its default constant-frame-rate
        // output, each frame dropped at our encoder queue became a copy of the one before, paired here with the next
        // source frame at about 25 dB (17 drops forced by a 40 ms encode delay: 30.8 dB; passthrough: 47.6 dB).
        #expect(
            psnr > 30,
            "mean PSNR of ffmpeg's decoded frames against the Y4M source: \(psnr) dB (\(dropped) dropped at the queue)")
    }

    @Test("GStreamer (udpsrc ! rtpjitterbuffer ! rtpvp8depay ! vp8dec) decodes our stream")
    func gstreamerReceivesUs() async throws {
        guard RTPPeers.gstreamerAvailable(for: "GStreamer receives us") else { return }
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let decoded = directory.appendingPathComponent("gst.yuv").path
        let port = Self.port(2)
        async let receiver = RTPPeers.gstreamerReceive(port: port, output: decoded, limitSeconds: 8)
        #expect(try await RTPPeers.waitForUDPListener(port: port), "the receiver never bound its port")
        let sent = try await Probe.run([
            "send", "--device", "synthetic", "--target", "\(Self.width)x\(Self.height)", "--to", "127.0.0.1:\(port)",
            "--frames", "60", "--json",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        _ = try await receiver
        let frames = RTPPeers.rawFrameCount(decoded, width: Self.width, height: Self.height)
        #expect(frames >= 55 && frames <= 60, "GStreamer decoded \(frames) of 60 frames")
    }

    @Test("our receive decodes every frame GStreamer's rtpvp8pay sends")
    func weReceiveGStreamer() async throws {
        guard RTPPeers.gstreamerAvailable(for: "we receive GStreamer") else { return }
        let port = Self.port(4)
        async let received = Probe.run(["receive", "--port", "\(port)", "--frames", "60", "--seconds", "20", "--json"])
        #expect(try await RTPPeers.waitForUDPListener(port: port), "the receiver never bound its port")
        try await RTPPeers.gstreamerSend(
            port: port, width: Self.width, height: Self.height, frames: 60, limitSeconds: 20)
        let result = try await received
        #expect(result.status == 0, "\(result.stderr)")
        let statistics = try #require(try result.json()["statistics"] as? [String: Any])
        #expect(statistics["framesDecoded"] as? Int == 60)
        #expect(statistics["malformed"] as? Int == 0)
    }

    @Test("our receive decodes every frame ffmpeg's -f rtp sends (libvpx, 60 frames from a Y4M file)")
    func weReceiveFFmpeg() async throws {
        guard RTPPeers.ffmpegAvailable(for: "we receive ffmpeg") else { return }
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("source.y4m").path
        try await RTPPeers.makeY4M(at: source, width: Self.width, height: Self.height, fps: 30, frames: 60)
        let port = Self.port(6)
        async let received = Probe.run(["receive", "--port", "\(port)", "--frames", "60", "--seconds", "25", "--json"])
        #expect(try await RTPPeers.waitForUDPListener(port: port), "the receiver never bound its port")
        try await RTPPeers.ffmpegSend(source: source, port: port, limitSeconds: 20)
        let result = try await received
        #expect(result.status == 0, "\(result.stderr)")
        let statistics = try #require(try result.json()["statistics"] as? [String: Any])
        #expect(statistics["framesDecoded"] as? Int == 60)
        #expect(statistics["framesLost"] as? Int == 0)
        #expect(statistics["decodeErrors"] as? Int == 0)
        #expect(statistics["malformed"] as? Int == 0)
    }

    @Test("bad input: malformed address 11, malformed SDP files 13, malformed SRTP key 14")
    func badInput() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let address = try await Probe.run(["send", "--device", "synthetic", "--to", "not-an-address"])
        #expect(address.status == 11, "\(address.stderr)")
        #expect(address.stderrLines.count == 1)
        let session = "v=0\no=- 1 1 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\n"
        var generator = SeededGenerator(state: 13)
        let noise = (0..<3_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let malformedSDPs: [(name: String, bytes: [UInt8])] = [
            ("bad port", Array("v=0\nm=video banana RTP/AVP\n".utf8)),
            ("empty", []),
            ("no o= line", Array("v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 VP8/90000\n".utf8)),
            ("port out of range", Array((session + "m=video 99999 RTP/AVP 96\na=rtpmap:96 VP8/90000\n").utf8)),
            ("H.264 only", Array((session + "m=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000\n").utf8)),
            ("audio only", Array((session + "m=audio 5004 RTP/AVP 0\n").utf8)),
            ("random bytes", noise),
        ]
        for (index, bad) in malformedSDPs.enumerated() {
            let sdp = directory.appendingPathComponent("bad\(index).sdp")
            try Data(bad.bytes).write(to: sdp)
            let malformed = try await Probe.run(["receive", "--sdp", sdp.path, "--seconds", "1"])
            #expect(malformed.status == 13, "\(bad.name): \(malformed.stderr)")
            #expect(malformed.stderrLines.count == 1, "\(bad.name)")
        }
        let key = try await Probe.run(
            ["send", "--device", "synthetic", "--to", "127.0.0.1:5004", "--srtp-key", "short", "--frames", "1"])
        #expect(key.status == 14, "\(key.stderr)")
        #expect(key.stderrLines.count == 1)
    }

    @Test("5% loss: the receiver sends PLIs, the sender answers with key frames, no frame fails to decode")
    func lossRecovery() async throws {
        let port = Self.port(6)
        async let received = Probe.run([
            "receive", "--port", "\(port)", "--frames", "90", "--seconds", "20", "--loss", "5", "--seed", "3", "--json",
        ])
        #expect(try await RTPPeers.waitForUDPListener(port: port), "the receiver never bound its port")
        let sent = try await Probe.run([
            "send", "--device", "synthetic", "--target", "\(Self.width)x\(Self.height)", "--to", "127.0.0.1:\(port)",
            "--seconds", "6", "--json",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let result = try await received
        #expect(result.status == 0, "\(result.stderr)")
        let receiver = try #require(try result.json()["statistics"] as? [String: Any])
        let sender = try sent.json()
        let dropped = try #require(receiver["packetsDroppedBySimulation"] as? Int)
        let plis = try #require(receiver["plisSent"] as? Int)
        #expect(dropped > 0)
        #expect(plis > 0)
        #expect(receiver["decodeErrors"] as? Int == 0)
        #expect((receiver["framesLost"] as? Int ?? 0) > 0)
        #expect((receiver["framesDecoded"] as? Int ?? 0) > 0)
        #expect((sender["plisReceived"] as? Int ?? 0) > 0)
        #expect((sender["keyFramesRequested"] as? Int ?? 0) > 0)
        #expect((sender["keyFramesSent"] as? Int ?? 0) > 1)
    }

    @Test("with SRTP, ffmpeg reads our a=crypto line and decodes every frame")
    func ffmpegReceivesSRTP() async throws {
        guard RTPPeers.ffmpegAvailable(for: "ffmpeg receives SRTP") else { return }
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("srtp.sdp").path
        let decoded = directory.appendingPathComponent("ffmpeg.yuv").path
        let common = [
            "--device", "synthetic", "--target", "\(Self.width)x\(Self.height)", "--to", "127.0.0.1:\(Self.port(8))",
        ]
        let written = try await Probe.run(["send"] + common + ["--sdp", sdp, "--sdp-only", "--srtp"])
        #expect(written.status == 0, "\(written.stderr)")
        let text = try String(contentsOfFile: sdp, encoding: .utf8)
        #expect(text.contains("RTP/SAVP"))
        let line = try #require(text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("a=crypto:") })
        let key = try #require(line.split(separator: "inline:").last?.split(separator: "|").first)
        async let receiver = RTPPeers.ffmpegReceive(sdp: sdp, output: decoded, frames: 60, limitSeconds: 25)
        #expect(try await RTPPeers.waitForUDPListener(port: Self.port(8)), "the receiver never bound its port")
        let sent = try await Probe.run(
            ["send"] + common + ["--frames", "60", "--key-frame-interval", "1", "--srtp-key", String(key), "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        _ = try await receiver
        #expect(RTPPeers.rawFrameCount(decoded, width: Self.width, height: Self.height) == 60)
    }
}
