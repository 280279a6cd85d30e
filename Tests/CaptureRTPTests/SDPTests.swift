import CaptureRTP
import Foundation
import Testing

/// SDP rendering, parsing and the VP8 video facade.
@Suite struct SDPTests {
    static let ffmpegStyle = """
        v=0
        o=- 0 0 IN IP4 127.0.0.1
        s=No Name
        c=IN IP4 127.0.0.1
        t=0 0
        a=tool:libavformat 60.16.100
        m=video 5004 RTP/AVP 96
        b=AS:200
        a=rtpmap:96 VP8/90000

        """

    @Test func fullParametersRoundTripThroughText() throws {
        let parameters = VideoSessionParameters(
            address: "127.0.0.1", port: 5004, rtcpPort: 5009, rtcpMux: true, framerate: 30,
            videoOrientationExtensionID: 3, crypto: .random(), ssrc: 0x1234_5678, cname: "camera@host")
        let text = parameters.makeDescription().render()
        #expect(text.hasSuffix("\r\n"))
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        for line in [
            "v=0", "c=IN IP4 127.0.0.1", "t=0 0", "m=video 5004 RTP/SAVP 96", "a=rtpmap:96 VP8/90000",
            "a=framerate:30", "a=rtcp:5009", "a=rtcp-mux", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli",
            "a=rtcp-fb:96 ccm fir", "a=rtcp-fb:96 goog-remb", "a=extmap:3 urn:3gpp:video-orientation",
            "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(parameters.crypto?.base64 ?? "")",
            "a=ssrc:305419896 cname:camera@host",
        ] {
            #expect(text.contains(line + "\r\n"), "missing \(line)")
        }
        let description = try SessionDescription(parsing: text)
        #expect(description == parameters.makeDescription())
        #expect(try VideoSessionParameters(description: description) == parameters)
    }

    @Test func ipv6PlainRTPWithoutExtras() throws {
        let parameters = VideoSessionParameters(address: "::1", port: 40000, rtcpFeedback: [])
        let text = parameters.makeDescription().render()
        #expect(text.contains("c=IN IP6 ::1\r\n"))
        #expect(text.contains("m=video 40000 RTP/AVP 96\r\n"))
        #expect(try VideoSessionParameters(description: SessionDescription(parsing: text)) == parameters)
    }

    @Test func ffmpegStyleLFOnlyDescriptionParses() throws {
        let description = try SessionDescription(parsing: Self.ffmpegStyle)
        #expect(description.sessionName == "No Name")
        #expect(description.attributes == [.init("tool", "libavformat 60.16.100")])
        #expect(description.media.first?.bandwidths == [.init(type: "AS", value: 200)])
        let video = try VideoSessionParameters(description: description)
        #expect(video.address == "127.0.0.1")
        #expect(video.port == 5004)
        #expect(video.payloadType == 96)
        #expect(video.codecName == "VP8" && video.clockRate == 90000)
        #expect(video.crypto == nil && !video.rtcpMux && video.rtcpFeedback.isEmpty)
        // Re-rendering keeps every line, now with CRLF.
        #expect(description.render() == Self.ffmpegStyle.replacingOccurrences(of: "\n", with: "\r\n"))
    }

    @Test func gstreamerStyleMediaConnectionAndCrypto() throws {
        let keys = SRTPKeyingMaterial.random()
        let text = """
            v=0\r
            o=- 1188340656180883 1 IN IP4 192.0.2.1\r
            s=Session streamed by GStreamer\r
            i=server\r
            t=0 0\r
            a=tool:GStreamer\r
            m=video 6000 RTP/SAVP 97 96\r
            c=IN IP4 127.0.0.1/64\r
            a=rtpmap:97 H264/90000\r
            a=rtpmap:96 VP8/90000\r
            a=x-framerate:25\r
            a=rtcp:6005 IN IP4 127.0.0.1\r
            a=rtcp-fb:* nack\r
            a=rtcp-fb:97 ccm fir\r
            a=extmap:2/sendonly urn:3gpp:video-orientation\r
            a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(keys.base64)|2^31|1:1\r
            a=ssrc:42 cname:gst\r

            """
        let video = try VideoSessionParameters(description: SessionDescription(parsing: text))
        #expect(video.address == "127.0.0.1")
        #expect(video.payloadType == 96)
        #expect(video.framerate == 25)
        #expect(video.rtcpPort == 6005)
        #expect(video.rtcpFeedback == ["nack"])
        #expect(video.videoOrientationExtensionID == 2)
        #expect(video.crypto == keys)
        #expect(video.ssrc == 42 && video.cname == "gst")
    }

