import CaptureCore
import CaptureRTP
import CaptureTestSupport
import Foundation
import Testing

/// ffmpeg as an independent peer: its `-sdp_file` and RTCP sender reports parse, and it opens the SDP we write.
@Suite(.tags(.interop), .selectedByTags, .serialized) struct SDPFFmpegTests {
    static let haveFFmpeg = ExternalProcess.which("ffmpeg") != nil

    /// ffmpeg arguments that encode `seconds` of a test pattern to VP8 in real time.
    static func vp8Source(seconds: Int) -> [String] {
        [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=15",
            "-t", "\(seconds)", "-c:v", "libvpx", "-g", "15", "-deadline", "realtime", "-b:v", "200k",
        ]
    }

    @Test(.enabled(if: haveFFmpeg, "ffmpeg is not installed"), .timeLimit(.minutes(1)))
    func ffmpegSDPFileAndRTCPSenderReportsParse() async throws {
        let (rtp, rtcp) = try SRTPLoopbackSocket.pair()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdpPath = directory.appendingPathComponent("ffmpeg.sdp").path

        let done = Locked(false)
        async let media = rtp.collect(until: done)
        async let reports = rtcp.collect(until: done)
        let result = try await ExternalProcess.run(
            "ffmpeg", Self.vp8Source(seconds: 1) + ["-f", "rtp", "-sdp_file", sdpPath, "rtp://127.0.0.1:\(rtp.port)"])
        done.withLock { $0 = true }
        #expect(result.status == 0, "\(result.stderrText)")
        let (packets, datagrams) = await (media, reports)
        #expect(!packets.isEmpty)

        let description = try SessionDescription(parsing: String(contentsOfFile: sdpPath, encoding: .utf8))
        let video = try VideoSessionParameters(description: description)
        #expect(video.address == "127.0.0.1")
        #expect(video.port == rtp.port)
        #expect(video.codecName == "VP8" && video.clockRate == 90000)
        #expect(packets.allSatisfy { $0.count > 12 && $0[1] & 0x7F == video.payloadType })

        let parsed = try datagrams.map { (datagram) throws(RTCPParseError) in try parseRTCP(datagram) }
        let all = parsed.flatMap { $0 }
        let reportsSeen = all.compactMap { if case .senderReport(let report) = $0 { report } else { nil } }
        try #require(!reportsSeen.isEmpty, "no sender report among \(datagrams.count) RTCP datagrams")
        let mediaSSRC =
            UInt32(packets[0][8]) << 24 | UInt32(packets[0][9]) << 16 | UInt32(packets[0][10]) << 8
            | UInt32(packets[0][11])
        #expect(reportsSeen.allSatisfy { $0.ssrc == mediaSSRC })
        #expect(reportsSeen.last.map { $0.ntpTimestamp.seconds > 3_900_000_000 } == true)
        // ffmpeg's plain `-f rtp` sends a bare SR at the start (no SDES, no BYE at the end).
        // What ffmpeg sent serializes back to the same bytes.
        for (datagram, packets) in zip(datagrams, parsed) {
            #expect(RTCPCompoundPacket.serialize(packets) == datagram)
        }
    }

    @Test(.enabled(if: haveFFmpeg, "ffmpeg is not installed"), .timeLimit(.minutes(1)))
    func ffmpegOpensTheSDPWeWrite() async throws {
        // A free port: bind, note it, release it for the receiving ffmpeg.
        let port = try SRTPLoopbackSocket.pair().0.port
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdpPath = directory.appendingPathComponent("ours.sdp")
        let parameters = VideoSessionParameters(address: "127.0.0.1", port: port, framerate: 15)
        try parameters.makeDescription().render().write(to: sdpPath, atomically: true, encoding: .utf8)

        async let receiver = ExternalProcess.run(
            "timeout",
            [
                "20", "ffmpeg", "-hide_banner", "-protocol_whitelist", "file,udp,rtp", "-i", sdpPath.path,
                "-frames:v", "10", "-f", "null", "-",
            ])
        try await Task.sleep(for: .seconds(1))
        let sender = try await ExternalProcess.run(
            "ffmpeg", Self.vp8Source(seconds: 4) + ["-f", "rtp", "rtp://127.0.0.1:\(port)"])
        let received = try await receiver
        #expect(sender.status == 0, "\(sender.stderrText)")
        #expect(received.status == 0, "\(received.stderrText)")
        #expect(received.stderrText.contains("Video: vp8"), "\(received.stderrText)")
        #expect(received.stderrText.contains("frame=   10") || received.stderrText.contains("frame=10"))
    }
}
