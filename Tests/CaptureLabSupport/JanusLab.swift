import CapturePreview
import CaptureTestSupport
import CaptureWebRTC
import Foundation
import Testing

/// The real-peer lab of `Scripts/webrtc-peers`: Janus 1.1.2 (VideoRoom room 1234, Streaming mountpoint 99 for plain
/// RTP VP8, Admin API) and simple-whip-server in the network namespace `cap-sfu` (10.77.0.1), a publisher namespace
/// `cap-pub` (10.77.0.2) on the other end of a veth pair, and headless Chromium as the viewer.
///
/// Use it through `JanusLab.run(test:_:)`, which brings the lab up, runs the body and always brings it down again. The
/// namespaces are machine-wide, so the labs of one test process run one at a time.
package struct JanusLab: Sendable {
    /// The run folder: Janus's config and log, simple-whip-server's log, the viewers' logs and results.
    package let runDirectory: URL
    /// The `key=value` lines `lab-up` printed (whip_url, janus_url, admin_url, admin_secret, rtp_target, ...).
    package let values: [String: String]

    /// The WHIP endpoint (simple-whip-server, publishing into room 1234).
    package var whipURL: String? { values["whip_url"] }
    /// Janus's HTTP API.
    package var janusURL: String? { values["janus_url"] }
    /// Janus's Admin API.
    package var adminURL: String? { values["admin_url"] }
    /// Where plain RTP VP8 for the Streaming mountpoint goes, `HOST:PORT`.
    package var rtpTarget: String? { values["rtp_target"] }
    /// The Streaming mountpoint's id.
    package var streamingID: String? { values["streaming_id"] }

    /// The lab script.
    package static let script = Fixtures.packageRoot.appendingPathComponent("Scripts/webrtc-peers").path

    /// Why the lab cannot run on this machine, or `nil`.
    package static func unavailableReason() -> String? {
        if getuid() != 0 { return "the lab needs root (network namespaces); run the tests as root" }
        for tool in ["ip", "bash", "python3", "node"] where ExternalProcess.which(tool) == nil {
            return "\(tool) is not installed"
        }
        return nil
    }

    /// Prints the loud skip note the suites use.
    package static func skip(_ test: String, _ reason: String) {
        print("SKIPPED (\(test)): \(reason)")
    }

    /// Brings a lab up, runs `body` with it and brings it down again (also when `body` throws). Skips loudly (prints
    /// and returns without running `body`) when the lab cannot run here: not root, or janus/chromium/simple-whip-server
    /// cannot be installed. `labArguments` go to `lab-up` (for example `--link` for the delay line's namespace).
    package static func run(
        test: String, labArguments: [String] = [], _ body: (JanusLab) async throws -> Void
    ) async throws {
        if let reason = unavailableReason() { return skip(test, reason) }
        await LabLock.shared.acquire()
        do {
            try await runLocked(test: test, labArguments: labArguments, body)
            await LabLock.shared.release()
        } catch {
            await LabLock.shared.release()
            throw error
        }
    }

    private static func runLocked(
        test: String, labArguments: [String], _ body: (JanusLab) async throws -> Void
    ) async throws {
        let install = try await ExternalProcess.run(script, ["install"])
        guard install.status == 0 else {
            return skip(test, "janus, chromium or simple-whip-server could not be installed: \(install.stderrText)")
        }
        let runDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("janus-lab-\(UUID().uuidString)")
        let up = try await ExternalProcess.run(script, ["lab-up", runDirectory.path] + labArguments)
        guard up.status == 0 else {
            Issue.record("lab-up failed (\(up.status)): \(up.stderrText)")
            return
        }
        let lab = JanusLab(runDirectory: runDirectory, values: parseKeyValues(up.stdoutText))
        do {
            try await body(lab)
        } catch {
            await lab.down()
            throw error
        }
        await lab.down()
        try? FileManager.default.removeItem(at: runDirectory)
    }

    /// Stops everything `lab-up` started and deletes the namespaces; the run folder stays for a failed test's logs.
    package func down() async {
        let result = try? await ExternalProcess.run(Self.script, ["lab-down", runDirectory.path])
        if result?.status != 0 { print("janus lab: lab-down failed: \(result?.stderrText ?? "not run")") }
    }

    /// Parses `key=value` lines (other lines are ignored).
    package static func parseKeyValues(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    /// Runs the headless Chromium viewer (`Fixtures/webrtc/viewer.html`) with `query` (for example
    /// `"mode=streaming&id=99&idle=2"`) for at most `seconds` after its first decoded frame, and decodes its result.
    /// With `adminSnapshot`, the Admin API is read 1 s after the first frame (see `adminSnapshot(of:)`). With
    /// `stamps`, the page reads the synthetic camera's frame stamps (`PreviewPage.stampScript()`) and reports order and
    /// glass-to-glass latency. A second viewer at the same time needs another `role` (its marker and files are named
    /// after it) and `port` (its page server's).
    package func view(
        query: String, seconds: Int, adminSnapshot: URL? = nil, stamps: Bool = false, role: String = "viewer",
        port: Int = 8000
    ) async throws -> ViewerResult {
        var arguments = ["view", runDirectory.path, query + (stamps ? "&stamps=1" : ""), "\(seconds)"]
        arguments += ["--role", role, "--port", "\(port)"]
        if let adminSnapshot { arguments += ["--admin", adminSnapshot.path] }
        if stamps {
            let script = runDirectory.appendingPathComponent("stamp.js")
            try Data(PreviewPage.stampScript().utf8).write(to: script)
            arguments += ["--stamp-script", script.path]
        }
        let result = try await ExternalProcess.run(Self.script, arguments)
        let line = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return try JSONDecoder().decode(ViewerResult.self, from: Data(line.utf8))
        } catch {
            throw LabFailure(description: "\(role) gave no result (\(result.status)): \(result.stderrText)")
        }
    }

    /// Publishes headless Chromium's fake camera (640x480 at 30 fps) to the WHIP endpoint (room 1234) from the
    /// publisher namespace for `seconds` after its first sent frame: a reference publisher to check the lab with.
    ///
    /// With `simulcast` (2 or 3) it publishes 1280x720 as that many encodings, rids `h`, `m`, `l` listed highest first
    /// (Janus's default rid order), L1T3 each, and the result's `encodings` has each one's figures (see
    /// `Fixtures/webrtc/viewer.html`); the room must not cap it (`lab-up --room-bitrate 0`). `query` adds page
    /// parameters (`&series=500`, `&order=asc`, `&scalability=none`, `&width=…`); `fakeVideo` is a Y4M clip (header
    /// `C420`) for the camera to play instead of the test pattern.
    package func chromiumPublish(
        seconds: Int, simulcast: Int = 0, query: String = "", fakeVideo: URL? = nil
    ) async throws -> ViewerResult {
        var page = ""
        if simulcast > 0 || !query.isEmpty {
            guard let whipURL else { throw LabFailure(description: "the lab printed no whip_url") }
            page = "mode=whip-publish&url=\(whipURL)" + (simulcast > 0 ? "&simulcast=\(simulcast)" : "") + query
        }
        var arguments = ["publish", runDirectory.path, page, "\(seconds)"]
        if let fakeVideo { arguments += ["--fake-video", fakeVideo.path] }
        let result = try await ExternalProcess.run(Self.script, arguments)
        let line = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return try JSONDecoder().decode(ViewerResult.self, from: Data(line.utf8))
        } catch {
            throw LabFailure(description: "publisher gave no result (\(result.status)): \(result.stderrText)")
        }
    }

    /// Starts the delay line between the publisher and Janus (a lab brought up with `--link`) with `profile`, one CSV
    /// line per frame into `csv`: `Scripts/webrtc-peers link-start`. Its timeline starts at the first RTP packet
    /// forward.
    package func startLink(_ profile: LinkProfile, csv: URL) async throws {
        let file = runDirectory.appendingPathComponent("link-\(profile.name).json")
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try encoder.encode(profile).write(to: file)
        let result = try await ExternalProcess.run(Self.script, ["link-start", runDirectory.path, file.path, csv.path])
        guard result.status == 0 else { throw LabFailure(description: "link-start failed: \(result.stderrText)") }
    }

    /// Stops the delay line and returns its summary (`nil` when it printed none).
    package func stopLink() async throws -> LinkSummary? {
        let result = try await ExternalProcess.run(Self.script, ["link-stop", runDirectory.path])
        guard let line = result.stdoutText.split(separator: "\n").last else { return nil }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(LinkSummary.self, from: Data(line.utf8))
    }

    /// Whether the viewer `role`'s PeerConnection is up (`view` creates this marker), to start a publisher after it.
    package func waitForViewer(role: String = "viewer", timeout: Duration = .seconds(60)) async throws -> Bool {
        try await waitForMarker("\(role)-connected", timeout: timeout)
    }

    /// Whether `chromiumPublish`'s PeerConnection is up.
    package func waitForPublisher(timeout: Duration = .seconds(60)) async throws -> Bool {
        try await waitForMarker("publisher-connected", timeout: timeout)
    }

    private func waitForMarker(_ name: String, timeout: Duration) async throws -> Bool {
        let marker = runDirectory.appendingPathComponent(name).path
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: marker) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Runs `executable arguments…` in the publisher namespace (10.77.0.2).
    package func publish(_ executable: String, _ arguments: [String]) async throws -> ExternalProcess.Result {
        try await ExternalProcess.run(Self.script, ["exec-pub", executable] + arguments)
    }

    /// Janus's handles right now, from the Admin API.
    package func admin() async throws -> [JanusHandle] {
        let result = try await ExternalProcess.run(Self.script, ["admin", runDirectory.path])
        guard result.status == 0 else { throw LabFailure(description: "admin failed: \(result.stderrText)") }
        return try Self.decodeHandles(result.stdout)
    }

    /// The handles of an Admin API snapshot written by `view(query:seconds:adminSnapshot:)`.
    package static func adminSnapshot(of file: URL) throws -> [JanusHandle] {
        try decodeHandles(Data(contentsOf: file))
    }

    private static func decodeHandles(_ data: Data) throws -> [JanusHandle] {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            try decoder.decode(JanusHandle.self, from: Data($0.utf8))
        }
    }
}