    @Test(
        "malformed descriptions are rejected naming the line",
        arguments: [
            ("o=- 0 0 IN IP4 x\ns=x\n", 1, SDPParseError.Reason.missingOrUnsupportedVersion),
            ("v=1\n", 1, .missingOrUnsupportedVersion),
            ("v=0\no=- 0 0 IN IP4\ns=x\n", 2, .malformedOrigin),
            ("v=0\no=- abc 0 IN IP4 h\ns=x\n", 2, .malformedOrigin),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nthis is not sdp\n", 4, .notATypeValueLine),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nc=IN IP4\n", 4, .malformedConnection),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nb=AS\n", 4, .malformedBandwidth),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nt=0\n", 4, .malformedTiming),
            ("v=0\r\no=- 0 0 IN IP4 h\r\ns=x\r\nt=0 0\r\nm=video 70000 RTP/AVP 96\r\n", 5, .malformedMedia),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nt=0 0\nm=video 5004 RTP/AVP\n", 5, .malformedMedia),
            ("v=0\no=- 0 0 IN IP4 h\ns=x\nv=0\n", 4, .unexpectedLine("v")),
        ])
    func malformed(text: String, line: Int, reason: SDPParseError.Reason) {
        #expect(
            throws: SDPParseError(
                lineNumber: line, line: String(text.split(whereSeparator: \.isNewline)[line - 1]), reason: reason)
        ) {
            try SessionDescription(parsing: text)
        }
    }

    @Test func missingRequiredLinesAndVideoFacadeErrors() throws {
        #expect(throws: SDPParseError(lineNumber: nil, line: "", reason: .missingLine("s"))) {
            try SessionDescription(parsing: "v=0\no=- 0 0 IN IP4 h\n")
        }
        #expect(throws: SDPParseError(lineNumber: nil, line: "", reason: .missingOrUnsupportedVersion)) {
            try SessionDescription(parsing: "\n\n")
        }
        let noVideo = try SessionDescription(parsing: "v=0\no=- 0 0 IN IP4 h\ns=x\nm=audio 5000 RTP/AVP 0\n")
        #expect(throws: SDPParseError(lineNumber: nil, line: "", reason: .noVideoMedia)) {
            try VideoSessionParameters(description: noVideo)
        }
        let h264 = try SessionDescription(
            parsing: "v=0\no=- 0 0 IN IP4 h\ns=x\nc=IN IP4 h\nm=video 5000 RTP/AVP 96\na=rtpmap:96 H264/90000\n")
        #expect(throws: SDPParseError(lineNumber: nil, line: "", reason: .noVP8PayloadType)) {
            try VideoSessionParameters(description: h264)
        }
        let noAddress = try SessionDescription(
            parsing: "v=0\no=- 0 0 IN IP4 h\ns=x\nm=video 5000 RTP/AVP 96\na=rtpmap:96 VP8/90000\n")
        #expect(throws: SDPParseError(lineNumber: nil, line: "", reason: .missingConnection)) {
            try VideoSessionParameters(description: noAddress)
        }
        let badSuite = try SessionDescription(
            parsing: "v=0\no=- 0 0 IN IP4 h\ns=x\nc=IN IP4 h\nm=video 5000 RTP/SAVP 96\na=rtpmap:96 VP8/90000\n"
                + "a=crypto:1 F8_128_HMAC_SHA1_80 inline:AAAA\n")
        #expect(
            throws: SDPParseError(lineNumber: nil, line: "", reason: .unsupportedCryptoSuite("F8_128_HMAC_SHA1_80"))
        ) {
            try VideoSessionParameters(description: badSuite)
        }
    }
}
