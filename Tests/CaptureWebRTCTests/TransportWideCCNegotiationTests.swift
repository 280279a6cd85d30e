import CaptureDTLS
import CaptureICE
import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

/// Transport-wide congestion control in the SDP both ways: our WHIP offer and Janus's answer, a browser's WHEP offer
/// and the preview's answer. It is on only when both the extension and `transport-cc` were agreed.
@Suite("TWCC negotiation: the extmap and transport-cc in WHIP and WHEP")
struct TransportWideCCNegotiationTests {
    static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    @Test("our WHIP offer: the extension under 3 (mid 1, orientation 2, as Chromium) and transport-cc for VP8")
    func publishOfferOffersIt() throws {
        let text = PublishOffer(
            iceUfrag: "u", icePassword: "p", fingerprint: "sha-256 AB:CD", streamID: "s", trackID: "t", cname: "c",
            ssrc: 1, rtx: PublishOffer.Retransmission(ssrc: 2)
        ).render()
        #expect(text.contains("a=extmap:3 \(Self.uri)\r\n"))
        #expect(text.contains("a=rtcp-fb:96 transport-cc\r\n"))
        let ids = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=extmap:") }.map {
            $0.dropFirst("a=extmap:".count).prefix { $0 != " " }
        }
        #expect(ids == ["1", "2", "3"], "distinct ids")
    }

    @Test("Janus's real answer accepts both: TWCC on, under 3")
    func janusAnswerTurnsItOn() throws {
        let answer = try PublishAnswer(parsing: PublishAnswerTests.janusAnswer())
        #expect(answer.transportWideCCExtensionID == 3)
    }

    @Test(
        "an answer with only one of the two, or an id outside 1...14, leaves TWCC off",
        arguments: [
            ("a=rtcp-fb:96 transport-cc", ""),
            ("a=extmap:3 \(uri)", ""),
            ("a=extmap:3 \(uri)", "a=extmap:15 \(uri)"),
        ])
    func partialAnswerLeavesItOff(line: String, replacement: String) throws {
        let text = try PublishAnswerTests.janusAnswer(replacing: line, with: replacement)
        let answer = try PublishAnswer(parsing: text)
        #expect(answer.transportWideCCExtensionID == nil)
    }

    @Test("a browser offering the extension and transport-cc: the viewer offer keeps its id, the answer returns both")
    func viewerOfferAndAnswer() throws {
        var lines = ViewerOfferTests.chromium
        let extmapAt = try #require(lines.firstIndex { $0.hasPrefix("a=extmap:13") })
        lines.insert("a=extmap:5 \(Self.uri)", at: extmapAt + 1)
        let feedbackAt = try #require(lines.firstIndex(of: "a=rtcp-fb:96 nack"))
        lines.insert("a=rtcp-fb:96 transport-cc", at: feedbackAt)
        let offer = try ViewerOffer(parsing: ViewerOfferTests.offer(lines))
        #expect(offer.transportWideCCExtensionID == 5)
        let answer = try Self.answer(to: offer)
        #expect(answer.contains("a=extmap:5 \(Self.uri)\r\n"))
        #expect(answer.contains("a=rtcp-fb:96 transport-cc\r\n"))
        #expect(answer.components(separatedBy: "transport-cc").count == 2, "listed once")
    }

    @Test("a browser offering the extension without transport-cc (or neither): the answer has neither")
    func viewerOfferWithoutFeedback() throws {
        var lines = ViewerOfferTests.chromium
        let extmapAt = try #require(lines.firstIndex { $0.hasPrefix("a=extmap:13") })
        lines.insert("a=extmap:5 \(Self.uri)", at: extmapAt + 1)
        for offered in [ViewerOfferTests.chromium, lines] {
            let offer = try ViewerOffer(parsing: ViewerOfferTests.offer(offered))
            #expect(offer.transportWideCCExtensionID == nil)
            let answer = try Self.answer(to: offer)
            #expect(!answer.contains(Self.uri))
            #expect(!answer.contains("transport-cc"))
        }
    }

    static func answer(to offer: ViewerOffer) throws -> String {
        ViewerAnswer(
            offer: offer, iceCredentials: ICECredentials(ufrag: "ufrag", password: "0123456789abcdefghijkl"),
            fingerprint: try DTLSCertificate().fingerprint, setup: "passive", ssrc: 1, rtxSSRC: 2, cname: "c",
            candidates: ["1 1 udp 2130706431 127.0.0.1 5000 typ host"]
        ).render()
    }
}
