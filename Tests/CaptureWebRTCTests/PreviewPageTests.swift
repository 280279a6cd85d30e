import CaptureTestSupport
import Foundation
import NIOCore
import Testing

@testable import CaptureWebRTC

/// Headless Chromium for the page test, when installed.
let previewChromium = ["chromium", "chromium-browser", "google-chrome"].lazy.compactMap(ExternalProcess.which).first

/// The page in headless Chromium against the server with the fake answerer: it must POST a recvonly video offer with
/// its candidates and fetch the figures. The fake answer is not a usable SDP, so the page ends in its failed state,
/// which it shows.
@Suite(.enabled(if: previewChromium != nil, "needs chromium"))
struct PreviewPageTests {
    @Test func offersARecvonlyVideoTransceiver() async throws {
        let chromium = try #require(previewChromium)
        let handler = FakeWHEPHandler()
        let server = PreviewServer(handler: handler, logger: previewTestLogger)
        let port = try #require(try await server.start(bind: "127.0.0.1", port: 0).port)
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("preview-chromium-\(UUID())")
        defer { try? FileManager.default.removeItem(at: profile) }
        let result: ExternalProcess.Result
        do {
            result = try await ExternalProcess.run(
                chromium,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile.path)",
                    "--virtual-time-budget=5000", "--dump-dom", "http://127.0.0.1:\(port)/",
                ])
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        try #require(result.status == 0, "chromium failed: \(result.stderrText.suffix(2000))")
        let offer = try #require(handler.offers.first)
        #expect(offer.hasPrefix("v=0"))
        #expect(offer.contains("m=video"))
        #expect(offer.contains("a=recvonly"))
        #expect(offer.contains("a=candidate:"))
        #expect(result.stdoutText.contains("id=\"status\""))
        #expect(result.stdoutText.contains("setRemoteDescription"))
        let snapshot = server.statistics.snapshot
        #expect(snapshot.viewersStarted == 1)
        #expect((snapshot.responsesByStatus[200] ?? 0) >= 2)  // the page and at least one figures poll
    }
}
