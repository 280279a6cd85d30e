import Foundation
import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Testing

@Suite struct PublishAnswerTests {
    static func janusAnswer() throws -> String { try Fixtures.text("webrtc/janus-videoroom-answer.sdp") }

    /// The fixture with `old` replaced by `new` (the whole line, CRLF kept); `new` empty removes the line.
    static func janusAnswer(replacing old: String, with new: String) throws -> String {
        let text = try janusAnswer()
        #expect(text.contains(old + "\r\n"), "fixture lacks \(old)")
        return text.replacingOccurrences(of: old + "\r\n", with: new.isEmpty ? "" : new + "\r\n")
    }

    @Test func readsJanusVideoRoomAnswer() throws {
        let answer = try PublishAnswer(parsing: Self.janusAnswer())
        #expect(answer.iceUfrag == "x3Qv")
        #expect(answer.icePassword == "mVvXN2xLgm9c3E4kDXPeDw")
        #expect(!answer.iceLite)
        #expect(answer.candidates == ["1 1 udp 2015363327 127.0.0.1 40312 typ host"])
        #expect(answer.endOfCandidates)
        #expect(answer.fingerprint.algorithm == "sha-256")
        #expect(answer.fingerprint.value.hasPrefix("D2:B9:31:8F"))
        #expect(answer.fingerprint.attributeValue.hasPrefix("sha-256 D2:B9"))
        #expect(answer.setup == .active)
        #expect(answer.payloadType == 96)
        #expect(answer.rtxPayloadType == 97)
        #expect(answer.rtcpFeedback == ["ccm fir", "nack", "nack pli", "goog-remb", "transport-cc"])
        #expect(
            answer.extensionIDs == [
                PublishOffer.midExtensionURI: 1, PublishOffer.videoOrientationExtensionURI: 2,
                PublishOffer.transportWideCCExtensionURI: 3,
            ])
        #expect(answer.direction == .recvonly)
        #expect(answer.mid == "0")
        #expect(answer.rtcpMux)
    }

    @Test func acceptsLFLineEndsMediaLevelFingerprintAndIceLite() throws {
        var text = try Self.janusAnswer(replacing: "a=ice-options:trickle", with: "a=ice-lite")
        let fingerprint = try #require(text.components(separatedBy: "\r\n").first { $0.hasPrefix("a=fingerprint:") })
        text = text.replacingOccurrences(of: fingerprint + "\r\n", with: "")
        text = text.replacingOccurrences(of: "a=setup:active\r\n", with: "a=setup:passive\r\n" + fingerprint + "\r\n")
        text = text.replacingOccurrences(of: "\r\n", with: "\n")
        let answer = try PublishAnswer(parsing: text)
        #expect(answer.iceLite)
        #expect(answer.setup == .passive)
        #expect(answer.fingerprint.value.hasPrefix("D2:B9"))
    }

    @Test func sessionLevelCredentialsAndNoRTX() throws {
        var text = try Self.janusAnswer(replacing: "a=ice-ufrag:x3Qv", with: "")
        text = text.replacingOccurrences(
            of: "a=extmap-allow-mixed\r\n", with: "a=extmap-allow-mixed\r\na=ice-ufrag:sess\r\n")
        text = text.replacingOccurrences(of: "a=fmtp:97 apt=96\r\n", with: "")
        let answer = try PublishAnswer(parsing: text)
        #expect(answer.iceUfrag == "sess")
        #expect(answer.rtxPayloadType == nil)
    }

    @Test func inactiveIsAcceptedAsADirection() throws {
        let answer = try PublishAnswer(parsing: Self.janusAnswer(replacing: "a=recvonly", with: "a=inactive"))
        #expect(answer.direction == .inactive)
    }

    static let malformed: [(String, String, PublishAnswerError)] = [
        ("m=video 9 UDP/TLS/RTP/SAVPF 96 97", "m=audio 9 UDP/TLS/RTP/SAVPF 111", .noVideoMedia),
        ("m=video 9 UDP/TLS/RTP/SAVPF 96 97", "m=video 0 UDP/TLS/RTP/SAVPF 96 97", .videoRejected),
        ("a=rtpmap:96 VP8/90000", "a=rtpmap:96 H264/90000", .noVP8PayloadType),
        ("m=video 9 UDP/TLS/RTP/SAVPF 96 97", "m=video 9 UDP/TLS/RTP/SAVPF 97", .noVP8PayloadType),
        ("a=rtpmap:96 VP8/90000", "a=rtpmap:x VP8/90000", .malformedAttribute("rtpmap:x VP8/90000")),
        ("a=ice-ufrag:x3Qv", "", .missingICEUfrag),
        ("a=ice-pwd:mVvXN2xLgm9c3E4kDXPeDw", "", .missingICEPassword),
        ("a=setup:active", "a=setup:actpass", .invalidSetupRole("actpass")),
        ("a=setup:active", "a=setup:holdconn", .invalidSetupRole("holdconn")),
        ("a=setup:active", "", .missingSetupRole),
        ("a=recvonly", "a=sendonly", .unexpectedDirection("sendonly")),
        ("a=recvonly", "", .unexpectedDirection("sendrecv")),
        (
            "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid", "a=extmap:x urn:ietf:params:rtp-hdrext:sdes:mid",
            .malformedAttribute("extmap:x urn:ietf:params:rtp-hdrext:sdes:mid")
        ),
    ]

    @Test(arguments: malformed)
    func rejectsUnusableAnswers(old: String, new: String, expected: PublishAnswerError) throws {
        let text = try Self.janusAnswer(replacing: old, with: new)
        #expect(throws: expected) { try PublishAnswer(parsing: text) }
    }

    @Test func rejectsMissingOrMalformedFingerprint() throws {
        let text = try Self.janusAnswer()
        let line = try #require(text.components(separatedBy: "\r\n").first { $0.hasPrefix("a=fingerprint:") })
        #expect(throws: PublishAnswerError.missingFingerprint) {
            try PublishAnswer(parsing: text.replacingOccurrences(of: line + "\r\n", with: ""))
        }
        #expect(throws: PublishAnswerError.malformedFingerprint("sha-256")) {
            try PublishAnswer(parsing: text.replacingOccurrences(of: line, with: "a=fingerprint:sha-256"))
        }
        #expect(throws: PublishAnswerError.malformedFingerprint("sha-256 not-hex")) {
            try PublishAnswer(parsing: text.replacingOccurrences(of: line, with: "a=fingerprint:sha-256 not-hex"))
        }
    }

    @Test func rejectsTextThatIsNotSDP() {
        #expect {
            try PublishAnswer(parsing: "<html>502 Bad Gateway</html>")
        } throws: { error in
            guard case .malformedSDP(let parseError) = error as? PublishAnswerError else { return false }
            return parseError.lineNumber == 1
        }
        #expect(throws: PublishAnswerError.self) { try PublishAnswer(parsing: "") }
    }

    @Test func errorsDescribeWhatIsMissing() {
        #expect(PublishAnswerError.missingFingerprint.description.contains("a=fingerprint"))
        #expect(PublishAnswerError.videoRejected.description.contains("port 0"))
    }
}
