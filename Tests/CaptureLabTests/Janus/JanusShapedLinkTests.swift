import CaptureLabSupport
import CaptureTestSupport
import Foundation
import Testing

/// `capturer-probe publish` through a shaped link: the lab with its delay line (`Scripts/webrtc-peers lab-up --link`,
/// `Scripts/lab/linkem.py` in the namespace between publisher and Janus) runs `Scripts/lab/link-compare`'s short
/// profile S1 for our publisher alone: 2 Mbit/s for 10 s, then 500 kbit/s for 20 s, RTT 50 ms, a 300 ms drop-tail
/// queue. Janus's room sends no REMB and feeds transport-wide CC back every 100 ms, so only our send-side estimate
/// steers the rate. The figures come from the bridge's per-packet log; the bounds are issue 20's (send rate under the
/// link within 2 s of the step, queue under 100 ms within 3 s) with slack, as one run on a busy 2-core machine is noisy.
/// `Scripts/lab/link-compare P1` compares with Chromium on the full profiles.
@Suite(
    "Janus VideoRoom: capturer-probe publish through a shaped link (real peers)", .tags(.lab, .root),
    .selectedByTags, .serialized)
struct JanusShapedLinkTests {
    /// The figures of one run, as `link-compare` writes them (a subset).
    struct Results: Decodable {
        struct Run: Decodable {
            var publisher: String
            var error: String?
            var viewerOk: Bool?
            var figures: Figures?
        }
        struct Figures: Decodable {
            var steps: [Step]
            var phases: [Phase]
            var viewer: Viewer?
            var qdelayP95Ms: Double?
        }
        struct Step: Decodable {
            var kind: String
            var reactionS: Double?
            var queueS: Double?
            var queuePeakMs: Double?
            var tailDropsPct: Double?
            var stallS: Double?
        }
        struct Phase: Decodable {
            var capacityKbps: Double
            var utilPct: Double?
            var meanKbps: Double?
            var qdelayP95Ms: Double?
            var decodedFps: Double?
        }
        struct Viewer: Decodable {
            var freezes: Int
            var freezeS: Double
            var framesDecoded: Int
            var longestStallS: Double?
        }
        var runs: [Run]
    }

    static let compare = Fixtures.packageRoot.appendingPathComponent("Scripts/lab/link-compare").path

    @Test("a step from 2 to 0.5 Mbit/s: under the link within 2 s (+2 s slack), queue < 100 ms within 3 s (+2 s)")
    func stepDown() async throws {
        let test = "Janus VideoRoom: shaped link, 2 → 0.5 Mbit/s"
        guard let probe = BuiltTools.capturerProbe?.path else {
            return JanusLab.skip(test, "capturer-probe is not built (swift build --product capturer-probe)")
        }
        for tool in ["ffmpeg", "chrt", "chromium"] where ExternalProcess.which(tool) == nil {
            return JanusLab.skip(test, "\(tool) is not installed (the clip, the delay line's priority, the viewer)")
        }
        let link = ["--link", "--room-bitrate", "0", "--twcc-period", "100"]
        try await JanusLab.run(test: test, labArguments: link) { lab in
            let out = lab.runDirectory.appendingPathComponent("link-compare")
            let clip = FileManager.default.temporaryDirectory.appendingPathComponent("link-compare-clip.y4m").path
            let run = try await ExternalProcess.run(
                Self.compare,
                [
                    "S1", "--publishers", "ours", "--lab", lab.runDirectory.path, "--probe", probe, "--out", out.path,
                    "--clip", clip,
                ])
            print("link-compare S1 (ours):\n\(run.stdoutText)")
            #expect(run.status == 0, "link-compare: \(run.stderrText.suffix(2_000))")
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let results = try decoder.decode(
                Results.self, from: Data(contentsOf: out.appendingPathComponent("results.json")))
            let ours = try #require(results.runs.first { $0.publisher == "ours" })
            let figures = try #require(ours.figures, "no figures: \(ours.error ?? "?")")
            let step = try #require(figures.steps.first { $0.kind == "down" })
            print(
                "shaped link: reaction \(step.reactionS ?? -1) s, queue < 100 ms after \(step.queueS ?? -1) s (peak "
                    + "\(step.queuePeakMs ?? -1) ms, \(step.tailDropsPct ?? -1) % dropped in 5 s), longest stall "
                    + "\(step.stallS ?? -1) s; phases \(figures.phases.map { "\($0.capacityKbps): \($0.meanKbps ?? -1) k, \($0.decodedFps ?? -1) fps" })"
            )
            let reaction = try #require(step.reactionS, "the offered rate never came under 500 kbit/s")
            #expect(reaction <= 2 + 2, "under the link \(reaction) s after the step")
            let settled = try #require(step.queueS, "the queue never settled under 100 ms")
            #expect(settled <= 3 + 2, "queue under 100 ms \(settled) s after the step")
            #expect(ours.viewerOk == true, "the Chromium viewer decoded nothing")
            #expect((figures.viewer?.framesDecoded ?? 0) > 0)
        }
    }
}
