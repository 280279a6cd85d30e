import Foundation
import Testing

@testable import CaptureRTP

@Suite("TWCC in a plain RTP session description (capturer-probe send/receive)")
struct VideoSessionTransportCCTests {
    static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    @Test("written as the extmap and transport-cc, read back as the id")
    func roundTrip() throws {
        let parameters = VideoSessionParameters(
            address: "127.0.0.1", port: 5004, rtcpMux: true,
            rtcpFeedback: VideoSessionParameters.defaultRTCPFeedback + ["transport-cc"],
            videoOrientationExtensionID: 2, transportWideCCExtensionID: 3)
        let text = parameters.makeDescription().render()
        #expect(text.contains("a=extmap:3 \(Self.uri)\r\n"))
        #expect(text.components(separatedBy: "a=rtcp-fb:96 transport-cc\r\n").count == 2, "listed once")
        #expect(try VideoSessionParameters(description: SessionDescription(parsing: text)) == parameters)
        // transport-cc is added when the feedback list lacks it.
        let added = VideoSessionParameters(address: "127.0.0.1", port: 5004, transportWideCCExtensionID: 5)
        let parsed = try VideoSessionParameters(
            description: SessionDescription(parsing: added.makeDescription().render()))
        #expect(parsed.transportWideCCExtensionID == 5)
        #expect(parsed.rtcpFeedback.contains("transport-cc"))
    }

    @Test("the extmap without transport-cc, or transport-cc without the extmap, is not TWCC")
    func halfIsNothing() throws {
        let base =
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\n"
            + "a=rtpmap:96 VP8/90000\r\n"
        for extra in ["a=extmap:3 \(Self.uri)\r\n", "a=rtcp-fb:96 transport-cc\r\n"] {
            let parameters = try VideoSessionParameters(description: SessionDescription(parsing: base + extra))
            #expect(parameters.transportWideCCExtensionID == nil)
        }
    }
}
