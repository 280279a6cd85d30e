import CaptureWebRTC
import Foundation
import Testing

@Suite("outbound-rtp: quality limitation fields")
struct OutboundQualityLimitationTests {
    @Test("qualityLimitation* encode with W3C names, durations in seconds, and decode to the same stats")
    func roundTrip() throws {
        var stats = RTCOutboundRTPStreamStats(ssrc: 1234)
        stats.qualityLimitationReason = "bandwidth"
        stats.qualityLimitationDurations = [
            "none": .milliseconds(2_500), "bandwidth": .seconds(10), "cpu": .zero, "other": .zero,
        ]
        stats.qualityLimitationResolutionChanges = 4
        let json = try JSONEncoder().encode(stats)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["qualityLimitationReason"] as? String == "bandwidth")
        #expect((object["qualityLimitationDurations"] as? [String: Double])?["none"] == 2.5)
        #expect(object["qualityLimitationResolutionChanges"] as? Int == 4)
        #expect(try JSONDecoder().decode(RTCOutboundRTPStreamStats.self, from: json) == stats)
        let bad = Data(
            String(decoding: json, as: UTF8.self).replacingOccurrences(of: "\"cpu\":0", with: "\"cpu\":1e300").utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RTCOutboundRTPStreamStats.self, from: bad) }
    }
}
