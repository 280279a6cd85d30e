import CaptureLabSupport
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

/// `capturer-probe publish` (our WebRTC publisher, in the publisher namespace) into Janus's VideoRoom over WHIP
/// (simple-whip-server), watched by headless Chromium subscribed to the room: what a conference server and a browser
/// make of our ICE, DTLS-SRTP, RTP, RTX, PLI and orientation.
@Suite(
    "Janus VideoRoom: capturer-probe publish over WHIP (real peers)", .tags(.lab, .root), .selectedByTags, .serialized)
struct JanusPublishTests {
    /// The publisher's report (`capturer-probe publish --json`).
    struct PublishReport: Decodable {
        var width: Int
        var height: Int
        var fps: Double
        var framesSent: Int
        var keyFramesSent: Int
        var plisReceived: Int
        var nacksReceived: Int
        var packetsRequested: Int
        var retransmissions: Int
        var firstTransmissionsDropped: Int
        var rembsReceived: Int
        var connectedMs: Double?
        var selectedPair: String?
        var sendErrors: Int
        var targetBitrateKbps: Int
        var lossBasedEstimateKbps: Int?
        var lastFiveSecondsKbps: Double?
        var packets: Int
        var bitrateKbps: Double
        var endOfCandidatesSent: Bool
        var patchesRefused: Int
        var patchesFailed: Int
        /// Transport-wide congestion control, both halves.
        var transportWideCC: TransportWideCCStatistics?
        /// The W3C webrtc-stats report as the publication ended.
        var stats: WebRTCStatsReport?
    }

    /// Runs `body` in a fresh lab with the built `capturer-probe`, or says loudly why the test is skipped.
    static func withLab(_ test: String, _ body: (JanusLab, String) async throws -> Void) async throws {
        guard let probe = BuiltTools.capturerProbe?.path else {
            return JanusLab.skip(test, "capturer-probe is not built (swift build --product capturer-probe)")
        }
        try await JanusLab.run(test: test) { lab in try await body(lab, probe) }
    }

    /// One publish run with a Chromium subscriber: the viewer waits for the publisher's feed, so it joins mid-stream.
    static func publishAndWatch(
        _ lab: JanusLab, probe: String, seconds: Int, extra: [String] = [], adminSnapshot: URL? = nil, idle: Int = 2,
        target: String = "640x480", stamps: Bool = false
    ) async throws -> (PublishReport, ViewerResult, ExternalProcess.Result) {
        async let viewing = lab.view(
            query: "mode=videoroom&room=1234&idle=\(idle)", seconds: 40, adminSnapshot: adminSnapshot, stamps: stamps)
        let startedMs = Date().timeIntervalSince1970 * 1_000
        let (report, run) = try await publish(lab, probe: probe, seconds: seconds, target: target, extra: extra)
        let viewer = try await viewing
        if let first = viewer.timing?.firstFrameEpochMs {
            print("publish \(target) started → first frame decoded in Chromium: \(Int(first - startedMs)) ms")
        }
        return (report, viewer, run)
    }

    /// `capturer-probe publish --json` into the room from the publisher namespace, and its report.
    static func publish(
        _ lab: JanusLab, probe: String, seconds: Int, target: String = "640x480", extra: [String] = []
    ) async throws -> (PublishReport, ExternalProcess.Result) {
        let whip = try #require(lab.whipURL)
        let run = try await lab.publish(
            probe,
            [
                "publish", "--whip", whip, "--target", target, "--fps-limit", "30", "--seconds", "\(seconds)",
                "--json",
            ]
                + extra)
        #expect(run.status == 0, "capturer-probe publish: \(run.stderrText.suffix(2_000))")
        return (try JSONDecoder().decode(PublishReport.self, from: run.stdout), run)
    }

    /// The stamps a viewer read and the glass-to-glass latency it measured, for the log.
    static func describeStamps(_ name: String, _ viewer: ViewerResult) -> String {
        "\(name): \(viewer.stamps?.summary ?? "no stamps"); glass to glass p50 \(viewer.latencyMs?.p50 ?? -1) ms, "
            + "p95 \(viewer.latencyMs?.p95 ?? -1) ms"
    }

    static func describe(_ name: String, _ report: PublishReport, _ viewer: ViewerResult) -> String {
        let inbound = viewer.inbound
        return "\(name): sent \(report.framesSent) frames \(report.width)x\(report.height) (connected after "
            + "\(report.connectedMs ?? -1) ms, \(report.keyFramesSent) key frames, \(report.plisReceived) PLIs, "
            + "\(report.nacksReceived) NACKs, \(report.retransmissions) resent of \(report.firstTransmissionsDropped) "
            + "dropped); Chromium decoded \(inbound?.framesDecoded ?? 0) \(viewer.videoWidth ?? 0)x"
            + "\(viewer.videoHeight ?? 0) at \(viewer.averageFps ?? 0) fps, first frame \(viewer.timing?.firstFrameMs ?? -1)"
            + " ms, freezes \(inbound?.freezeCount ?? -1), NACKs \(inbound?.nackCount ?? -1), PLIs \(inbound?.pliCount ?? -1)"
    }