/// The query of a VideoRoom viewer of a simulcast publisher (`Fixtures/webrtc/viewer.html`, `mode=videoroom`): the
/// substream and temporal layer asked for in the join, then a schedule of `configure` requests; its result's `phases`
/// have the figures of each.
package struct ViewerLayers: Sendable {
    /// One `configure` request, `at` seconds after the first decoded frame.
    package struct Step: Sendable {
        package var at: Double
        package var substream: Int?
        package var temporal: Int?

        package init(at: Double, substream: Int? = nil, temporal: Int? = nil) {
            self.at = at
            self.substream = substream
            self.temporal = temporal
        }
    }

    /// The substream asked for in the join (0 the lowest; Janus's default 2).
    package var substream: Int?
    /// The temporal layer asked for in the join (0 the base layer; Janus's default 2).
    package var temporal: Int?
    /// The `configure` requests.
    package var plan: [Step]
    /// Seconds left out at the start of each phase before its frame rate is measured.
    package var settle: Double
    /// Also a `getStats()` sample every `series` ms (`ViewerResult.series`).
    package var series: Int?
    /// The VideoRoom room.
    package var room: Int

    package init(
        substream: Int? = nil, temporal: Int? = nil, plan: [Step] = [], settle: Double = 1, series: Int? = nil,
        room: Int = 1234
    ) {
        self.substream = substream
        self.temporal = temporal
        self.plan = plan
        self.settle = settle
        self.series = series
        self.room = room
    }

    /// The page's query string.
    package var query: String {
        var query = "mode=videoroom&room=\(room)"
        if let substream { query += "&substream=\(substream)" }
        if let temporal { query += "&temporal=\(temporal)" }
        if !plan.isEmpty {
            query +=
                "&plan="
                + plan.map { step in
                    (step.substream.map { "s\($0)" } ?? "") + (step.temporal.map { "t\($0)" } ?? "") + "@\(step.at)"
                }.joined(separator: ",")
        }
        query += "&settle=\(settle)"
        if let series { query += "&series=\(series)" }
        return query
    }
}

