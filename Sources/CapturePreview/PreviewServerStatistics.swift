internal import CaptureCore

/// What the preview server has answered: requests by status code, viewers started and ended, malformed requests.
///
/// Shared by the server's connections and readable at any time from any thread (a `Locked` guards the counts: a pthread mutex, which ThreadSanitizer sees).
public final class PreviewServerStatistics: Sendable {
    /// A copy of the counts at one moment.
    public struct Snapshot: Sendable, Hashable, Codable {
        /// Responses sent, by HTTP status code (`100 Continue` not counted).
        public var responsesByStatus: [Int: Int] = [:]
        /// Viewers the WHEP endpoint has started (201 answers).
        public var viewersStarted = 0
        /// Viewers ended by a DELETE on their resource.
        public var viewersEnded = 0
        /// Requests refused as malformed: wrong content type, empty or oversized body, unparsable HTTP.
        public var malformed = 0

        /// All responses counted.
        public var requests: Int { responsesByStatus.values.reduce(0, +) }

        /// Empty counts.
        public init() {}
    }

    private let counts = Locked(Snapshot())

    /// Statistics starting from zero.
    public init() {}

    /// The counts now.
    public var snapshot: Snapshot { counts.withLock { $0 } }

    /// Counts a response with `status`.
    public func recordResponse(status: Int) {
        counts.withLock { $0.responsesByStatus[status, default: 0] += 1 }
    }

    /// Counts a malformed request.
    public func recordMalformed() {
        counts.withLock { $0.malformed += 1 }
    }

    /// Counts a viewer started.
    public func recordViewerStarted() {
        counts.withLock { $0.viewersStarted += 1 }
    }

    /// Counts a viewer ended.
    public func recordViewerEnded() {
        counts.withLock { $0.viewersEnded += 1 }
    }
}
