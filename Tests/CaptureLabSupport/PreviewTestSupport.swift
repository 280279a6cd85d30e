import CaptureCore
import CapturePreview
import Logging

/// A WHEP answerer for the preview tests: answers any offer unless it contains "busy" (503), names viewers
/// `viewer-1`, `viewer-2`, …, and remembers which are live.
package final class FakeWHEPHandler: WHEPSessionHandler {
    private struct State {
        package var next = 1
        package var live: Set<String> = []
        package var offers: [String] = []
    }
    /// A pthread lock, not `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux.
    private let state = Locked(State())

    package static let answerSDP =
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
    package static let figures = PreviewFigures(
        width: 640, height: 480, fps: 30, bitrateKbps: 800, rotation: 90, viewers: 1, rttMs: 12.5)

    package init() {}

    package var liveViewers: Set<String> { state.withLock { $0.live } }
    package var offers: [String] { state.withLock { $0.offers } }

    package func answer(
        offer: String, remote: String
    ) async throws(WHEPRequestError) -> (answer: String, viewerID: String) {
        if offer.contains("busy") { throw .serviceUnavailable("too many viewers") }
        let id = state.withLock { state in
            let id = "viewer-\(state.next)"
            state.next += 1
            state.live.insert(id)
            state.offers.append(offer)
            return id
        }
        return (Self.answerSDP, id)
    }

    package func end(viewerID: String) async -> Bool {
        state.withLock { $0.live.remove(viewerID) != nil }
    }

    package func figures() async -> PreviewFigures { Self.figures }
}

/// A minimal SDP offer.
package let previewOffer =
    "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=recvonly\r\n"

/// A logger for preview tests: warnings and worse only.
package let previewTestLogger: Logger = {
    var logger = Logger(label: "preview-tests")
    logger.logLevel = .warning
    return logger
}()