/// A `Scripts/lab/linkem.py` profile: each direction's steps (rate, delay, queue) on the timeline that starts at the
/// first RTP packet forward (publisher to Janus).
package struct LinkProfile: Encodable, Sendable {
    /// One step: from `atS` on, what it sets (what it leaves out is inherited from the step before).
    package struct Step: Encodable, Sendable {
        package var atS: Double
        package var rateKbps: Double?
        package var delayMs: Double?
        package var queueMs: Double?

        package init(atS: Double, rateKbps: Double? = nil, delayMs: Double? = nil, queueMs: Double? = nil) {
            self.atS = atS
            self.rateKbps = rateKbps
            self.delayMs = delayMs
            self.queueMs = queueMs
        }
    }

    package var name: String
    package var durationS: Double
    package var seed = 1
    /// Publisher to Janus.
    package var fwd: [Step]
    /// Janus to publisher (RTCP).
    package var rev: [Step]

    package init(name: String, durationS: Double, fwd: [Step], rev: [Step]) {
        self.name = name
        self.durationS = durationS
        self.fwd = fwd
        self.rev = rev
    }
}

/// The summary line `Scripts/lab/linkem.py` prints when it stops (a subset).
package struct LinkSummary: Decodable, Sendable {
    /// The timeline's zero on the wall clock (seconds since the Unix epoch): the first RTP packet forward.
    package var t0Realtime: Double?
    /// How long the delay line ran, seconds.
    package var seconds: Double?
}

