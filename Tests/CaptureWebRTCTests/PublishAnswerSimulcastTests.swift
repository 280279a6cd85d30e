import CaptureRTP
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

@Suite("PublishAnswer: what a simulcast answer accepts (RFC 8851, 8853), from real Janus 1.1.2 answers")
struct PublishAnswerSimulcastTests {
    static func fixture(_ name: String) throws -> String { try Fixtures.text("webrtc/janus-simulcast/\(name).sdp") }

    /// The three-layer Janus answer with `old` replaced by `new` (the line must be there).
    static func answer(replacing old: String, with new: String) throws -> String {
        let text = try fixture("answer-hml")
        #expect(text.contains(old), "the fixture has no \(old)")
        return text.replacingOccurrences(of: old, with: new)
    }

    /// The offer the fixtures answer, as `PublishOffer` renders it with `rids`.
    static func offer(rids: [String]) throws -> PublishOffer {
        let layers: PublishOffer.Simulcast = try #require(PublishOffer.Simulcast(rids: rids))
        return PublishOffer(
            iceUfrag: "Qx7v", icePassword: "mS3kJ8vT2qLwN5rY9pHdFb4c",
            fingerprint:
                "sha-256 3F:A1:9C:0E:5B:77:D2:41:8A:6F:C3:19:E0:B4:25:7D:91:0C:4E:AB:36:F8:52:1D:C7:69:0A:E3:B5:14:8F:2C",
            streamID: "capture", trackID: "camera0", cname: "cap-cname", ssrc: 1111,
            rtx: PublishOffer.Retransmission(ssrc: 2222), candidates: ["1 1 udp 2130706431 127.0.0.1 50000 typ host"],
            framerate: 30, sessionID: 4242, simulcast: layers)
    }

    @Test("the offers Janus answered are what PublishOffer renders today")
    func offersMatchTheRenderer() throws {
        #expect(try Self.offer(rids: ["h", "m", "l"]).render() == Self.fixture("offer-hml"))
        #expect(try Self.offer(rids: ["h", "l"]).render() == Self.fixture("offer-hl"))
    }

    @Test("Janus's three-layer answer: h, m and l accepted in order; rid 4 and repaired-rid 5; RTX, TWCC and mid")
    func threeLayers() throws {
        let answer = try PublishAnswer(parsing: Self.fixture("answer-hml"))
        let simulcast = try #require(answer.simulcast)
        #expect(simulcast == AnsweredSimulcast(accepted: ["h", "m", "l"], paused: []))
        #expect(answer.ridExtensionID == 4)
        #expect(answer.repairedRidExtensionID == 5)
        #expect(answer.extensionIDs[PublishOffer.midExtensionURI] == 1)
        #expect(answer.transportWideCCExtensionID == 3)
        #expect(answer.rtxPayloadType == 97)
        #expect(answer.mid == "0")
        #expect(answer.direction == .recvonly)
        #expect(answer.setup == .active)
        let outcome = try simulcast.outcome(offered: ["h", "m", "l"])
        #expect(outcome == AnsweredSimulcast.Outcome(send: ["h", "m", "l"], rejected: []))
    }

    @Test("Janus's two-layer answer, and its answer to a paused layer (~m)")
    func twoLayersAndPaused() throws {
        let two = try PublishAnswer(parsing: Self.fixture("answer-hl"))
        #expect(two.simulcast == AnsweredSimulcast(accepted: ["h", "l"]))
        let paused = try #require(try PublishAnswer(parsing: Self.fixture("answer-paused-m")).simulcast)
        #expect(paused == AnsweredSimulcast(accepted: ["h", "l"], paused: ["m"]))
        #expect(try paused.outcome(offered: ["h", "m", "l"]) == .init(send: ["h", "l"], rejected: ["m"]))
    }