    @Test("Chromium decodes ≥ 95 % of what we send, at the sent size; a viewer joining mid-stream gets a key frame")
    func decodesWhatWePublish() async throws {
        try await Self.withLab("Janus VideoRoom: Chromium decodes capturer-probe publish") { lab, probe in
            let (report, viewer, _) = try await Self.publishAndWatch(lab, probe: probe, seconds: 8)
            print(Self.describe("publish", report, viewer))
            #expect(viewer.ok, "viewer: \(viewer.error ?? "") \(viewer.events ?? [])")
            let inbound = try #require(viewer.inbound)
            #expect(inbound.frameWidth == 640 && inbound.frameHeight == 480)
            #expect(viewer.videoWidth == 640 && viewer.videoHeight == 480)
            // The rate Chromium decoded at, against the rate we sent at: ≥ 95 %.
            let sentFps = Double(report.framesSent) / 8
            #expect((viewer.averageFps ?? 0) >= 0.95 * sentFps, "decoded \(viewer.averageFps ?? 0) fps of \(sentFps)")
            #expect(inbound.freezeCount == 0)
            // The key-frame interval is 10 s and the run 8 s: the viewer decodes only because Janus's PLI on its
            // joining made our next frame a key frame, and it did so at once.
            #expect(report.plisReceived >= 1)
            #expect(report.keyFramesSent >= 2)
            #expect(inbound.keyFramesDecoded >= 1)
            #expect(report.sendErrors == 0)
            #expect(report.rembsReceived >= 1, "Janus's REMB (the room's bit rate) reached us")
            // Janus's answer accepts the transport-wide sequence number and transport-cc (the room's
            // transport_wide_cc_ext, on by default), so it numbers nothing but feeds back every twcc_period (200 ms).
            let twcc = try #require(report.transportWideCC)
            print(
                "publish TWCC: \(twcc.packetsSent) numbered, \(twcc.feedbackReceived) feedback messages in 8 s, "
                    + "\(twcc.packetsReportedReceived) reported received, \(twcc.packetsReportedLost) lost, "
                    + "\(twcc.ignoredStatuses) ignored, \(twcc.bytesInFlight) bytes in flight")
            #expect(twcc.isSending && twcc.packetsSent >= report.packets)
            #expect(twcc.feedbackReceived >= 20, "Janus's feedback, about 5 a second")
            #expect(twcc.packetsReportedReceived >= report.packets * 9 / 10)
            // The offer leaves candidates open (trickle); simple-whip-server takes the end-of-candidates PATCH.
            #expect(report.endOfCandidatesSent && report.patchesRefused == 0 && report.patchesFailed == 0)
            // The W3C report says the same, and Janus's receiver reports fill remote-inbound-rtp.
            let stats = try #require(report.stats)
            let outbound = try #require(stats.outboundRTP)
            // The report is made on the driver thread when asked; the other figures are its last snapshot (at most
            // 50 ms old), so a frame or two may separate them.
            #expect((report.framesSent...(report.framesSent + 3)).contains(outbound.framesSent))
            #expect(outbound.pliCount >= report.plisReceived)
            #expect(outbound.packetsSent >= report.packets + report.retransmissions)
            #expect(outbound.frameWidth == 640 && outbound.frameHeight == 480)
            #expect(outbound.encoderImplementation == "libvpx")
            #expect((outbound.framesEncoded ?? 0) >= outbound.framesSent)
            #expect(stats.candidatePair?.state == .succeeded && stats.transport.dtlsState == .connected)
            #expect(stats.transport.selectedCandidatePairId == stats.candidatePair?.id)
            let remote = try #require(stats.remoteInboundRTP, "Janus sends receiver reports")
            #expect(remote.localId == outbound.id)
            #expect(remote.roundTripTimeMeasurements >= 1, "Janus's reports carry LSR/DLSR")
            #expect(remote.roundTripTime.map { $0 < .milliseconds(200) } == true)
        }
    }

