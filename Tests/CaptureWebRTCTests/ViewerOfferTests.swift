import CaptureWebRTC
import Foundation
import Testing

@Suite("ViewerOffer: a WHEP viewer's offer, and the malformed ones")
struct ViewerOfferTests {
    /// The shape of Chromium's receive-only offer (VP8 96 with RTX 97, others left out).
    static let chromium = [
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "a=msid-semantic: WMS", "m=video 9 UDP/TLS/RTP/SAVPF 96 97 45", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
        "a=candidate:1 1 udp 2113937151 3e1c7b8a-0000.local 51000 typ host generation 0",
        "a=candidate:2 1 udp 2113939711 127.0.0.1 51001 typ host generation 0", "a=ice-ufrag:Ab12",
        "a=ice-pwd:0123456789abcdefghijklmn",
        "a=fingerprint:sha-256 12:34:56:78:9A:BC:DE:F0:12:34:56:78:9A:BC:DE:F0:12:34:56:78:9A:BC:DE:F0:12:34:56:78:9A:BC:DE:F0",
        "a=setup:actpass", "a=mid:0", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
        "a=extmap:13 urn:3gpp:video-orientation", "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize",
        "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtpmap:97 rtx/90000",
        "a=fmtp:97 apt=96", "a=rtpmap:45 AV1/90000",
    ]

    static func offer(_ lines: [String]) -> String { lines.joined(separator: "\r\n") + "\r\n" }

    @Test("Chromium's shape: credentials, fingerprint, VP8 and its RTX, mid and extension ids, candidates")
    func chromiumOffer() throws {
        let offer = try ViewerOffer(parsing: Self.offer(Self.chromium))
        #expect(offer.iceUfrag == "Ab12")
        #expect(offer.setup == "actpass")
        #expect(offer.mid == "0")
        #expect(offer.payloadType == 96)
        #expect(offer.rtxPayloadType == 97)
        #expect(offer.extensionIDs["urn:ietf:params:rtp-hdrext:sdes:mid"] == 4)
        #expect(offer.extensionIDs["urn:3gpp:video-orientation"] == 13)
        #expect(offer.candidates.count == 2)
    }

    enum Damage: String, CaseIterable, Sendable {
        case notSDP, noVideo, sendOnly, noUfrag, noFingerprint, noVP8, plainRTP

        func apply(_ lines: [String]) -> [String] {
            switch self {
            case .notSDP: ["hello"]
            case .noVideo: lines.filter { !$0.hasPrefix("m=video") } + ["m=audio 9 UDP/TLS/RTP/SAVPF 111"]
            case .sendOnly: lines.map { $0 == "a=recvonly" ? "a=sendonly" : $0 }
            case .noUfrag: lines.filter { !$0.hasPrefix("a=ice-ufrag") }
            case .noFingerprint: lines.filter { !$0.hasPrefix("a=fingerprint") }
            case .noVP8: lines.filter { !$0.contains("VP8") }
            case .plainRTP: lines.map { $0.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "RTP/AVP") }
            }
        }

        /// The error the damage must give (a malformed SDP's parser error is not compared).
        func matches(_ error: ViewerOfferError) -> Bool {
            switch (self, error) {
            case (.notSDP, .malformedSDP), (.noVideo, .noVideoMedia), (.sendOnly, .notReceiving),
                (.noUfrag, .missingICECredentials), (.noFingerprint, .missingFingerprint), (.noVP8, .noVP8PayloadType),
                (.plainRTP, .notDTLSSRTP("RTP/AVP")):
                true
            default: false
            }
        }
    }

    @Test("malformed offers are refused with what is wrong", arguments: Damage.allCases)
    func malformed(damage: Damage) {
        do {
            _ = try ViewerOffer(parsing: Self.offer(damage.apply(Self.chromium)))
            Issue.record("\(damage) was accepted")
        } catch {
            #expect(damage.matches(error), "\(damage) gave \(error)")
            #expect(!error.description.isEmpty)
        }
    }
}
