import CaptureCall
import CaptureCore
import CaptureLabSupport
import CaptureNet
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

@testable import CapturePreview

/// The preview with simulcast, two headless Chromium viewers: one straight on loopback, one through a
/// ``ShapedUDPRelay`` whose link toward it is narrowed mid-run. Each should get the layer its link carries.
@Suite(
    "Preview simulcast in headless Chromium: two viewers, one link narrowed (real browsers)", .tags(.lab),
    .selectedByTags, .serialized)
struct PreviewSimulcastLiveTests {
    /// A WHEP front for the narrowed viewer: its offer reaches the session without the viewer's candidates, and the
    /// answer's candidates are replaced by the relay's, so that every packet takes the relay.
    final class RelayedViewerHandler: WHEPSessionHandler {
        struct State {
            var relay: ShapedUDPRelay?
            var viewerID: String?
        }
        let session: PreviewSession
        let state = Locked(State())

        init(session: PreviewSession) { self.session = session }

        var relay: ShapedUDPRelay? { state.withLock { $0.relay } }
        var viewerID: String? { state.withLock { $0.viewerID } }

        func answer(
            offer: String, remote: String
        ) async throws(WHEPRequestError) -> (
            answer: String, viewerID: String
        ) {
            let lines = offer.components(separatedBy: "\r\n")
            let stripped = lines.filter { !$0.hasPrefix("a=candidate:") && $0 != "a=end-of-candidates" }
            let (answer, id) = try await session.answer(offer: stripped.joined(separator: "\r\n"), remote: remote)
            let answerLines = answer.components(separatedBy: "\r\n")
            // "a=candidate:FOUNDATION COMPONENT udp PRIORITY ADDRESS PORT typ host"
            let ours = answerLines.lazy.filter { $0.hasPrefix("a=candidate:") }.map { $0.split(separator: " ") }
                .first { $0.count >= 8 && $0[4] == "127.0.0.1" }
            guard let ours, let port = UInt16(ours[5]) else {
                throw .serviceUnavailable("no loopback candidate in the session's answer")
            }
            let relay: ShapedUDPRelay
            do {
                relay = try ShapedUDPRelay(target: .loopbackIPv4(port: port))
            } catch {
                throw .serviceUnavailable("cannot open the relay: \(error)")
            }
            state.withLock {
                $0.relay = relay
                $0.viewerID = id
            }
            var replaced = false
            let rewritten = answerLines.compactMap { line -> String? in
                guard line.hasPrefix("a=candidate:") else { return line }
                guard !replaced else { return nil }
                replaced = true
                return "a=candidate:1 1 udp 2130706431 127.0.0.1 \(relay.peerFacingPort) typ host"
            }
            return (rewritten.joined(separator: "\r\n"), id)
        }

        func end(viewerID: String) async -> Bool { await session.end(viewerID: viewerID) }

        func figures() async -> PreviewFigures { await session.figures() }
    }

    /// One sample of both viewers' layers.
    struct Sample {
        var seconds: Double
        var wide: Int?
        var narrow: Int?
        var narrowEstimateKbps: Int?
        var wideEstimateKbps: Int?
        /// The encoder's layers (a CPU-overuse step may lay them out again smaller).
        var sizes: [Dimensions]
        /// The wide viewer's switches up so far.
        var wideSwitchesUp = 0
    }

