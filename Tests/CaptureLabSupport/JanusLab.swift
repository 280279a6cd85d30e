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

    /// Publishes headless Chromium's fake camera (640x480) to the WHIP endpoint (room 1234) from the publisher
    /// namespace for `seconds` after its first sent frame: a reference publisher to check the lab with.
    package func chromiumPublish(seconds: Int) async throws -> ViewerResult {
        let result = try await ExternalProcess.run(Self.script, ["publish", runDirectory.path, "", "\(seconds)"])
        let line = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return try JSONDecoder().decode(ViewerResult.self, from: Data(line.utf8))
        } catch {
            throw LabFailure(description: "publisher gave no result (\(result.status)): \(result.stderrText)")
        }
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

    /// The outbound-rtp figures (`mode=whip-publish`).
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