/// A lab step that failed.
package struct LabFailure: Error, CustomStringConvertible {
    /// What went wrong.
    package let description: String
}

/// The JSON the viewer page posts: `getStats()` figures of the video it received.
package struct ViewerResult: Decodable, Sendable {
    /// The inbound-rtp figures.
    package struct Inbound: Decodable, Sendable {
        package var framesDecoded: Int
        package var framesReceived: Int
        package var framesDropped: Int
        package var keyFramesDecoded: Int
        package var frameWidth: Int
        package var frameHeight: Int
        package var framesPerSecond: Double
        package var freezeCount: Int
        package var totalFreezesDuration: Double
        package var nackCount: Int
        package var pliCount: Int
        package var firCount: Int
        package var packetsReceived: Int
        package var packetsLost: Int
        package var jitter: Double
    }

    /// The outbound-rtp figures (`mode=whip-publish`; with simulcast, the first encoding's: the highest).
    package struct Outbound: Decodable, Sendable {
        package var framesEncoded: Int
        package var framesSent: Int
        package var frameWidth: Int
        package var frameHeight: Int
        package var packetsSent: Int
        package var nackCount: Int
        package var pliCount: Int
        package var retransmittedPacketsSent: Int
    }

    /// One encoding's outbound-rtp figures at the end of a `mode=whip-publish` run, with its rates over the run.
    package struct Encoding: Decodable, Sendable {
        /// The rid (`nil` without simulcast).
        package var rid: String?
        package var active: Bool?
        package var frameWidth: Int
        package var frameHeight: Int
        package var framesSent: Int
        package var keyFramesEncoded: Int
        package var pliCount: Int
        package var nackCount: Int
        /// The encoder's target, bit/s.
        package var targetBitrate: Double
        package var qualityLimitationReason: String?
        package var scalabilityMode: String?
        package var encoderImplementation: String?
        /// Frames sent per second over the run (from its first sent frame).
        package var fps: Double?
        /// kbit/s sent over the run (`bytesSent`, which counts Chromium's padding on the encoding that carries it).
        package var kbps: Double?
        /// Frames sent per second over the last 2 s.
        package var lastFps: Double?
        /// kbit/s sent over the last 2 s.
        package var lastKbps: Double?
    }

    /// What the camera delivers (`mode=whip-publish`: the track's settings).
    package struct Capture: Decodable, Sendable {
        package var width: Int?
        package var height: Int?
        package var frameRate: Double?
        package var label: String?
    }

    /// One phase of a VideoRoom viewer (`ViewerLayers`): the join's layers until the first `configure`, then one per
    /// `configure`.
    package struct Phase: Decodable, Sendable {
        /// The substream asked for (`nil`: unchanged).
        package var substream: Int?
        /// The temporal layer asked for (`nil`: unchanged).
        package var temporal: Int?
        /// The plan step's time (`nil` for the join's phase), seconds after the first decoded frame.
        package var step: Double?
        /// When the phase started and ended, ms after the first decoded frame.
        package var startMs: Double
        package var endMs: Double
        /// When Janus acknowledged the `configure`.
        package var ackMs: Double?
        /// The decoded size at the end of the phase.
        package var frameWidth: Int
        package var frameHeight: Int
        /// Every decoded size seen once settled, `WxH`.
        package var sizes: [String]
        /// The measured part (the phase without its first `settle` seconds), its frames and frame rate.
        package var seconds: Double
        package var framesDecoded: Int
        package var fps: Double?
        /// kbit/s received over the measured part.
        package var kbps: Double?
        /// Freezes (W3C) over the whole phase: how many, and their total length in seconds.
        package var freezeCount: Int
        package var freezesDuration: Double
        /// The longest time without a newly decoded frame in the phase, ms (at the polls' 100 ms resolution).
        package var longestGapMs: Double
    }

    /// A `substream` or `temporal` event of Janus's VideoRoom, as the viewer received it.
    package struct LayerEvent: Decodable, Sendable {
        /// ms after the first decoded frame (negative: before it).
        package var ms: Double?
        /// Wall-clock time, ms since the Unix epoch.
        package var epochMs: Double
        package var mid: String?
        package var substream: Int?
        package var temporal: Int?
    }

    /// One stream of Janus's answer to the viewer's join.
    package struct SubscribedStream: Decodable, Sendable {
        package var type: String?
        package var mid: String?
        package var codec: String?
        /// Present when Janus took the publisher's stream for simulcast: its substream and temporal layer state.
        package var simulcast: [String: Int]?
    }

    /// One `getStats()` sample of `series=MS`: a viewer's inbound-rtp figures, or a publisher's outbound-rtp ones.
    package struct Sample: Decodable, Sendable {
        /// Wall-clock time, ms since the Unix epoch.
        package var epochMs: Double
        package var framesDecoded: Int?
        package var frameWidth: Int?
        package var frameHeight: Int?
        package var freezeCount: Int?
        package var totalFreezesDuration: Double?
        package var bytesReceived: Int?
        package var bytesSent: Int?
        /// Chromium's send-side estimate, bit/s (publisher).
        package var availableOutgoingBitrate: Double?
        /// Each encoding (a simulcast publisher).
        package var encodings: [EncodingSample]?
    }

    /// One encoding in a publisher's `Sample`.
    package struct EncodingSample: Decodable, Sendable {
        package var rid: String?
        package var framesSent: Int
        package var frameWidth: Int
        package var frameHeight: Int
        package var bytesSent: Int
        package var targetBitrate: Double
        package var qualityLimitationReason: String?
    }

    /// Milliseconds since the page loaded.
    package struct Timing: Decodable, Sendable {
        package var offerMs: Double?
        package var iceConnectedMs: Double?
        package var firstFrameMs: Double?
        /// The first decoded frame's wall-clock time (ms since the Unix epoch).
        package var firstFrameEpochMs: Double?
        package var endMs: Double?
    }

    /// Whether the page saw a decoded frame and watched for its time.
    package var ok: Bool
    /// What went wrong, when not `ok`.
    package var error: String?
    /// The received video's figures.
    package var inbound: Inbound?
    /// The sent video's figures (`mode=whip-publish`).
    package var outbound: Outbound?
    /// Each encoding's figures (`mode=whip-publish`), in the order of the sender's encodings.
    package var encodings: [Encoding]?
    /// What the camera delivered (`mode=whip-publish`).
    package var capture: Capture?
    /// The offer's `a=rid` lines in order, without `a=rid:` (`mode=whip-publish`).
    package var offerRids: [String]?
    /// The offer's `a=simulcast` line (`mode=whip-publish`).
    package var simulcastLine: String?
    /// The SDP offer (the page's for `whip-publish`, Janus's otherwise) and answer.
    package var offer: String?
    package var answer: String?
    /// The phases of a VideoRoom viewer (`ViewerLayers`).
    package var phases: [Phase]?
    /// Janus's `substream`/`temporal` events (`mode=videoroom`).
    package var layerEvents: [LayerEvent]?
    /// Janus's streams of the join's answer (`mode=videoroom`).
    package var subscription: [SubscribedStream]?
    /// The `getStats()` samples of `series=MS`.
    package var series: [Sample]?
    /// The `<video>` element's size.
    package var videoWidth: Int?
    /// The `<video>` element's size.
    package var videoHeight: Int?
    /// Frames decoded per second from the first to the last received frame.
    package var averageFps: Double?
    /// The frame stamps read (`stamps: true`).
    package var stamps: StampCounts?
    /// Glass-to-glass latency (`stamps: true`).
    package var latencyMs: LatencySummary?
    /// When things happened.
    package var timing: Timing?
    /// The page's progress lines.
    package var events: [String]?
}

/// One Janus handle from the Admin API (`Scripts/webrtc-peers admin`).
package struct JanusHandle: Decodable, Sendable {
    /// One m-line's counters.
    package struct Medium: Decodable, Sendable {
        package var mid: String?
        package var type: String?
        package var codec: String?
        package var inPackets: Int?
        package var outPackets: Int?
        package var nacksSent: Int?
        package var nacksReceived: Int?
        package var retransmissionsReceived: Int?
        package var lost: Int?
        package var lostByRemote: Int?
    }

    /// `janus.plugin.streaming`, `janus.plugin.videoroom`.
    package var plugin: String?
    /// `ready` once connected.
    package var iceState: String?
    /// For example `10.77.0.1:20371 [host,udp] <-> 10.77.0.2:49590 [prflx,udp]`.
    package var selectedPair: String?
    /// `connected` once the handshake is done.
    package var dtlsState: String?
    /// The m-lines.
    package var media: [Medium]
}

/// Lets one lab run at a time in this process (the namespaces are machine-wide).
actor LabLock {
    /// The process's lock.
    package static let shared = LabLock()
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the lock is free and takes it.
    package func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    package func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