    @Test("offered rids the answer leaves out are rejected; a rid the offer did not send is an error")
    func outcomes() throws {
        let answer = try PublishAnswer(
            parsing: Self.answer(replacing: "a=simulcast:recv h;m;l", with: "a=simulcast:recv l;h"))
        let simulcast = try #require(answer.simulcast)
        #expect(simulcast.accepted == ["l", "h"], "the answer's order")
        #expect(try simulcast.outcome(offered: ["h", "m", "l"]) == .init(send: ["h", "l"], rejected: ["m"]))
        #expect(throws: PublishAnswerError.unknownRid("l")) { try simulcast.outcome(offered: ["h", "m"]) }
        #expect(throws: PublishAnswerError.unknownRid("m")) {
            try AnsweredSimulcast(accepted: ["h"], paused: ["m"]).outcome(offered: ["h"])
        }
    }

    @Test("other valid forms: alternatives, the draft rid= list, a send list, rid lines without a=simulcast")
    func otherForms() throws {
        let forms: [(String, AnsweredSimulcast?)] = [
            ("a=simulcast:recv h,m;~l", AnsweredSimulcast(accepted: ["h", "m"], paused: ["l"])),
            ("a=simulcast: recv rid=h;m;l", AnsweredSimulcast(accepted: ["h", "m", "l"])),
            ("a=simulcast:send x;y recv h;m", AnsweredSimulcast(accepted: ["h", "m"])),
            ("a=simulcast:recv  h;m;l", AnsweredSimulcast(accepted: ["h", "m", "l"])),
            ("", AnsweredSimulcast(accepted: ["h", "m", "l"])),
        ]
        for (line, expected) in forms {
            let text = try Self.answer(replacing: "a=simulcast:recv h;m;l\r\n", with: line.isEmpty ? "" : line + "\r\n")
            #expect(try PublishAnswer(parsing: text).simulcast == expected, "\(line)")
        }
        // rid lines of the answerer's own sending are not ours to send.
        let sendRids = try Self.answer(replacing: "a=rid:m recv", with: "a=rid:m send pt=96")
            .replacingOccurrences(of: "a=simulcast:recv h;m;l", with: "a=simulcast:recv h;l send m")
        #expect(try PublishAnswer(parsing: sendRids).simulcast == AnsweredSimulcast(accepted: ["h", "l"]))
        // A single-stream answer has none.
        let single = try PublishAnswer(parsing: Fixtures.text("webrtc/janus-videoroom-answer.sdp"))
        #expect(single.simulcast == nil)
        #expect(single.ridExtensionID == nil && single.repairedRidExtensionID == nil)
    }

    static let malformed: [(String, String, PublishAnswerError)] = [
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;;l", .malformedSimulcast("recv h;;l")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv", .malformedSimulcast("recv")),
        ("a=simulcast:recv h;m;l", "a=simulcast:", .malformedSimulcast("")),
        ("a=simulcast:recv h;m;l", "a=simulcast:send h;m;l", .malformedSimulcast("send h;m;l")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;m;l recv h", .malformedSimulcast("recv h;m;l recv h")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;h;l", .malformedSimulcast("recv h;h;l")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;~m,m", .malformedSimulcast("recv h;~m,m")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h m", .malformedSimulcast("recv h m")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;m;~", .malformedSimulcast("recv h;m;~")),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;m;l;", .malformedSimulcast("recv h;m;l;")),
        ("a=simulcast:recv h;m;l", "a=simulcast:receive h;m;l", .malformedSimulcast("receive h;m;l")),
        (
            "a=simulcast:recv h;m;l", "a=simulcast:recv h;m;l\r\na=simulcast:recv h",
            .malformedSimulcast("recv h;m;l | recv h")
        ),
        ("a=simulcast:recv h;m;l", "a=simulcast:recv h;m;l;x", .unknownRid("x")),
        ("a=rid:m recv", "a=rid:m", .malformedRid("m")),
        ("a=rid:m recv", "a=rid:m sideways", .malformedRid("m sideways")),
        ("a=rid:m recv", "a=rid:m! recv", .malformedRid("m! recv")),
        ("a=rid:m recv", "a=rid:h recv", .malformedRid("h recv")),
    ]

    @Test("malformed simulcast and rid lines, and unknown rids, are typed errors", arguments: malformed)
    func malformedLines(old: String, new: String, expected: PublishAnswerError) throws {
        let text = try Self.answer(replacing: old, with: new)
        #expect(throws: expected) { try PublishAnswer(parsing: text) }
        #expect(!expected.description.isEmpty)
    }

    @Test("random simulcast values never crash the parser: a value or a typed error")
    func randomValues() throws {
        let template = try Self.fixture("answer-hml")
        // Pieces of the grammar and of what breaks it, so that some values parse and most do not.
        let pieces = ["recv ", "send ", "recv ", " ", "h", "m", "l", "~", ";", ";", ",", "rid=", "x", "\t", "=", "é"]
        var generator = SeededGenerator(state: 8853)
        var parsed = 0
        for _ in 0..<600 {
            let count = Int.random(in: 0...8, using: &generator)
            let value = (0..<count).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined()
            let text = template.replacingOccurrences(of: "a=simulcast:recv h;m;l", with: "a=simulcast:" + value)
            do {
                let answer = try PublishAnswer(parsing: text)
                parsed += 1
                if let simulcast = answer.simulcast {
                    #expect(Set(simulcast.accepted + simulcast.paused).isSubset(of: ["h", "m", "l"]))
                }
            } catch {
                switch error {
                case .malformedSimulcast, .unknownRid, .malformedSDP: break
                default: Issue.record("unexpected \(error) for \(value)")
                }
            }
        }
        #expect(parsed > 0)
    }
}