    @Test("with --orientation portrait, Chromium shows the picture upright (taller than wide)")
    func portraitIsUpright() async throws {
        try await Self.withLab("Janus VideoRoom: portrait orientation") { lab, probe in
            let (report, viewer, _) = try await Self.publishAndWatch(
                lab, probe: probe, seconds: 5, extra: ["--orientation", "portrait"])
            print(Self.describe("portrait", report, viewer))
            #expect(viewer.ok)
            let width = try #require(viewer.videoWidth)
            let height = try #require(viewer.videoHeight)
            #expect(height > width, "the <video> element is \(width)x\(height)")
        }
    }

    @Test("--loss 5: Janus's NACKs are answered and Chromium keeps ≥ 90 % of its frame rate; without RTX it does not")
    func lossRecovery() async throws {
        try await Self.withLab("Janus VideoRoom: loss recovery") { lab, probe in
            let (clean, cleanViewer, _) = try await Self.publishAndWatch(lab, probe: probe, seconds: 8)
            print(Self.describe("no loss", clean, cleanViewer))
            let snapshot = FileManager.default.temporaryDirectory.appendingPathComponent("janus-admin-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: snapshot) }
            let (lossy, lossyViewer, _) = try await Self.publishAndWatch(
                lab, probe: probe, seconds: 8, extra: ["--loss", "5", "--seed", "7"], adminSnapshot: snapshot)
            print(Self.describe("loss 5 %, RTX", lossy, lossyViewer))
            let (bare, bareViewer, _) = try await Self.publishAndWatch(
                lab, probe: probe, seconds: 8, extra: ["--loss", "5", "--seed", "7", "--no-retransmission"])
            print(Self.describe("loss 5 %, no RTX", bare, bareViewer))

            #expect(lossy.firstTransmissionsDropped > 0)
            #expect(lossy.nacksReceived > 0)
            #expect(lossy.retransmissions * 10 >= lossy.firstTransmissionsDropped * 8, "most dropped packets resent")
            let publisher = try JanusLab.adminSnapshot(of: snapshot).first { ($0.media.first?.inPackets ?? 0) > 0 }
            let medium = publisher?.media.first
            print("janus admin (publisher): \(String(describing: medium))")
            // Janus 1.1.2 counts the NACKs of a publisher's stream under nacks_received (its "NACKs for this m-line").
            #expect(max(medium?.nacksSent ?? 0, medium?.nacksReceived ?? 0) > 0, "Janus's Admin API shows NACKs")
            #expect((medium?.retransmissionsReceived ?? 0) > 0, "Janus's Admin API shows retransmissions received")
            let cleanFps = try #require(cleanViewer.averageFps)
            let lossyFps = try #require(lossyViewer.averageFps)
            let bareFps = try #require(bareViewer.averageFps)
            // Frames decoded over the same 8 s, and the rate they came at: both within 10 % of the loss-free run.
            let cleanDecoded = Double(cleanViewer.inbound?.framesDecoded ?? 0)
            let lossyDecoded = Double(lossyViewer.inbound?.framesDecoded ?? 0)
            let bareDecoded = Double(bareViewer.inbound?.framesDecoded ?? 0)
            #expect(lossyFps >= 0.9 * cleanFps, "with RTX: \(lossyFps) fps against \(cleanFps) without loss")
            #expect(lossyDecoded >= 0.9 * cleanDecoded, "with RTX: \(lossyDecoded) frames against \(cleanDecoded)")
            #expect(lossyViewer.inbound?.freezeCount == 0)
            #expect(bare.retransmissions == 0)
            // Without RTX a lost packet spoils its frame and every frame after it until a key frame: Chromium decodes
            // far fewer frames (an average fps over the few it decoded says nothing), or freezes.
            let bareSuffers =
                bareDecoded < 0.9 * cleanDecoded || bareFps < 0.9 * cleanFps
                || (bareViewer.inbound?.freezeCount ?? 0) > 0
            #expect(
                bareSuffers,
                "without RTX: \(bareDecoded) frames, \(bareFps) fps, \(bareViewer.inbound?.freezeCount ?? 0) freezes")
        }
    }

