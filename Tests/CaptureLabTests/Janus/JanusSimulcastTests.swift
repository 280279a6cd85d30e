import CaptureLabSupport
import CaptureTestSupport
import Foundation
import Testing

/// Simulcast through Janus's VideoRoom (issue 21's test plan): a publisher sends 1280x720 as three encodings (rids h,
/// m, l, highest first as Janus's default rid order wants; L1T3 each) over WHIP, Janus detects simulcast from the offer
/// and relays one substream and temporal layer per viewer, and headless Chromium viewers ask for theirs with the join
/// and `configure` (`Fixtures/webrtc/viewer.html`, `ViewerLayers`).
///
/// The publisher is a parameter: headless Chromium now (the anchor), `capturer-probe publish --simulcast` once it has
/// that option (skipped loudly until then). Frame-rate bounds are generous ranges (a busy 2-core machine runs three
/// browsers here); the figures are printed for each publisher. The room sends no REMB (`--room-bitrate 0`): Janus's
/// 1 Mbit/s cap would keep the top layer off.
@Suite(
    "Janus VideoRoom: simulcast to viewers on different layers (real peers)", .tags(.lab, .root), .selectedByTags,
    .serialized)
struct JanusSimulcastTests {
    /// Who publishes the three encodings.
    enum Publisher: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Headless Chromium's fake camera (`mode=whip-publish&simulcast=3`).
        case chromium
        /// `capturer-probe publish --simulcast` (ours).
        case capturerProbe = "capturer-probe"

        var testDescription: String { rawValue }

        /// Why it cannot publish simulcast here, or `nil`.
        func unavailableReason() async -> String? {
            switch self {
            case .chromium:
                return nil  // JanusLab.run installs Chromium or skips
            case .capturerProbe:
                guard let probe = BuiltTools.capturerProbe?.path else {
                    return "capturer-probe is not built (swift build --product capturer-probe)"
                }
                let help = try? await ExternalProcess.run(probe, ["publish", "--help"])
                guard let help, help.stdoutText.contains("--simulcast") else {
                    return "capturer-probe publish has no --simulcast yet (issue 21)"
                }
                return nil
            }
        }

