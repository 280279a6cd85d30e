import CaptureLabSupport
import CaptureTestSupport
import Foundation
import Testing

/// Plain RTP VP8 from `capturer-probe send` (in the publisher namespace) into Janus's Streaming plugin, watched over
/// WebRTC by headless Chromium: what we send must decode in a real browser.
@Suite("Janus Streaming (real peers)", .tags(.lab, .root), .selectedByTags, .serialized)
struct JanusStreamingTests {
    /// The sender's report (`capturer-probe send --json`).
    struct SendReport: Decodable {
        var framesSent: Int
        var width: Int
        var height: Int
    }

    /// The built `capturer-probe` (see `BuiltTools.capturerProbe`); `nil` makes the tests skip loudly.
    static let probe: String? = BuiltTools.capturerProbe?.path

    @Test func chromiumDecodesWhatCapturerProbeSends() async throws {
        let test = "Janus Streaming: Chromium decodes capturer-probe's RTP"
        guard let probe = Self.probe else {
            return JanusLab.skip(test, "capturer-probe is not built (swift build --product capturer-probe)")
        }
        try await JanusLab.run(test: test) { lab in
            let target = try #require(lab.rtpTarget)
            let id = try #require(lab.streamingID)
            // The viewer watches first; the sender starts once the viewer's PeerConnection is up, and the viewer
            // stops 2 s after the last frame it received.
            async let viewing = lab.view(query: "mode=streaming&id=\(id)&idle=2", seconds: 30)
            let connected = try await lab.waitForViewer()
            #expect(connected, "the viewer did not connect to Janus")
            let send = try await lab.publish(
                probe,
                [
                    "send", "--to", target, "--target", "640x480", "--fps-limit", "30", "--seconds", "8",
                    "--key-frame-interval", "1", "--json",
                ])
            let viewer = try await viewing
            #expect(send.status == 0, "capturer-probe send: \(send.stderrText)")
            let report = try JSONDecoder().decode(SendReport.self, from: send.stdout)
            #expect(viewer.ok, "viewer: \(viewer.error ?? "") \(viewer.events ?? [])")
            let inbound = try #require(viewer.inbound)
            print(
                "janus streaming: sent \(report.framesSent) frames \(report.width)x\(report.height); Chromium decoded"
                    + " \(inbound.framesDecoded) \(inbound.frameWidth)x\(inbound.frameHeight), first frame after"
                    + " \(viewer.timing?.firstFrameMs ?? -1) ms, \(viewer.averageFps ?? 0) fps,"
                    + " freezes \(inbound.freezeCount), lost \(inbound.packetsLost)")
            #expect(report.framesSent > 200)
            #expect(inbound.framesDecoded * 10 >= report.framesSent * 9)
            #expect(inbound.frameWidth == 640 && inbound.frameHeight == 480)
            #expect(viewer.videoWidth == 640 && viewer.videoHeight == 480)
        }
    }
}
