import CaptureLabSupport
import CaptureTestSupport
import Foundation
import Testing

/// The lab's own WHIP path with reference peers on both ends: headless Chromium publishes its fake camera over WHIP
/// (simple-whip-server) into Janus's VideoRoom, and a second headless Chromium subscribes. When this fails the lab is
/// broken, not our publisher.
@Suite("Janus VideoRoom (real peers)", .tags(.lab, .root), .selectedByTags, .serialized)
struct JanusVideoRoomTests {
    @Test func chromiumWHIPPublisherReachesChromiumViewer() async throws {
        let test = "Janus VideoRoom: Chromium WHIP publisher -> Chromium viewer"
        try await JanusLab.run(test: test) { lab in
            async let publishing = lab.chromiumPublish(seconds: 10)
            let connected = try await lab.waitForPublisher()
            #expect(connected, "the WHIP publisher did not connect to Janus")
            let viewer = try await lab.view(query: "mode=videoroom&room=1234", seconds: 4)
            let publisher = try await publishing
            #expect(publisher.ok, "publisher: \(publisher.error ?? "") \(publisher.events ?? [])")
            #expect(viewer.ok, "viewer: \(viewer.error ?? "") \(viewer.events ?? [])")
            let inbound = try #require(viewer.inbound)
            let outbound = try #require(publisher.outbound)
            print(
                "janus videoroom: Chromium sent \(outbound.framesSent) frames over WHIP; the viewer decoded"
                    + " \(inbound.framesDecoded) \(inbound.frameWidth)x\(inbound.frameHeight) in 4 s")
            #expect(inbound.framesDecoded > 30)
            #expect(inbound.frameWidth == 640 && inbound.frameHeight == 480)
        }
    }
}
