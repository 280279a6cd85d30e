import CaptureRTP
import CaptureWebRTC
import Foundation
import Testing

@Suite("PublishOffer: simulcast with rids (RFC 8851, 8852, 8853)")
struct PublishOfferSimulcastTests {
    static func offer(rids: [String] = ["h", "m", "l"], rtx: Bool = true) throws -> PublishOffer {
        var offer = PublishOfferTests.offer(rtx: rtx, candidates: ["1 1 udp 2130706431 10.0.0.1 5000 typ host"])
        let layers: PublishOffer.Simulcast = try #require(PublishOffer.Simulcast(rids: rids))
        offer.simulcast = layers
        return offer
    }

    @Test("rid and repaired-rid extmaps, one a=rid send per layer then a=simulcast:send h;m;l, no a=ssrc lines")
    func simulcastLines() throws {
        let text = try Self.offer().render()
        let lines = text.components(separatedBy: "\r\n")
        for line in [
            "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
            "a=extmap:5 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
            "a=msid:camera video0",
            "a=rtpmap:97 rtx/90000",
            "a=fmtp:97 apt=96",
            "a=simulcast:send h;m;l",
        ] {
            #expect(lines.contains(line), "missing \(line)")
        }
        #expect(lines.filter { $0.hasPrefix("a=rid:") } == ["a=rid:h send", "a=rid:m send", "a=rid:l send"])
        #expect(!lines.contains { $0.hasPrefix("a=ssrc") }, "no a=ssrc or a=ssrc-group: SSRCs come from the rid")
        #expect(!text.contains("1111") && !text.contains("2222"))
        // The rids come before a=simulcast, and both before the candidates.
        let simulcast = lines.firstIndex(of: "a=simulcast:send h;m;l") ?? 0
        let lastRid = lines.lastIndex { $0.hasPrefix("a=rid:") } ?? .max
        let candidate = lines.firstIndex { $0.hasPrefix("a=candidate:") } ?? 0
        #expect(lastRid < simulcast && simulcast < candidate)
        // The rest is the single-stream offer's, minus its SSRC lines.
        let single = PublishOfferTests.offer(candidates: ["1 1 udp 2130706431 10.0.0.1 5000 typ host"]).render()
        let expected = single.components(separatedBy: "\r\n").filter { !$0.hasPrefix("a=ssrc") }
        #expect(
            lines.filter { !$0.contains("rtp-stream-id") && !$0.hasPrefix("a=rid:") && !$0.hasPrefix("a=simulcast") }
                == expected)
    }

    @Test("two layers, one layer, no RTX, and rid extension ids left out")
    func variants() throws {
        let two = try Self.offer(rids: ["hi", "lo"]).render().components(separatedBy: "\r\n")
        #expect(two.contains("a=simulcast:send hi;lo"))
        #expect(two.filter { $0.hasPrefix("a=rid:") } == ["a=rid:hi send", "a=rid:lo send"])
        let one = try Self.offer(rids: ["q"]).render().components(separatedBy: "\r\n")
        #expect(one.contains("a=rid:q send") && one.contains("a=simulcast:send q"))
        let noRTX = try Self.offer(rtx: false).render()
        #expect(!noRTX.contains("rtx/90000") && !noRTX.contains("a=ssrc"))
        var offer = try Self.offer()
        offer.extensionIDs.repairedRid = nil
        offer.extensionIDs.rid = 9
        let lines = offer.render().components(separatedBy: "\r\n")
        #expect(lines.contains("a=extmap:9 \(RTPStreamIDExtension.uri)"))
        #expect(!lines.contains { $0.contains(RTPStreamIDExtension.repairedURI) })
    }

    @Test("parses back with CaptureRTP's SDP parser")
    func roundTrip() throws {
        let offer = try Self.offer()
        let description = try SessionDescription(parsing: offer.render())
        #expect(description == offer.makeDescription())
        let media = try #require(description.media.first)
        #expect(media.attributeValues("rid") == ["h send", "m send", "l send"])
        #expect(media.attributeValues("simulcast") == ["send h;m;l"])
        #expect(media.attributeValues("ssrc").isEmpty)
        let extmaps = Set(media.attributeValues("extmap"))
        #expect(extmaps.contains("4 \(RTPStreamIDExtension.uri)"))
        #expect(extmaps.contains("5 \(RTPStreamIDExtension.repairedURI)"))
        let video = try VideoSessionParameters(description: description)
        #expect(video.payloadType == 96)
        #expect(video.ssrc == nil)
    }

    @Test("the default extension ids are distinct and in the one-byte range")
    func defaultIDs() {
        let ids = PublishOffer.HeaderExtensionIDs()
        let all = [ids.mid, ids.videoOrientation, ids.transportWideCC, ids.rid, ids.repairedRid].compactMap { $0 }
        #expect(all == [1, 2, 3, 4, 5])
        #expect(Set(all).count == all.count && all.allSatisfy { (1...14).contains($0) })
    }

    @Test("layers must be distinct RFC 8851 rid-ids, also when decoded")
    func invalidLayers() throws {
        for rids in [[], ["h", "h"], ["h m"], ["a;b"], ["a,b"], ["~h"], [""], [String(repeating: "x", count: 17)]] {
            #expect(PublishOffer.Simulcast(rids: rids) == nil, "\(rids)")
        }
        let layers = try #require(PublishOffer.Simulcast(rids: ["h", "m", "l"]))
        let data = try JSONEncoder().encode(layers)
        #expect(try JSONDecoder().decode(PublishOffer.Simulcast.self, from: data) == layers)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PublishOffer.Simulcast.self, from: Data(#"{"rids":["h","h"]}"#.utf8))
        }
        let offer = try Self.offer()
        #expect(try JSONDecoder().decode(PublishOffer.self, from: JSONEncoder().encode(offer)) == offer)
    }

    @Test("without simulcast the offer is byte for byte what it was")
    func singleStreamUnchanged() {
        let offer = PublishOfferTests.offer(
            candidates: ["1 1 udp 2130706431 10.0.0.1 5000 typ host"], framerate: 29.97)
        let expected = [
            "v=0",
            "o=- 0 2 IN IP4 127.0.0.1",
            "s=-",
            "t=0 0",
            "a=group:BUNDLE 0",
            "a=extmap-allow-mixed",
            "a=msid-semantic: WMS camera",
            "a=ice-options:trickle",
            "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
            "c=IN IP4 0.0.0.0",
            "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:ufrag1234",
            "a=ice-pwd:passwordpasswordpassword",
            "a=fingerprint:\(PublishOfferTests.fingerprint)",
            "a=setup:actpass",
            "a=mid:0",
            "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=extmap:2 urn:3gpp:video-orientation",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
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
            "a=ssrc-group:FID 1111 2222",
            "a=ssrc:1111 cname:cname-x",
            "a=ssrc:1111 msid:camera video0",
            "a=ssrc:2222 cname:cname-x",
            "a=ssrc:2222 msid:camera video0",
            "a=framerate:29.97",
            "a=candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host",
            "a=end-of-candidates",
        ]
        #expect(offer.render() == expected.map { $0 + "\r\n" }.joined())
    }
}