    @Test("a 500 kbit/s link (tc tbf): the sent rate settles under the cap by the loss it causes; Chromium decodes")
    func rateCap() async throws {
        guard ExternalProcess.which("tc") != nil else {
            return JanusLab.skip("Janus VideoRoom: 500 kbit/s link", "tc (iproute2) is not installed")
        }
        try await Self.withLab("Janus VideoRoom: 500 kbit/s link") { lab, probe in
            let namespace = try #require(lab.values["pub_ns"])
            let device = namespace.replacingOccurrences(of: "-pub", with: "pub0")
            let shaped = try await lab.publish(
                "tc",
                ["qdisc", "add", "dev", device, "root", "tbf", "rate", "500kbit", "burst", "32kb", "latency", "400ms"])
            #expect(shaped.status == 0, "tc: \(shaped.stderrText)")
            let (report, viewer, _) = try await Self.publishAndWatch(
                lab, probe: probe, seconds: 20, extra: ["--bitrate", "1500", "--start-bitrate", "1500"], idle: 8)
            print(
                Self.describe("500 kbit/s link", report, viewer) + "; encoder target \(report.targetBitrateKbps), "
                    + "loss-based estimate \(report.lossBasedEstimateKbps ?? -1), last 5 s \(report.lastFiveSecondsKbps ?? -1) kbit/s"
            )
            print("500 kbit/s link: viewer events \(viewer.events ?? [])")
            let settled = try #require(report.lastFiveSecondsKbps)
            #expect(settled < 500, "the last five seconds went out at \(settled) kbit/s")
            #expect(viewer.ok)
            // The first seconds overfill the link (1.5 Mbit/s into 0.5) and freeze the picture until the rate comes
            // down; then it plays again: at least a third of the run's frames decoded.
            #expect((viewer.inbound?.framesDecoded ?? 0) > report.framesSent / 3, "Chromium keeps decoding")
        }
    }

    @Test(
        "two Chromium viewers at once: each decodes ≥ 95 % in order, glass to glass measured; our uplink stays one stream"
    )
    func twoViewers() async throws {
        try await Self.withLab("Janus VideoRoom: two viewers") { lab, probe in
            let query = "mode=videoroom&room=1234&idle=2"
            async let first = lab.view(query: query, seconds: 40, stamps: true)
            async let second = lab.view(query: query, seconds: 40, stamps: true, role: "viewer2", port: 8001)
            async let publishing = Self.publish(lab, probe: probe, seconds: 10)
            // Janus's handles once both subscribers play: one publisher's stream in, one copy out to each viewer.
            var handles: [JanusHandle] = []
            if try await lab.waitForViewer(), try await lab.waitForViewer(role: "viewer2") {
                try await Task.sleep(for: .seconds(2))
                handles = try await lab.admin()
            }
            let (report, _) = try await publishing
            let viewers = [try await first, try await second]
            let sentFps = Double(report.framesSent) / 10
            for (index, viewer) in viewers.enumerated() {
                print(Self.describe("viewer \(index + 1) of 2", report, viewer))
                print(Self.describeStamps("viewer \(index + 1) of 2 (through Janus, 640x480)", viewer))
                #expect(viewer.ok, "viewer \(index + 1): \(viewer.error ?? "") \(viewer.events ?? [])")
                #expect(viewer.videoWidth == 640 && viewer.videoHeight == 480)
                #expect(
                    (viewer.averageFps ?? 0) >= 0.95 * sentFps, "decoded \(viewer.averageFps ?? 0) fps of \(sentFps)")
                #expect((viewer.stamps?.frames ?? 0) >= 100)
                #expect(viewer.stamps?.inOrder() == true)
                #expect(viewer.latencyMs?.p50 != nil)
            }
            let receiving = handles.filter { ($0.media.first?.inPackets ?? 0) > 0 }
            let sending = handles.filter { ($0.media.first?.outPackets ?? 0) > 0 }
            print(
                "two viewers: Janus has \(receiving.count) handle(s) receiving and \(sending.count) sending; we sent "
                    + "\(report.packets) packets at \(report.bitrateKbps) kbit/s, \(report.keyFramesSent) key frames, "
                    + "\(report.plisReceived) PLIs")
            #expect(receiving.count == 1, "one stream up from us, whatever the number of viewers")
            #expect(sending.count == 2, "one copy down to each viewer")
            #expect(report.plisReceived >= 2, "each viewer's join asked us for a key frame")
        }
    }

    @Test("glass to glass through Janus at 1280x720: in order, none repeated, latency measured")
    func glassToGlass720p() async throws {
        try await Self.withLab("Janus VideoRoom: 1280x720 glass to glass") { lab, probe in
            let (report, viewer, _) = try await Self.publishAndWatch(
                lab, probe: probe, seconds: 8, extra: ["--bitrate", "2000", "--start-bitrate", "2000"],
                target: "1280x720", stamps: true)
            print(Self.describe("1280x720", report, viewer))
            print(Self.describeStamps("1280x720 through Janus", viewer))
            #expect(viewer.ok, "viewer: \(viewer.error ?? "") \(viewer.events ?? [])")
            #expect(viewer.videoWidth == 1280 && viewer.videoHeight == 720)
            #expect((viewer.stamps?.frames ?? 0) >= 100)
            #expect(viewer.stamps?.inOrder() == true)
            #expect(viewer.latencyMs?.p50 != nil)
        }
    }
}
