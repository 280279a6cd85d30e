import CaptureCore
import CaptureRTP
import CaptureTestSupport
import Testing

/// ffmpeg sends SRTP with our random key; our receiver session unprotects every packet (key format and profile match).
@Suite(.tags(.interop), .selectedByTags, .serialized) struct SRTPFFmpegInteropTests {
    @Test(.enabled(if: SDPFFmpegTests.haveFFmpeg, "ffmpeg is not installed"), .timeLimit(.minutes(1)))
    func ffmpegSRTPUnprotectsWithOurKey() async throws {
        let keys = SRTPKeyingMaterial.random()
        let (rtp, rtcp) = try SRTPLoopbackSocket.pair()
        let done = Locked(false)
        async let media = rtp.collect(until: done)
        async let reports = rtcp.collect(until: done)
        let result = try await ExternalProcess.run(
            "ffmpeg",
            SDPFFmpegTests.vp8Source(seconds: 1) + [
                "-f", "rtp", "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80", "-srtp_out_params", keys.base64,
                "srtp://127.0.0.1:\(rtp.port)",
            ])
        done.withLock { $0 = true }
        #expect(result.status == 0, "\(result.stderrText)")
        let (packets, datagrams) = await (media, reports)
        try #require(packets.count >= 10, "only \(packets.count) SRTP packets arrived")

        let receiver = try SRTPSession(role: .receiver, keyingMaterial: keys)
        for packet in packets {
            let plain = try unprotect(packet, receiver)
            #expect(plain.count == packet.count - 10)  // the 80-bit tag
            #expect(plain[0] >> 6 == 2 && plain[1] & 0x7F == 96)
        }
        #expect(receiver.statistics.unprotected == UInt64(packets.count))
        #expect(receiver.statistics.authenticationFailures == 0)

        // SRTCP on the next port: sender reports that parse once unprotected.
        var reportsSeen = 0
        for datagram in datagrams {
            let plain = try unprotect(datagram, receiver, rtcp: true)
            reportsSeen += try parseRTCP(plain).filter { if case .senderReport = $0 { true } else { false } }.count
        }
        #expect(reportsSeen > 0)

        // The same packets under another key all fail authentication, and are counted.
        let stranger = try SRTPSession(role: .receiver, keyingMaterial: .random())
        for packet in packets.prefix(5) {
            #expect(throws: SRTPError.authenticationFailed) { try unprotect(packet, stranger) }
        }
        #expect(stranger.statistics.authenticationFailures == 5)
    }
}
