import CaptureTestSupport
import Testing

@testable import CaptureWebRTC

/// Which simulcast layers a publisher sends, from real Janus 1.1.2 answers to our offers
/// (`Fixtures/webrtc/janus-simulcast/`): the accepted rids counted from the lowest layer up, the rest listed.
@Suite("WHIPPublisher: the simulcast layers an answer lets it send")
struct PublisherSimulcastLayersTests {
    static func answer(_ name: String) throws -> PublishAnswer {
        try PublishAnswer(parsing: Fixtures.text("webrtc/janus-simulcast/\(name).sdp"))
    }

    @Test("Janus accepts h;m;l: three layers, nothing rejected")
    func allThree() throws {
        let (layers, rejected) = WHIPPublisher.acceptedLayers(
            offered: ["l", "m", "h"], answer: try Self.answer("answer-hml"))
        #expect(layers == 3)
        #expect(rejected.isEmpty)
    }

    @Test("a paused middle layer (h;~m;l): only the lowest is sent, since a layer needs every layer under it")
    func pausedMiddle() throws {
        let (layers, rejected) = WHIPPublisher.acceptedLayers(
            offered: ["l", "m", "h"], answer: try Self.answer("answer-paused-m"))
        #expect(layers == 1, "h is accepted, but not sent without m under it")
        #expect(rejected == ["m"], "only what the answer did not accept is listed")
    }

    @Test("an answer accepting rids we did not offer: they are listed as rejected, the offered ones still counted")
    func unknownRid() throws {
        var answer = try Self.answer("answer-hml")
        answer.simulcast = AnsweredSimulcast(accepted: ["h", "m", "l", "x"], paused: ["y"])
        let (layers, rejected) = WHIPPublisher.acceptedLayers(offered: ["l", "m", "h"], answer: answer)
        #expect(layers == 3)
        #expect(rejected == ["x", "y"])
    }

    @Test("an answer without simulcast, or without the rid extension: one stream, every rid rejected")
    func noSimulcast() throws {
        var answer = try Self.answer("answer-hml")
        answer.simulcast = nil
        #expect(WHIPPublisher.acceptedLayers(offered: ["l", "m", "h"], answer: answer) == (1, ["l", "m", "h"]))
        var noRid = try Self.answer("answer-hml")
        noRid.extensionIDs.removeValue(forKey: "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id")
        #expect(WHIPPublisher.acceptedLayers(offered: ["l", "m", "h"], answer: noRid).layers == 1)
        #expect(WHIPPublisher.acceptedLayers(offered: ["l"], answer: try Self.answer("answer-hml")) == (1, []))
    }
}
