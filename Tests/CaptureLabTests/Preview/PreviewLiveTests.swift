import CaptureCall
import CaptureCore
import CaptureLabSupport
import CaptureNet
import CapturePreview
import CaptureRTP
import CaptureTestSupport
import CaptureVP8
import CaptureWebRTC
import Foundation
import Testing

/// The live preview end to end: the synthetic camera → one encoder → WHEP → headless Chromium playing the page, which
/// reads each frame's stamp back (frame number, capture time) from a canvas.
@Suite("Preview in headless Chromium (real browser)", .tags(.lab), .selectedByTags, .serialized)
struct PreviewLiveTests {
    /// A running preview: capturer, session and server, stopped by `stop()`.
    struct Preview {
        let capturer: CameraVideoCapturer
        let session: PreviewSession
        let server: PreviewServer
        let port: Int

        static func start(width: Int = 640, height: Int = 480) async throws -> Preview {
            let session = try PreviewSession(
                encoder: VP8EncoderConfiguration(targetBitrateKbps: 1_000, framerate: 30),
                hostAddresses: [.loopbackIPv4(port: 0)])
            let server = PreviewServer(handler: session)
            let port = try await server.listen(bind: "127.0.0.1", port: 0)
            let capturer = CameraVideoCapturer(delegate: session.pipeline, provider: .builtIn)
            try await capturer.startCapture(target: Dimensions(width: width, height: height))
            session.describeCapture(width: width, height: height, fps: 30, rotation: 0)
            return Preview(capturer: capturer, session: session, server: server, port: port)
        }

        func stop() async {
            await capturer.stopCapture()
            await server.stop()
            await session.stop()
        }
    }

    static func artifacts() -> URL {
        let directory = Fixtures.packageRoot.appendingPathComponent(".build/test-artifacts")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func describe(_ name: String, _ report: HeadlessChromium.PreviewReport) -> String {
        "\(name): \(report.status) \(report.width)x\(report.height), \(report.framesDecoded) frames decoded at "
            + "\(report.fps) fps, \(report.freezeCount) freezes; \(report.stamps.summary); glass to glass p50 "
            + "\(report.latencyMs.p50 ?? -1) ms, p95 \(report.latencyMs.p95 ?? -1) ms"
    }

    @Test(
        "Chromium plays the page: frames in order, none repeated, glass-to-glass latency; a screenshot is kept",
        arguments: [(640, 480), (1280, 720)])
    func pagePlays(width: Int, height: Int) async throws {
        if let reason = HeadlessChromium.unavailableReason() {
            print("SKIPPED (preview in Chromium): \(reason)")
            return
        }
        let preview = try await Preview.start(width: width, height: height)
        let screenshot = Self.artifacts().appendingPathComponent(
            width == 640 ? "preview-page.png" : "preview-page-\(width)x\(height).png")
        // Chromium offers the transport-wide sequence number and transport-cc: sample its feedback while it plays.
        let session = preview.session
        let sampling = Task {
            var best = TransportWideCCStatistics()
            while !Task.isCancelled {
                for twcc in session.viewersTransportWideCC where twcc.feedbackReceived > best.feedbackReceived {
                    best = twcc
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
            return best
        }
        let report: HeadlessChromium.PreviewReport
        do {
            report = try await HeadlessChromium.run(
                page: { "http://127.0.0.1:\(preview.port)/?seconds=6&snapshot=1&report=\($0)/result" },
                screenshot: screenshot)
        } catch {
            sampling.cancel()
            await preview.stop()
            throw error
        }
        sampling.cancel()
        let twcc = await sampling.value
        await preview.stop()
        print(Self.describe("preview \(width)x\(height)", report))
        print(
            "preview TWCC: \(twcc.packetsSent) numbered, \(twcc.feedbackReceived) feedback messages from Chromium, "
                + "\(twcc.packetsReportedReceived) reported received, \(twcc.packetsReportedLost) lost, "
                + "\(twcc.ignoredStatuses) ignored")
        #expect(twcc.isSending && twcc.feedbackReceived >= 20, "Chromium's feedback, about 10 a second")
        #expect(twcc.packetsReportedReceived >= twcc.packetsSent * 9 / 10)
        print("preview: screenshot kept at \(screenshot.path)")
        #expect(report.error == nil)
        #expect(report.width == width && report.height == height)
        #expect(report.framesDecoded >= 120, "6 s at 30 fps")
        #expect(report.stamps.frames >= 100)
        #expect(report.stamps.inOrder(), "\(report.stamps.summary)")
        #expect(report.latencyMs.p50 != nil)
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
    }

    @Test("a second viewer joins while the first plays; a page from another origin watches through CORS")
    func secondViewerAndOtherOrigin() async throws {
        if let reason = HeadlessChromium.unavailableReason() {
            print("SKIPPED (preview: second viewer, other origin): \(reason)")
            return
        }
        let preview = try await Preview.start()
        // The page itself, served by the report receiver: another origin (another port) than the preview's.
        let page = FileManager.default.temporaryDirectory.appendingPathComponent("preview-page-\(UUID()).html")
        try Data(PreviewPage.html().utf8).write(to: page)
        defer { try? FileManager.default.removeItem(at: page) }
        let whep = "http://127.0.0.1:\(preview.port)/whep"
        let first = Task {
            try await HeadlessChromium.run(page: { "http://127.0.0.1:\(preview.port)/?seconds=9&report=\($0)/result" })
        }
        try await Task.sleep(for: .seconds(3))
        let second: HeadlessChromium.PreviewReport
        let firstReport: HeadlessChromium.PreviewReport
        do {
            second = try await HeadlessChromium.run(
                page: { "\($0)/?whep=\(whep)&seconds=4&report=\($0)/result" }, servedPage: page)
            firstReport = try await first.value
        } catch {
            first.cancel()
            await preview.stop()
            throw error
        }
        // Both pages have closed their connections without a WHEP DELETE: their DTLS close_notify ends them here (a
        // hang guard, not a timing; before, they stayed among the viewers until consent ran out, or for good).
        let deadline = ContinuousClock.now + .seconds(10)
        while preview.session.viewerCounts.watching > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let counts = preview.session.viewerCounts
        let encoded = preview.session.pipeline.statistics.framesEncoded
        let captured = preview.capturer.statistics.framesCaptured
        await preview.stop()
        print(Self.describe("first viewer", firstReport))
        print(Self.describe("second viewer (other origin)", second))
        print("preview: \(counts.started) viewers, \(encoded) frames encoded once for both, \(captured) captured")
        #expect(firstReport.framesDecoded >= 180, "9 s at 30 fps")
        #expect(second.framesDecoded >= 60, "4 s at 30 fps, from another origin")
        #expect(second.stamps.inOrder(), "\(second.stamps.summary)")
        #expect(counts.started == 2 && counts.failed == 0)
        #expect(counts.watching == 0, "the pages left: nobody is watching")
        #expect(encoded <= captured, "one encoder serves both viewers")
    }
}
