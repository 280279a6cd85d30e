public import CaptureICE

/// The selected ICE candidate pair, as W3C webrtc-stats' `RTCIceCandidatePairStats` (type `candidate-pair`).
///
/// The packet and byte counts are this pair's (what went to and came from its remote address). The request and
/// response counts are the ICE agent's over every pair it checked, consent included where W3C says so: this engine
/// reports only the selected pair.
public struct RTCIceCandidatePairStats: Sendable, Hashable, Codable {
    /// The W3C stats type, `candidate-pair`.
    public var type = RTCStatsType.candidatePair
    /// The stats id: `CP`, then the local and remote candidates' ids.
    public var id: String
    /// The transport's stats id (W3C `transportId`).
    public var transportId = "T01"
    /// Our candidate's stats id (W3C `localCandidateId`).
    public var localCandidateId: String
    /// The peer's candidate's stats id (W3C `remoteCandidateId`).
    public var remoteCandidateId: String
    /// The pair's check state (W3C `state`).
    public var state: RTCStatsIceCandidatePairState
    /// Whether the pair was nominated (W3C `nominated`).
    public var nominated: Bool
    /// Datagrams sent to the pair's remote address (W3C `packetsSent`).
    public var packetsSent = 0
    /// Bytes in those datagrams (W3C `bytesSent`).
    public var bytesSent = 0
    /// Datagrams received from the pair's remote address (W3C `packetsReceived`).
    public var packetsReceived = 0
    /// Bytes in those datagrams (W3C `bytesReceived`).
    public var bytesReceived = 0
    /// The last round trip measured by a check or a consent request (W3C `currentRoundTripTime`).
    public var currentRoundTripTime: Duration?
    /// The sum of the round trips measured (W3C `totalRoundTripTime`; divide by ``responsesReceived`` for a mean).
    public var totalRoundTripTime: Duration = .zero
    /// Connectivity checks sent, retransmissions included (W3C `requestsSent`).
    public var requestsSent = 0
    /// Checks and consent requests received from the peer (W3C `requestsReceived`).
    public var requestsReceived = 0
    /// Success responses received to our checks and consent requests (W3C `responsesReceived`).
    public var responsesReceived = 0
    /// Success responses sent to the peer's requests (W3C `responsesSent`).
    public var responsesSent = 0
    /// Consent freshness requests sent, RFC 7675 (W3C `consentRequestsSent`).
    public var consentRequestsSent = 0
    /// What the congestion controller estimates this pair can carry from us, bits per second (W3C
    /// `availableOutgoingBitrate`): the send-side estimate's target once transport-wide feedback is negotiated;
    /// `nil` without it.
    public var availableOutgoingBitrate: Double?

    /// The stats of `pair`, before any traffic is counted.
    public init(_ pair: ICECandidatePair) {
        localCandidateId = RTCIceCandidateStats.id(of: pair.local)
        remoteCandidateId = RTCIceCandidateStats.id(of: pair.remote)
        id = "CP\(localCandidateId)_\(remoteCandidateId)"
        state = RTCStatsIceCandidatePairState(pair.state)
        nominated = pair.nominated
    }

    private enum CodingKeys: String, CodingKey {
        case type, id, transportId, localCandidateId, remoteCandidateId, state, nominated, packetsSent, bytesSent
        case packetsReceived, bytesReceived, currentRoundTripTime, totalRoundTripTime, requestsSent, requestsReceived
        case responsesReceived, responsesSent, consentRequestsSent, availableOutgoingBitrate
    }

    /// Decodes the stats, their times in seconds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(RTCStatsType.self, forKey: .type)
        id = try c.decode(String.self, forKey: .id)
        transportId = try c.decode(String.self, forKey: .transportId)
        localCandidateId = try c.decode(String.self, forKey: .localCandidateId)
        remoteCandidateId = try c.decode(String.self, forKey: .remoteCandidateId)
        state = try c.decode(RTCStatsIceCandidatePairState.self, forKey: .state)
        nominated = try c.decode(Bool.self, forKey: .nominated)
        packetsSent = try c.decode(Int.self, forKey: .packetsSent)
        bytesSent = try c.decode(Int.self, forKey: .bytesSent)
        packetsReceived = try c.decode(Int.self, forKey: .packetsReceived)
        bytesReceived = try c.decode(Int.self, forKey: .bytesReceived)
        currentRoundTripTime = try c.decodeSeconds(forKey: .currentRoundTripTime)
        totalRoundTripTime = try c.decodeSeconds(forKey: .totalRoundTripTime) ?? .zero
        requestsSent = try c.decode(Int.self, forKey: .requestsSent)
        requestsReceived = try c.decode(Int.self, forKey: .requestsReceived)
        responsesReceived = try c.decode(Int.self, forKey: .responsesReceived)
        responsesSent = try c.decode(Int.self, forKey: .responsesSent)
        consentRequestsSent = try c.decode(Int.self, forKey: .consentRequestsSent)
        availableOutgoingBitrate = try c.decodeIfPresent(Double.self, forKey: .availableOutgoingBitrate)
    }

    /// Encodes the stats, their times in seconds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(id, forKey: .id)
        try c.encode(transportId, forKey: .transportId)
        try c.encode(localCandidateId, forKey: .localCandidateId)
        try c.encode(remoteCandidateId, forKey: .remoteCandidateId)
        try c.encode(state, forKey: .state)
        try c.encode(nominated, forKey: .nominated)
        try c.encode(packetsSent, forKey: .packetsSent)
        try c.encode(bytesSent, forKey: .bytesSent)
        try c.encode(packetsReceived, forKey: .packetsReceived)
        try c.encode(bytesReceived, forKey: .bytesReceived)
        try c.encodeSeconds(currentRoundTripTime, forKey: .currentRoundTripTime)
        try c.encodeSeconds(totalRoundTripTime, forKey: .totalRoundTripTime)
        try c.encode(requestsSent, forKey: .requestsSent)
        try c.encode(requestsReceived, forKey: .requestsReceived)
        try c.encode(responsesReceived, forKey: .responsesReceived)
        try c.encode(responsesSent, forKey: .responsesSent)
        try c.encode(consentRequestsSent, forKey: .consentRequestsSent)
        try c.encodeIfPresent(availableOutgoingBitrate, forKey: .availableOutgoingBitrate)
    }
}

/// W3C's `RTCStatsIceCandidatePairState`.
public enum RTCStatsIceCandidatePairState: String, Sendable, Hashable, Codable {
    /// Not checked yet, and not to be until another pair of its foundation succeeds.
    case frozen
    /// Waiting for its check.
    case waiting
    /// A check is outstanding.
    case inProgress = "in-progress"
    /// Its check failed.
    case failed
    /// Its check succeeded.
    case succeeded

    /// The W3C state of an agent's pair state.
    public init(_ state: ICECandidatePair.State) {
        switch state {
        case .waiting: self = .waiting
        case .inProgress: self = .inProgress
        case .succeeded: self = .succeeded
        case .failed: self = .failed
        }
    }
}