    @Test("the narrowed viewer falls to the lowest layer (320x180) while the other keeps the top one (1280x720)")
    func narrowedViewerGetsALowerLayer() async throws {
        if let reason = HeadlessChromium.unavailableReason() {
            print("SKIPPED (preview simulcast in Chromium): \(reason)")
            return
        }
        let session = try PreviewSession(
            encoder: VP8EncoderConfiguration(targetBitrateKbps: 1_000, framerate: 30),
            hostAddresses: [.loopbackIPv4(port: 0)], simulcast: SimulcastConfiguration())
        let server = PreviewServer(handler: session)
        let port = try await server.listen(bind: "127.0.0.1", port: 0)
        let front = RelayedViewerHandler(session: session)
        let frontServer = PreviewServer(handler: front)
        let frontPort = try await frontServer.listen(bind: "127.0.0.1", port: 0)
        let capturer = CameraVideoCapturer(delegate: session.pipeline, provider: .builtIn)
        try await capturer.startCapture(target: Dimensions(width: 1280, height: 720))
        session.describeCapture(width: 1280, height: 720, fps: 30, rotation: 0)
        let start = ContinuousClock.now
        let narrowAt = 12.0
        let sampling = Task {
            var samples: [Sample] = []
            while !Task.isCancelled {
                let states = session.fanout.layerStates
                let narrowID = front.viewerID
                let wide = states.first { $0.key != narrowID }?.value
                let narrow = narrowID.flatMap { states[$0] }
                let elapsed = (ContinuousClock.now - start).components
                samples.append(
                    Sample(
                        seconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18,
                        wide: wide?.current, narrow: narrow?.current, narrowEstimateKbps: narrow?.estimateKbps,
                        wideEstimateKbps: wide?.estimateKbps,
                        sizes: session.pipeline.statistics.layers.map(\.dimensions),
                        wideSwitchesUp: wide?.statistics.switchesUp ?? 0))
                try? await Task.sleep(for: .milliseconds(250))
            }
            return samples
        }
        let seconds = 28
        let wide = Task {
            try await HeadlessChromium.run(page: { "http://127.0.0.1:\(port)/?seconds=\(seconds)&report=\($0)/result" })
        }
        let narrow = Task {
            try await HeadlessChromium.run(page: {
                "http://127.0.0.1:\(frontPort)/?seconds=\(seconds)&report=\($0)/result"
            })
        }
        try await Task.sleep(until: start + .seconds(narrowAt))
        front.relay?.setRate(kbps: 350)
        let wideReport: HeadlessChromium.PreviewReport
        let narrowReport: HeadlessChromium.PreviewReport
        do {
            wideReport = try await wide.value
            narrowReport = try await narrow.value
        } catch {
            wide.cancel()
            narrow.cancel()
            sampling.cancel()
            await capturer.stopCapture()
            await frontServer.stop()
            await server.stop()
            await session.stop()
            await front.relay?.stop()
            throw error
        }
        sampling.cancel()
        let samples = await sampling.value
        let layers = session.pipeline.statistics.layers
        let counts = session.viewerCounts
        let relayCounts = front.relay?.counts
        await capturer.stopCapture()
        await frontServer.stop()
        await server.stop()
        await session.stop()
        await front.relay?.stop()

        func describe(_ name: String, _ report: HeadlessChromium.PreviewReport) -> String {
            "\(name): \(report.status) \(report.width)x\(report.height) at the end, \(report.framesDecoded) frames "
                + "decoded, \(report.freezeCount) freezes, \(report.packetsLost) packets lost; \(report.stamps.summary)"
        }
        print(describe("wide viewer", wideReport))
        print(describe("narrowed viewer (350 kbit/s from \(narrowAt) s)", narrowReport))
        let timeline = samples.filter { Int($0.seconds * 4) % 4 == 0 }.map {
            "\(Int($0.seconds.rounded())) s: wide \($0.wide.map(String.init) ?? "-") "
                + "(\($0.wideEstimateKbps ?? 0) k), narrow \($0.narrow.map(String.init) ?? "-") "
                + "(\($0.narrowEstimateKbps ?? 0) k); layers "
                + $0.sizes.map { "\($0.width)x\($0.height)" }.joined(separator: " ")
        }
        print("layers (estimates) every second:\n  " + timeline.joined(separator: "\n  "))
        print(
            "encoder layers at the end: "
                + layers.map {
                    "\($0.dimensions.width)x\($0.dimensions.height) \($0.isActive ? "on" : "off") "
                        + "\($0.targetKbps) k, \($0.framesEncoded) frames, \($0.keyFrames) key"
                }
                .joined(separator: "; "))
        if let relayCounts {
            print(
                "relay: \(relayCounts.toPeer) datagrams to the narrowed viewer, \(relayCounts.dropped) dropped at "
                    + "its queue, \(relayCounts.toTransport) from it")
        }
        let open = samples.filter { $0.seconds < narrowAt }
        let narrowed = samples.filter { $0.seconds >= narrowAt }
        if let down = narrowed.first(where: { $0.narrow == 0 }) {
            print("narrowed viewer on layer 0 \(String(format: "%.2f", down.seconds - narrowAt)) s after the step")
        }
        #expect(counts.started == 2 && counts.failed == 0)
        #expect(wideReport.error == nil && narrowReport.error == nil)
        #expect(open.compactMap(\.narrow).max() ?? 0 >= 1, "on the open link the relayed viewer moved up too")
        // Both viewers connected, to the end: the wide one on the top layer, the narrowed one on the lowest. The
        // sizes are the layout's at the end (on 2 cores a CPU-overuse step may have made 1280x720 960x540).
        let last = try #require(narrowed.last { $0.wide != nil && $0.narrow != nil }, "no sample with both viewers")
        #expect(last.narrow == 0 && last.wide == last.sizes.count - 1 && last.sizes.count >= 2)
        #expect(wideReport.width == last.sizes.last?.width && wideReport.height == last.sizes.last?.height)
        #expect(narrowReport.width == last.sizes.first?.width && narrowReport.height == last.sizes.first?.height)
        #expect(wideReport.framesDecoded >= seconds * 30 / 2)
        #expect(narrowReport.framesDecoded >= seconds * 30 / 3)
        // A switch up within a capture instant gives the viewer that instant twice (the lower layer's frame, then
        // the higher one's key frame, its RTP timestamp + 1): a stamp read twice per switch up at most.
        let stamps = wideReport.stamps
        let switchesUp = samples.map(\.wideSwitchesUp).max() ?? 0
        #expect(
            stamps.outOfOrder == 0 && stamps.rtpOutOfOrder == 0 && stamps.repeated <= switchesUp
                && stamps.offset != nil && stamps.mismatched <= 10,
            "\(stamps.summary); \(switchesUp) switches up")
    }
}
