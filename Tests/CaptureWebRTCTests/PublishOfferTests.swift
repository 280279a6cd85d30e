import Foundation
import CaptureRTP
import CaptureWebRTC
import Testing

@Suite struct PublishOfferTests {
    static let fingerprint =
        "sha-256 AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"

    static func offer(rtx: Bool = true, candidates: [String] = [], framerate: Double? = nil) -> PublishOffer {
        PublishOffer(
            iceUfrag: "ufrag1234", icePassword: "passwordpasswordpassword", fingerprint: fingerprint,
            streamID: "camera", trackID: "video0", cname: "cname-x", ssrc: 1111,
            rtx: rtx ? PublishOffer.Retransmission(ssrc: 2222) : nil, candidates: candidates, framerate: framerate)
    }

    static let requiredLines = [
        "v=0",
        "a=group:BUNDLE 0",
        "a=extmap-allow-mixed",
        "a=msid-semantic: WMS camera",
        "a=ice-options:trickle",
        "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
        "c=IN IP4 0.0.0.0",
        "a=rtcp:9 IN IP4 0.0.0.0",
        "a=ice-ufrag:ufrag1234",
        "a=ice-pwd:passwordpasswordpassword",
        "a=fingerprint:\(fingerprint)",
        "a=setup:actpass",
        "a=mid:0",
        "a=sendonly",
        "a=msid:camera video0",
        "a=rtcp-mux",
        "a=rtcp-mux-only",
        "a=rtcp-rsize",
        "a=rtpmap:96 VP8/90000",
        "a=rtcp-fb:96 goog-remb",
        "a=rtcp-fb:96 transport-cc",
        "a=rtcp-fb:96 ccm fir",
        "a=rtcp-fb:96 nack",
        "a=rtcp-fb:96 nack pli",
        "a=rtpmap:97 rtx/90000",
        "a=fmtp:97 apt=96",
        "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid",
        "a=extmap:2 urn:3gpp:video-orientation",
        "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
        "a=ssrc-group:FID 1111 2222",
        "a=ssrc:1111 cname:cname-x",
        "a=ssrc:1111 msid:camera video0",
        "a=ssrc:2222 cname:cname-x",
        "a=ssrc:2222 msid:camera video0",
    ]

    @Test func containsEveryRequiredLineWithCRLF() {
        let text = Self.offer().render()
        #expect(text.hasSuffix("\r\n"))
        // Every "\n" is preceded by "\r" (Swift treats "\r\n" as one Character, so count on the UTF-8 bytes).
        let bytes = Array(text.utf8)
        let newlines = bytes.indices.filter { bytes[$0] == 0x0A }
        #expect(newlines.allSatisfy { $0 > 0 && bytes[$0 - 1] == 0x0D })
        #expect(newlines.count == bytes.filter { $0 == 0x0D }.count)
        let lines = text.components(separatedBy: "\r\n")
        for line in Self.requiredLines { #expect(lines.contains(line), "missing \(line)") }
        #expect(!lines.contains { $0.hasPrefix("a=candidate") || $0 == "a=end-of-candidates" })
        #expect(!lines.contains { $0.hasPrefix("a=framerate") })
        // Session attributes precede the m-line, and the m-line's c= follows it directly.
        let mLine = lines.firstIndex(of: "m=video 9 UDP/TLS/RTP/SAVPF 96 97") ?? 0
        #expect((lines.firstIndex(of: "a=group:BUNDLE 0") ?? .max) < mLine)
        #expect(lines[mLine + 1] == "c=IN IP4 0.0.0.0")
    }

    @Test func parsesBackWithCaptureRTPsParser() throws {
        let offer = Self.offer(framerate: 30)
        let description = try SessionDescription(parsing: offer.render())
        #expect(description == offer.makeDescription())
        #expect(description.media.count == 1)
        let media = try #require(description.media.first)
        #expect(media.formats == ["96", "97"])
        #expect(media.attributeValues("framerate") == ["30"])
        let video = try VideoSessionParameters(description: description)
        #expect(video.payloadType == 96)
        #expect(video.ssrc == 1111)
        #expect(video.cname == "cname-x")
        #expect(video.rtcpMux)
        #expect(video.videoOrientationExtensionID == 2)
        #expect(video.framerate == 30)
    }

    @Test func withoutRetransmissionHasNoRTX() throws {
        let text = Self.offer(rtx: false).render()
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.contains("m=video 9 UDP/TLS/RTP/SAVPF 96"))
        #expect(!text.contains("rtx/90000"))
        #expect(!text.contains("apt="))
        #expect(!text.contains("ssrc-group"))
        #expect(!text.contains("2222"))
        #expect(lines.contains("a=ssrc:1111 cname:cname-x"))
        #expect(lines.contains("a=rtcp-fb:96 nack"))
        _ = try SessionDescription(parsing: text)
    }

    @Test func candidatesKnownAtOfferTimeEndTheList() {
        let text = Self.offer(candidates: [
            "1 1 udp 2130706431 10.0.0.1 5000 typ host", "candidate:2 1 udp 1694498815 203.0.113.7 5000 typ srflx",
        ]).render()
        let lines = text.components(separatedBy: "\r\n")
        let first = lines.firstIndex(of: "a=candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host")
        let second = lines.firstIndex(of: "a=candidate:2 1 udp 1694498815 203.0.113.7 5000 typ srflx")
        let end = lines.firstIndex(of: "a=end-of-candidates")
        #expect(first != nil && second != nil && end != nil)
        if let first, let second, let end { #expect(first < second && second < end) }
    }

    @Test func extensionIDsAreConfigurable() {
        var offer = Self.offer()
        offer.extensionIDs = PublishOffer.HeaderExtensionIDs(mid: 4, videoOrientation: nil, transportWideCC: 9)
        let lines = offer.render().components(separatedBy: "\r\n")
        #expect(lines.contains("a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid"))
        #expect(!lines.contains { $0.contains("video-orientation") })
        #expect(lines.contains("a=extmap:9 \(PublishOffer.transportWideCCExtensionURI)"))
    }

    @Test func ourOwnOfferIsNotAUsableAnswer() throws {
        // Our own offer is not a valid answer: sendonly and actpass are both refused.
        #expect(throws: PublishAnswerError.invalidSetupRole("actpass")) {
            try PublishAnswer(parsing: Self.offer().render())
        }
    }
}
