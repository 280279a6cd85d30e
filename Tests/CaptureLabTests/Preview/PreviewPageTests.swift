import CaptureCore
import CaptureLabSupport
import CaptureNet
import CaptureTestSupport
import Foundation
import NIOCore
import Testing

@testable import CapturePreview

/// The page in headless Chromium against the server with the fake answerer: it must POST a recvonly video offer with
/// its candidates and fetch the figures. The fake answer is not a usable SDP, so the page ends in its failed state,
/// which it reports at once to `?report=` (real time: under Chromium's virtual time the page's 2 s gathering timer
/// could fire before a loaded machine had gathered a candidate).
@Suite(
    .tags(.lab), .selectedByTags,
    .enabled(if: HeadlessChromium.unavailableReason() == nil, "needs chromium, python3 and timeout"))
struct PreviewPageTests {
    @Test func offersARecvonlyVideoTransceiver() async throws {
        let handler = FakeWHEPHandler()
        let server = PreviewServer(handler: handler, logger: previewTestLogger)
        let port = try await server.start(bind: "127.0.0.1", port: 0).port
        let report: HeadlessChromium.PreviewReport
        do {
            report = try await HeadlessChromium.run(page: { "http://127.0.0.1:\(port)/?report=\($0)/result" })
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        let offer = try #require(handler.offers.first)
        #expect(offer.hasPrefix("v=0"))
        #expect(offer.contains("m=video"))
        #expect(offer.contains("a=recvonly"))
        #expect(offer.contains("a=candidate:"))
        #expect(report.status == "failed")
        #expect(report.error?.contains("setRemoteDescription") == true, "\(report.error ?? "no error")")
        let snapshot = server.statistics.snapshot
        #expect(snapshot.viewersStarted == 1)
        #expect((snapshot.responsesByStatus[200] ?? 0) >= 2)  // the page and at least one figures poll
    }
}
