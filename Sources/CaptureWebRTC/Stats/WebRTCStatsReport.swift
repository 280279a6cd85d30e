internal import CaptureCore

/// One connection's statistics at one instant, in the names and shapes of W3C webrtc-stats
/// (<https://www.w3.org/TR/webrtc-stats/>), so that a WebRTC engineer reads them as they read Chromium's `getStats()`.
///
/// A report holds what this connection has: one `transport`, the selected `candidate-pair` with its
/// `local-candidate` and `remote-candidate`, the `outbound-rtp` stream it sends and, once the peer has sent a
/// receiver report, the `remote-inbound-rtp` view of that stream. Each value carries its W3C `id` and `type`, and
/// the ids link them as W3C's do (`transportId`, `localCandidateId`, `localId`).
///
/// ## Times
/// Durations are `Duration`s in Swift; encoded (`Codable`), they are seconds as a `Double`, as W3C gives them
/// (`roundTripTime`, `jitter`, `totalEncodeTime`…), so the JSON reads like a browser's. ``timestamp`` is the time since
/// the connection started, not a wall-clock time: the engine takes its time as an input.
///
/// ## What differs from a browser
/// - Only the selected candidate pair is reported, and its request and response counts are the ICE agent's, over
///   every pair checked (W3C counts them per pair).
/// - Byte counts follow what the sender can see: see each field.
///
/// ## Threading
/// A value: make it where the connection lives (``WebRTCConnection/statsReport(at:)``), read it anywhere.
public struct WebRTCStatsReport: Sendable, Hashable, Codable {
    /// The time since the connection started (W3C `timestamp` is wall-clock time; this one is monotonic).
    public var timestamp: Duration
    /// The transport (W3C `transport`).
    public var transport: RTCTransportStats
    /// The selected candidate pair, once ICE has one (W3C `candidate-pair`).
    public var candidatePair: RTCIceCandidatePairStats?
    /// Our candidate of the selected pair (W3C `local-candidate`).
    public var localCandidate: RTCIceCandidateStats?
    /// The peer's candidate of the selected pair (W3C `remote-candidate`).
    public var remoteCandidate: RTCIceCandidateStats?
    /// The stream we send, once connected with one (W3C `outbound-rtp`).
    public var outboundRTP: RTCOutboundRTPStreamStats?
    /// With simulcast, the layers above the first (W3C: one `outbound-rtp` per encoding, each with its `rid` and
    /// `encodingIndex`; ``outboundRTP`` is layer 0 then), lowest first. Empty without simulcast.
    public var simulcastLayers: [RTCOutboundRTPStreamStats] = []
    /// The peer's view of that stream from its receiver reports, once one arrived (W3C `remote-inbound-rtp`).
    public var remoteInboundRTP: RTCRemoteInboundRTPStreamStats?

    /// Creates a report.
    public init(
        timestamp: Duration, transport: RTCTransportStats, candidatePair: RTCIceCandidatePairStats? = nil,
        localCandidate: RTCIceCandidateStats? = nil, remoteCandidate: RTCIceCandidateStats? = nil,
        outboundRTP: RTCOutboundRTPStreamStats? = nil, remoteInboundRTP: RTCRemoteInboundRTPStreamStats? = nil
    ) {
        self.timestamp = timestamp
        self.transport = transport
        self.candidatePair = candidatePair
        self.localCandidate = localCandidate
        self.remoteCandidate = remoteCandidate
        self.outboundRTP = outboundRTP
        self.remoteInboundRTP = remoteInboundRTP
    }

    private enum CodingKeys: String, CodingKey {
        case timestamp, transport, candidatePair, localCandidate, remoteCandidate, outboundRTP, remoteInboundRTP
        case simulcastLayers
    }

    /// Decodes a report, its times in seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timestamp = try container.decodeSeconds(forKey: .timestamp) ?? .zero
        transport = try container.decode(RTCTransportStats.self, forKey: .transport)
        candidatePair = try container.decodeIfPresent(RTCIceCandidatePairStats.self, forKey: .candidatePair)
        localCandidate = try container.decodeIfPresent(RTCIceCandidateStats.self, forKey: .localCandidate)
        remoteCandidate = try container.decodeIfPresent(RTCIceCandidateStats.self, forKey: .remoteCandidate)
        outboundRTP = try container.decodeIfPresent(RTCOutboundRTPStreamStats.self, forKey: .outboundRTP)
        remoteInboundRTP = try container.decodeIfPresent(RTCRemoteInboundRTPStreamStats.self, forKey: .remoteInboundRTP)
        simulcastLayers =
            try container.decodeIfPresent([RTCOutboundRTPStreamStats].self, forKey: .simulcastLayers) ?? []
    }

    /// Encodes the report, its times in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeSeconds(timestamp, forKey: .timestamp)
        try container.encode(transport, forKey: .transport)
        try container.encodeIfPresent(candidatePair, forKey: .candidatePair)
        try container.encodeIfPresent(localCandidate, forKey: .localCandidate)
        try container.encodeIfPresent(remoteCandidate, forKey: .remoteCandidate)
        try container.encodeIfPresent(outboundRTP, forKey: .outboundRTP)
        try container.encodeIfPresent(remoteInboundRTP, forKey: .remoteInboundRTP)
        if !simulcastLayers.isEmpty { try container.encode(simulcastLayers, forKey: .simulcastLayers) }
    }
}

/// The W3C `RTCStatsType` of each value in a ``WebRTCStatsReport``.
public enum RTCStatsType: String, Sendable, Hashable, Codable {
    /// ``RTCTransportStats``.
    case transport
    /// ``RTCIceCandidatePairStats``.
    case candidatePair = "candidate-pair"
    /// ``RTCIceCandidateStats`` of ours.
    case localCandidate = "local-candidate"
    /// ``RTCIceCandidateStats`` of the peer's.
    case remoteCandidate = "remote-candidate"
    /// ``RTCOutboundRTPStreamStats``.
    case outboundRTP = "outbound-rtp"
    /// ``RTCRemoteInboundRTPStreamStats``.
    case remoteInboundRTP = "remote-inbound-rtp"
}

extension KeyedEncodingContainer {
    /// Encodes `duration` as seconds (W3C's unit), nothing when `nil`.
    mutating func encodeSeconds(_ duration: Duration?, forKey key: Key) throws {
        guard let duration else { return }
        try encode(duration.inSeconds, forKey: key)
    }
}

extension KeyedDecodingContainer {
    /// Decodes seconds (W3C's unit) as a `Duration`; `nil` when absent.
    func decodeSeconds(forKey key: Key) throws -> Duration? {
        guard let seconds = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard seconds.isFinite, abs(seconds) < 1e12 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\(seconds) is not a duration in seconds")
        }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