        /// Publishes 1280x720 at 30 fps in three encodings to the lab's WHIP endpoint for `seconds` and returns what
        /// the publisher reported: Chromium's page result (with a `getStats()` sample every 500 ms), or our report.
        func publish(_ lab: JanusLab, seconds: Int) async throws -> Publication {
            switch self {
            case .chromium:
                let result = try await lab.chromiumPublish(seconds: seconds, simulcast: 3, query: "&series=500")
                return Publication(chromium: result, report: nil)
            case .capturerProbe:
                let probe = try #require(BuiltTools.capturerProbe?.path)
                let whip = try #require(lab.whipURL)
                let run = try await lab.publish(
                    probe,
                    [
                        "publish", "--whip", whip, "--target", "1280x720", "--fps-limit", "30", "--seconds",
                        "\(seconds)", "--simulcast", "--json",
                    ])
                #expect(run.status == 0, "capturer-probe publish: \(run.stderrText.suffix(2_000))")
                return Publication(chromium: nil, report: run.stdoutText)
            }
        }
    }

    /// What a publisher reported.
    struct Publication: Sendable {
        /// Chromium's page result.
        var chromium: ViewerResult?
        /// Our `--json` report.
        var report: String?

        /// How long our publisher's CPU adaptation held its capture below the requested size (W3C
        /// `qualityLimitationDurations.cpu` of its `--json` report), in seconds; `nil` for Chromium or no report.
        var cpuLimitedSeconds: Double? {
            guard let report, let start = report.firstIndex(of: "{"),
                let object = try? JSONSerialization.jsonObject(with: Data(report[start...].utf8)) as? [String: Any],
                let stats = object["stats"] as? [String: Any], let outbound = stats["outboundRTP"] as? [String: Any]
            else { return nil }
            let durations = outbound["qualityLimitationDurations"] as? [String: Any]
            return (durations?["cpu"] as? NSNumber)?.doubleValue ?? 0
        }

        /// Says loudly, and returns `true`, when our publisher was CPU-limited (a machine too busy to encode three
        /// layers of 1280x720 in real time, so its overuse detector scaled the capture down): sizes cannot be judged.
        func cpuLimited(_ test: String) -> Bool {
            guard let seconds = cpuLimitedSeconds, seconds > 1 else { return false }
            print(
                "⚠️ \(test): not judged on sizes: capturer-probe was CPU-limited for \(format(seconds)) s (the machine "
                    + "could not encode three layers in real time; its overuse detector scaled the capture down)")
            return true
        }

        /// One line per encoding (Chromium), or our report's end.
        var summary: String {
            if let chromium {
                let encodings = (chromium.encodings ?? []).map { e in
                    "\(e.rid ?? "?") \(e.frameWidth)x\(e.frameHeight) \(format(e.fps)) fps \(format(e.kbps, 0)) kbit/s"
                        + " (\(e.scalabilityMode ?? "-"), \(e.qualityLimitationReason ?? "-"), \(e.keyFramesEncoded) key"
                        + " frames, \(e.pliCount) PLIs)"
                }
                return "Chromium: camera \(chromium.capture?.width ?? 0)x\(chromium.capture?.height ?? 0) at "
                    + "\(format(chromium.capture?.frameRate)) fps, offer a=rid \(chromium.offerRids ?? []), "
                    + "\(chromium.simulcastLine ?? "no a=simulcast"); " + encodings.joined(separator: "; ")
            }
            return "capturer-probe: \((report ?? "").suffix(1_500))"
        }
    }

    static let highViewer = "viewer-high"
    static let lowViewer = "viewer-low"

    static func format(_ value: Double?, _ digits: Int = 1) -> String {
        guard let value else { return "-" }
        return String(format: "%.\(digits)f", value)
    }

    static func describe(_ phase: ViewerResult.Phase) -> String {
        "s\(phase.substream.map(String.init) ?? "·")t\(phase.temporal.map(String.init) ?? "·") "
            + "[\(format(phase.startMs / 1_000)), \(format(phase.endMs / 1_000))) s: "
            + "\(phase.sizes.joined(separator: "/")) \(format(phase.fps)) fps \(format(phase.kbps, 0)) kbit/s, "
            + "\(phase.freezeCount) freezes (\(format(phase.freezesDuration, 2)) s), longest gap "
            + "\(Int(phase.longestGapMs)) ms"
    }

    static func describeEvents(_ viewer: ViewerResult) -> String {
        (viewer.layerEvents ?? []).map { event in
            (event.substream.map { "substream \($0)" } ?? event.temporal.map { "temporal \($0)" } ?? "?")
                + " @\(format((event.ms ?? 0) / 1_000, 2)) s"
        }.joined(separator: ", ")
    }

    /// Runs `body` in a lab (Janus's room without a REMB cap, plus `labArguments`), or says loudly why not.
    static func withLab(
        _ test: String, _ publisher: Publisher, labArguments: [String] = [], _ body: (JanusLab) async throws -> Void
    ) async throws {
        if let reason = await publisher.unavailableReason() { return JanusLab.skip(test, reason) }
        try await JanusLab.run(test: test, labArguments: ["--room-bitrate", "0"] + labArguments, body)
    }

    @Test(
        "two viewers at once: s2/t2 decodes 1280x720 at ~30 fps; s0 then t0, t1, t2 decodes 320x180 at rising rates",
        arguments: Publisher.allCases)
    func twoViewersOnTheirLayers(_ publisher: Publisher) async throws {
        let test = "Janus simulcast (\(publisher.rawValue)): two viewers on their layers"
        try await Self.withLab(test, publisher) { lab in
            // Both viewers wait for the publisher to appear in the room, then watch 15 s from their first frame.
            let high = ViewerLayers(substream: 2, temporal: 2, settle: 5)
            let low = ViewerLayers(
                substream: 0, temporal: 0, plan: [.init(at: 5, temporal: 1), .init(at: 10, temporal: 2)])
            async let publishing = publisher.publish(lab, seconds: 32)
            async let highViewing = lab.view(query: high.query, seconds: 15, role: Self.highViewer, port: 8001)
            async let lowViewing = lab.view(query: low.query, seconds: 15, role: Self.lowViewer, port: 8002)
            let (a, b, publication) = try await (highViewing, lowViewing, publishing)

            print("janus simulcast (\(publisher.rawValue)): \(publication.summary)")
            for (name, viewer) in [("A (s2/t2)", a), ("B (s0; t0, t1, t2)", b)] {
                print(
                    "janus simulcast (\(publisher.rawValue)) viewer \(name): "
                        + (viewer.phases ?? []).map(Self.describe).joined(separator: "; ")
                        + "; Janus events: \(Self.describeEvents(viewer))")
            }
            #expect(a.ok, "viewer A: \(a.error ?? "") \(a.events ?? [])")
            #expect(b.ok, "viewer B: \(b.error ?? "") \(b.events ?? [])")

            // Janus took the publisher for simulcast (from its offer): the join's answer carries a simulcast state.
            for (name, viewer) in [("A", a), ("B", b)] {
                let video = viewer.subscription?.first { $0.type == "video" }
                #expect(
                    video?.simulcast != nil, "viewer \(name): Janus did not detect simulcast: \(video.debugDescription)"
                )
            }

            if publication.cpuLimited(test) { return }
            // A: the top substream at full rate.
            let aPhase = try #require(a.phases?.first, "viewer A has no phase")
            // Known for the Chromium anchor (seen twice on this 2-core machine, once in a CI dry run): its estimate
            // ramps slowly with three Chromium processes busy, so its top encoding comes on late (substream 2 at
            // 11 s, 14 fps) and viewer A starts on 640x360, or, with our builds running too, never within 15 s.
            withKnownIssue("Chromium's top encoding can come on late on a busy machine", isIntermittent: true) {
                #expect(aPhase.sizes == ["1280x720"], "viewer A decoded \(aPhase.sizes)")
                #expect((20...36).contains(aPhase.fps ?? 0), "viewer A: \(Self.format(aPhase.fps)) fps")
                #expect(a.layerEvents?.contains { $0.substream == 2 } == true, "viewer A: no 'substream 2' event")
            } when: {
                publisher == .chromium
            }

            // B: the bottom substream, the frame rate rising with each temporal layer (L1T3: 1/4, 1/2, all frames).
            let bPhases = try #require(b.phases)
            try #require(bPhases.count == 3, "viewer B: \(bPhases.count) phases, expected t0, t1, t2")
            for (index, phase) in bPhases.enumerated() {
                // Known (seen once, in a CI dry run): Janus started viewer B on our top layer and moved it to
                // substream 0 only at the key frame its first `configure` asked for, 5 s later. Our key frames are
                // per layer (a PLI keys the layer it names); Chromium's multi-resolution encoder keys every layer at
                // once, so its layer 0 always has a recent key frame. To examine in issue 21's next session.
                withKnownIssue(
                    "a substream-0 viewer may start on our top layer until layer 0's next key frame",
                    isIntermittent: true
                ) {
                    #expect(phase.sizes == ["320x180"], "viewer B, temporal \(phase.temporal ?? -1): \(phase.sizes)")
                } when: {
                    publisher == .capturerProbe && index == 0
                }
            }
            let (t0, t1, t2) = (bPhases[0].fps ?? 0, bPhases[1].fps ?? 0, bPhases[2].fps ?? 0)
            #expect((4...10).contains(t0), "temporal 0: \(Self.format(t0)) fps, about 7.5 expected")
            // About 15 expected; Chromium as the viewer decodes fewer (10-11 fps at 27 sent, while Janus relays the
            // whole TL1 byte share): see Fixtures/webrtc/README.md.
            #expect((8...20).contains(t1), "temporal 1: \(Self.format(t1)) fps, about 15 expected")
            #expect((20...36).contains(t2), "temporal 2: \(Self.format(t2)) fps, about 30 expected")
            #expect(t1 >= 1.25 * t0 && t2 >= 1.5 * t1, "no rise with the temporal layers: \(t0), \(t1), \(t2)")
            for layer in [1, 2] {
                #expect(
                    b.layerEvents?.contains { $0.temporal == layer } == true, "viewer B: no 'temporal \(layer)' event")
            }

            // The publisher (Chromium's own figures): three encodings, highest first in the offer.
            if let chromium = publication.chromium {
                #expect(chromium.ok, "publisher: \(chromium.error ?? "") \(chromium.events ?? [])")
                #expect(chromium.offerRids == ["h send", "m send", "l send"])
                let sizes = (chromium.encodings ?? []).map { "\($0.rid ?? "?") \($0.frameWidth)x\($0.frameHeight)" }
                #expect(sizes == ["h 1280x720", "m 640x360", "l 320x180"])
            }
        }
    }

    /// The shaped link's schedule: wide, narrowed under what the top layer needs, wide again.
    static let wideKbps = 5_000.0
    static let narrowKbps = 500.0
    static let narrowAt = 20.0
    static let widenAt = 40.0

    @Test(
        "a link narrowed to 500 kbit/s turns the top layer off: the s2 viewer falls back, and returns once it widens",
        arguments: Publisher.allCases)
    func topLayerOffOnANarrowLink(_ publisher: Publisher) async throws {
        let test = "Janus simulcast (\(publisher.rawValue)): top layer off on a narrow link"
        if ExternalProcess.which("chrt") == nil { return JanusLab.skip(test, "chrt is not installed (the delay line)") }
        let link = ["--link", "--twcc-period", "100"]
        try await Self.withLab(test, publisher, labArguments: link) { lab in
            // 1280x720's top layer needs 600 kbit/s on top of the lower layers' 150 + 500 (libwebrtc's table): at
            // 500 kbit/s only the lower two fit.
            let profile = LinkProfile(
                name: "simulcast-dip", durationS: 90,
                fwd: [
                    .init(atS: 0, rateKbps: Self.wideKbps, delayMs: 25, queueMs: 300),
                    .init(atS: Self.narrowAt, rateKbps: Self.narrowKbps),
                    .init(atS: Self.widenAt, rateKbps: Self.wideKbps),
                ],
                rev: [.init(atS: 0, delayMs: 25)])
            try await lab.startLink(profile, csv: lab.runDirectory.appendingPathComponent("link.csv"))
            let high = ViewerLayers(substream: 2, temporal: 2, settle: 2, series: 250)
            async let publishing = publisher.publish(lab, seconds: 82)
            async let viewing = lab.view(query: high.query, seconds: 78, role: Self.highViewer, port: 8001)
            let (viewer, publication) = try await (viewing, publishing)
            let summary = try await lab.stopLink()
            print("janus simulcast (\(publisher.rawValue)), shaped link: \(publication.summary)")
            if let chromium = publication.chromium, !chromium.ok || chromium.encodings?.isEmpty != false {
                print(
                    "janus simulcast (chromium), shaped link, publisher: \(chromium.error ?? "") \(chromium.events ?? [])"
                )
            }
            #expect(viewer.ok, "viewer: \(viewer.error ?? "") \(viewer.events ?? [])")
            let t0 = try #require(summary?.t0Realtime, "the delay line saw no RTP")
            let figures = try #require(
                ShapedFigures(viewer: viewer, t0: t0, narrowAt: Self.narrowAt, widenAt: Self.widenAt))
            print("janus simulcast (\(publisher.rawValue)), shaped link, viewer s2/t2: \(figures.description)")
            if let chromium = publication.chromium {
                print(
                    "janus simulcast (chromium), shaped link, publisher: "
                        + ChromiumTopLayer(chromium, t0: t0, narrowAt: Self.narrowAt, widenAt: Self.widenAt).description
                )
            }

            if publication.cpuLimited(test) { return }
            #expect(figures.wideBefore, "the viewer was not on the top layer before the narrowing: \(figures)")
            let fallback = try #require(figures.fallbackS, "no fallback to a lower substream after the narrowing")
            #expect(fallback <= 10, "fell back \(fallback) s after the narrowing")
            #expect(figures.narrowAtEnd, "still on the top layer at the end of the narrow phase")
            // With the top layer off, our lower layers alone cannot fill the widened link: without padding the
            // estimate stayed at 1.5 × the acknowledged rate and the top layer came back late (17 s on a calm machine,
            // not within 40 s in one CI dry run). The pacer now pads up to the lower layers' targets plus 1.2 × the
            // top layer's min, as libwebrtc (CalculateMaxPadBitrateBps), none while the estimate is loss-limited:
            // back after 19-22 s on a calm machine (link-compare SIM; Chromium 12.5 s), the estimate rising from the
            // narrow link's rate at GCC's 8 % a second. Still marked intermittent until CI runs show it holds under
            // load.
            try withKnownIssue(
                "our top layer may return late after a widening (the estimate climbs at 8 %/s)", isIntermittent: true
            ) {
                let back = try #require(figures.returnS, "the viewer never returned to substream 2")
                #expect(back <= 38, "returned \(back) s after the widening")
                let full = try #require(figures.fullRateS, "1280x720 never came back at ≥ 15 fps")
                #expect(full <= 38, "1280x720 at ≥ 15 fps \(full) s after the widening")
            } when: {
                publisher == .capturerProbe
            }
            // "A short freeze": generous, as Chromium's own (a key frame of the middle layer through a full queue).
            #expect(figures.fallbackStallS <= 6, "stalled \(figures.fallbackStallS) s at the fallback")
        }
    }

    /// What the s2/t2 viewer saw through the narrowing and the widening, on the delay line's timeline (seconds from
    /// the first RTP packet forward).
    struct ShapedFigures: CustomStringConvertible {
        /// The widest frames decoded before the narrowing: the top layer's width (1280 unless the publisher's CPU
        /// adaptation lowered its capture).
        var topWidth: Int
        /// Top-layer frames (of ``topWidth``, on substream 2) just before the narrowing.
        var wideBefore: Bool
        /// From the narrowing to Janus's first `substream` < 2 event.
        var fallbackS: Double?
        /// The longest time without a decoded frame in the 10 s after the narrowing.
        var fallbackStallS: Double
        /// Freezes (W3C) in the 10 s after the narrowing: how many, how long in all.
        var fallbackFreezes: (Int, Double)
        /// `substream 2` events between the fallback and the widening: the top layer flapping on.
        var flaps: Int
        /// Not on 1280x720 just before the widening.
        var narrowAtEnd: Bool
        /// From the widening to Janus's first `substream 2` event.
        var returnS: Double?
        /// From the widening to the first second of 1280x720 frames decoded at ≥ 15 fps.
        var fullRateS: Double?
        /// The longest time without a decoded frame and the freezes from the widening to the end.
        var returnStallS: Double
        var returnFreezes: (Int, Double)

        init?(viewer: ViewerResult, t0: Double, narrowAt: Double, widenAt: Double) {
            guard let series = viewer.series, !series.isEmpty else { return nil }
            let samples = series.map { (t: $0.epochMs / 1_000 - t0, sample: $0) }
            let events = (viewer.layerEvents ?? []).map { (t: $0.epochMs / 1_000 - t0, event: $0) }
            func width(before t: Double) -> Int { samples.last { $0.t < t }?.sample.frameWidth ?? 0 }
            func stall(_ from: Double, _ to: Double) -> Double {
                var longest = 0.0
                var changed = from
                var decoded = samples.last { $0.t <= from }?.sample.framesDecoded ?? 0
                for (t, sample) in samples where t > from && t <= to {
                    if let frames = sample.framesDecoded, frames != decoded {
                        longest = max(longest, t - changed)
                        changed = t
                        decoded = frames
                    }
                }
                return max(longest, min(to, samples.last?.t ?? to) - changed)
            }
            func freezes(_ from: Double, _ to: Double) -> (Int, Double) {
                let a = samples.last { $0.t <= from }?.sample ?? samples[0].sample
                let b = samples.last { $0.t <= to }?.sample ?? a
                return (
                    (b.freezeCount ?? 0) - (a.freezeCount ?? 0),
                    (b.totalFreezesDuration ?? 0) - (a.totalFreezesDuration ?? 0)
                )
            }
            // The top layer's width as the publisher sent it before the narrowing: 1280, unless its CPU adaptation
            // had lowered the capture (a busy machine: our publisher's overuse detector scales the input, and the
            // layers with it). The layer switching is what is judged here, not the CPU.
            let top = samples.filter { $0.t < narrowAt }.compactMap(\.sample.frameWidth).max() ?? 0
            topWidth = top
            let substreamBefore = events.last { $0.t < narrowAt && $0.event.substream != nil }?.event.substream
            wideBefore = top >= 960 && width(before: narrowAt) == top && (substreamBefore ?? 2) == 2
            let fallback = events.first { $0.t > narrowAt && ($0.event.substream ?? 2) < 2 }
            fallbackS = fallback.map { $0.t - narrowAt }
            fallbackStallS = stall(narrowAt, narrowAt + 10)
            fallbackFreezes = freezes(narrowAt, narrowAt + 10)
            flaps = events.filter { $0.t > (fallback?.t ?? widenAt) && $0.t < widenAt && $0.event.substream == 2 }.count
            narrowAtEnd = width(before: widenAt) < top
            returnS = events.first { $0.t > widenAt && $0.event.substream == 2 }.map { $0.t - widenAt }
            fullRateS = samples.indices.first { index in
                let (t, sample) = samples[index]
                guard t > widenAt, (sample.frameWidth ?? 0) >= top,
                    let later = samples[index...].first(where: { $0.t >= t + 1 }),
                    (later.sample.frameWidth ?? 0) >= top
                else { return false }
                let frames = (later.sample.framesDecoded ?? 0) - (sample.framesDecoded ?? 0)
                return Double(frames) / (later.t - t) >= 15
            }.map { samples[$0].t - widenAt }
            returnStallS = stall(widenAt, samples.last?.t ?? widenAt)
            returnFreezes = freezes(widenAt, samples.last?.t ?? widenAt)
        }

        var description: String {
            "fallback \(format(fallbackS, 2)) s after the narrowing (longest stall \(format(fallbackStallS, 2)) s, "
                + "\(fallbackFreezes.0) freezes, \(format(fallbackFreezes.1, 2)) s in 10 s), \(flaps) flaps back to "
                + "substream 2 while narrow; substream 2 again \(format(returnS, 2)) s after the widening, top layer "
                + "(\(topWidth) wide) at "
                + "≥ 15 fps after \(format(fullRateS, 2)) s (longest stall \(format(returnStallS, 2)) s, "
                + "\(returnFreezes.0) freezes, \(format(returnFreezes.1, 2)) s)"
        }
    }

    /// When Chromium's top encoding stopped and came back, from its `getStats()` samples (every 500 ms): its target
    /// going to 0 after the narrowing, its first target and its first second at ≥ 20 fps after the widening.
    struct ChromiumTopLayer: CustomStringConvertible {
        var offS: Double?
        var onS: Double?
        var fullS: Double?
        var estimateAtWidenKbps: Double?

        init(_ result: ViewerResult, t0: Double, narrowAt: Double, widenAt: Double) {
            let samples = (result.series ?? []).compactMap {
                sample -> (t: Double, top: ViewerResult.EncodingSample, estimate: Double?)? in
                guard let top = sample.encodings?.first(where: { $0.rid == "h" }) else { return nil }
                return (sample.epochMs / 1_000 - t0, top, sample.availableOutgoingBitrate)
            }
            offS = samples.first { $0.t > narrowAt && $0.top.targetBitrate == 0 }.map { $0.t - narrowAt }
            onS = samples.first { $0.t > widenAt && $0.top.targetBitrate > 0 }.map { $0.t - widenAt }
            fullS = samples.indices.first { index in
                let a = samples[index]
                guard a.t > widenAt, let b = samples[index...].first(where: { $0.t >= a.t + 1 }) else { return false }
                return Double(b.top.framesSent - a.top.framesSent) / (b.t - a.t) >= 20
            }.map { samples[$0].t - widenAt }
            estimateAtWidenKbps = samples.last { $0.t <= widenAt && ($0.estimate ?? 0) > 0 }?.estimate.map {
                $0 / 1_000
            }
        }

        var description: String {
            "top layer (h) target 0 \(format(offS, 2)) s after the narrowing; estimate \(format(estimateAtWidenKbps, 0))"
                + " kbit/s at the widening, h target again after \(format(onS, 2)) s, h at ≥ 20 fps after "
                + "\(format(fullS, 2)) s"
        }
    }
}

private func format(_ value: Double?, _ digits: Int = 1) -> String { JanusSimulcastTests.format(value, digits) }
