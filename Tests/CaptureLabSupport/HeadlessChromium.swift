import CaptureTestSupport
import Foundation

/// What a page's stamp reader (`PreviewPage.stampScript()`) counted: frames read, out of order, repeated, skipped,
/// unreadable; announced frames out of RTP order; pictures that were not the announced frame.
package struct StampCounts: Decodable, Sendable {
    /// The first picture read that was not the frame requestVideoFrameCallback announced.
    package struct Mismatch: Decodable, Sendable {
        /// The frame number the picture carried.
        package var frame: Int
        /// How far its capture time lies from the announced frame's (ms; positive: the picture is newer).
        package var apartMs: Int
        /// How many stamps had been read by then.
        package var read: Int
    }
    /// The first frame read below one read before it.
    package struct Disorder: Decodable, Sendable {
        /// Its frame number.
        package var frame: Int
        /// The highest frame number read before it.
        package var after: Int
        /// How many stamps had been read by then.
        package var read: Int
    }
    package var frames: Int
    package var outOfOrder: Int
    package var repeated: Int
    package var skipped: Int
    package var invalid: Int
    package var firstOutOfOrder: Disorder?
    /// Pictures that were not the announced frame (left out of the other counts).
    package var mismatched: Int
    /// Announced frames whose RTP timestamp did not rise.
    package var rtpOutOfOrder: Int
    /// The capture-time-to-RTP offset the reader settled on; `nil` when the browser announced no RTP timestamps,
    /// so that pictures could not be matched to frames.
    package var offset: Double?
    package var firstMismatch: Mismatch?

    /// The counts in words, for a test's output.
    package var summary: String {
        "stamps \(frames) read, \(outOfOrder) out of order, \(repeated) repeated, \(skipped) skipped, \(invalid) "
            + "unreadable, \(mismatched) not the announced frame, \(rtpOutOfOrder) out of RTP order"
            + (offset == nil ? " (no RTP timestamps announced: pictures not matched)" : "")
            + (firstOutOfOrder.map { "; first out of order: frame \($0.frame) after \($0.after), at stamp \($0.read)" }
                ?? "")
            + (firstMismatch.map {
                "; first mismatch: frame \($0.frame), \($0.apartMs) ms from the announced one, at stamp \($0.read)"
            } ?? "")
    }

    /// The stream as presented was in order: no frame out of order or repeated, by picture and by RTP timestamp,
    /// the pictures matched to their frames, and at most `mismatches` pictures that were not the announced frame
    /// (the canvas racing the compositor on a loaded machine: a browser's read, not the stream).
    package func inOrder(mismatches: Int = 3) -> Bool {
        outOfOrder == 0 && repeated == 0 && rtpOutOfOrder == 0 && offset != nil && mismatched <= mismatches
    }
}

/// Glass-to-glass latency over the stamped frames (`latencySummary`), in ms.
package struct LatencySummary: Decodable, Sendable {
    package var count: Int
    package var p50: Double?
    package var p95: Double?
}

/// Headless Chromium opening a page that POSTs its summary to a report URL (the preview page's `?report=`), with
/// `Scripts/viewer-server.py` (standard-library Python) as the report's receiver and, when asked, as a server of
/// another origin.
package enum HeadlessChromium {
    /// Chromium's binary, or `nil`.
    package static let binary = ["chromium", "chromium-browser", "google-chrome"].lazy.compactMap(ExternalProcess.which)
        .first

    /// Why a page cannot be run here, or `nil` when it can.
    package static func unavailableReason() -> String? {
        if binary == nil { return "chromium is not installed (Scripts/webrtc-peers install)" }
        if ExternalProcess.which("python3") == nil { return "python3 is not installed" }
        if ExternalProcess.which("timeout") == nil { return "coreutils' timeout is not installed" }
        return nil
    }

    /// The preview page's summary (`window.previewState`).
    package struct PreviewReport: Decodable {
        package var status: String
        package var error: String?
        package var width: Int
        package var height: Int
        package var fps: Double
        package var framesDecoded: Int
        package var freezeCount: Int
        package var packetsLost: Int
        package var rotation: Int?
        package var rttMs: Double?
        package var stamps: StampCounts
        package var latencyMs: LatencySummary
    }

    /// Opens the URL `page(origin)` builds (`origin` is the receiver's `http://127.0.0.1:PORT`, which also serves
    /// `servedPage` at `/` when given) and returns the summary the page POSTs to `origin + "/result"`; the page's PNG
    /// snapshot (its `snapshot` field) goes to `screenshot`.
    package static func run(
        page: (String) -> String, servedPage: URL? = nil, timeoutSeconds: Int = 60, screenshot: URL? = nil
    ) async throws -> PreviewReport {
        guard let chromium = binary else { throw Failure(description: "chromium is not installed") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ready = scratch.appendingPathComponent("ready")
        var serverArguments = [
            Fixtures.packageRoot.appendingPathComponent("Scripts/viewer-server.py").path, "--port", "0", "--ready",
            ready.path, "--timeout", "\(timeoutSeconds)",
        ]
        if let servedPage { serverArguments += ["--page", servedPage.path] }
        if let screenshot { serverArguments += ["--screenshot", screenshot.path] }
        let server = Task { try await ExternalProcess.run("python3", serverArguments) }
        let deadline = ContinuousClock.now + .seconds(20)
        var port: String?
        while port == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            port =
                (try? String(contentsOf: ready, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                .nilIfEmpty
        }
        guard let port else { throw Failure(description: "viewer-server.py did not start") }
        let profile = scratch.appendingPathComponent("profile").path
        let url = page("http://127.0.0.1:\(port)")
        let browser = Task {
            try await ExternalProcess.run(
                "timeout",
                [
                    "-s", "KILL", "\(timeoutSeconds + 15)", chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--no-first-run", "--user-data-dir=\(profile)", "--allow-loopback-in-peer-connection",
                    "--autoplay-policy=no-user-gesture-required", url,
                ])
        }
        let received = try await server.value
        // Chromium stays up after the page reported: end it (and its helpers, which share the profile argument).
        _ = try? await ExternalProcess.run("pkill", ["-KILL", "-f", profile])
        _ = try? await browser.value
        let line = received.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return try JSONDecoder().decode(PreviewReport.self, from: Data(line.utf8))
        } catch {
            throw Failure(
                description: "no summary from the page (\(received.status)): \(received.stderrText.suffix(1_500))")
        }
    }

    /// A page run that failed.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
