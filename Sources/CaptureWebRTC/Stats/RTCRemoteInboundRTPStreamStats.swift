/// The peer's view of the stream we send, from its RTCP receiver reports, as W3C webrtc-stats'
/// `RTCRemoteInboundRtpStreamStats` (type `remote-inbound-rtp`).
///
/// ## RFCs
/// RFC 3550 §6.4.1 (the report block: fraction lost, cumulative lost, interarrival jitter; the round trip from LSR
/// and DLSR).
public struct RTCRemoteInboundRTPStreamStats: Sendable, Hashable, Codable {
    /// The W3C stats type, `remote-inbound-rtp`.
    public var type = RTCStatsType.remoteInboundRTP
    /// The stats id: `RI` and the SSRC.
    public var id: String
    /// The stream's SSRC (W3C `ssrc`).
    public var ssrc: UInt32
    /// `video` (W3C `kind`).
    public var kind = "video"
    /// The transport's stats id (W3C `transportId`).
    public var transportId = "T01"
    /// The ``RTCOutboundRTPStreamStats`` it describes (W3C `localId`).
    public var localId: String
    /// The receiver's cumulative count of packets lost (W3C `packetsLost`; negative when duplicates outnumber
    /// losses).
    public var packetsLost: Int
    /// The fraction lost in the last report's interval, 0…1 (W3C `fractionLost`).
    public var fractionLost: Double
    /// The receiver's interarrival jitter (W3C `jitter`).
    public var jitter: Duration
    /// The last round trip computed from a report (W3C `roundTripTime`); `nil` until one could be.
    public var roundTripTime: Duration?
    /// The sum of the round trips computed (W3C `totalRoundTripTime`).
    public var totalRoundTripTime: Duration
    /// How many round trips ``totalRoundTripTime`` sums (W3C `roundTripTimeMeasurements`).
    public var roundTripTimeMeasurements: Int

    /// Creates the stats of stream `ssrc`, sent as `localId`.
    public init(
        ssrc: UInt32, localId: String, packetsLost: Int, fractionLost: Double, jitter: Duration,
        roundTripTime: Duration?, totalRoundTripTime: Duration, roundTripTimeMeasurements: Int
    ) {
        id = "RI\(ssrc)"
        self.ssrc = ssrc
        self.localId = localId
        self.packetsLost = packetsLost
        self.fractionLost = fractionLost
        self.jitter = jitter
        self.roundTripTime = roundTripTime
        self.totalRoundTripTime = totalRoundTripTime
        self.roundTripTimeMeasurements = roundTripTimeMeasurements
    }

    private enum CodingKeys: String, CodingKey {
        case type, id, ssrc, kind, transportId, localId, packetsLost, fractionLost, jitter, roundTripTime
        case totalRoundTripTime, roundTripTimeMeasurements
    }

    /// Decodes the stats, their times in seconds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(RTCStatsType.self, forKey: .type)
        id = try c.decode(String.self, forKey: .id)
        ssrc = try c.decode(UInt32.self, forKey: .ssrc)
        kind = try c.decode(String.self, forKey: .kind)
        transportId = try c.decode(String.self, forKey: .transportId)
        localId = try c.decode(String.self, forKey: .localId)
        packetsLost = try c.decode(Int.self, forKey: .packetsLost)
        fractionLost = try c.decode(Double.self, forKey: .fractionLost)
        jitter = try c.decodeSeconds(forKey: .jitter) ?? .zero
        roundTripTime = try c.decodeSeconds(forKey: .roundTripTime)
        totalRoundTripTime = try c.decodeSeconds(forKey: .totalRoundTripTime) ?? .zero
        roundTripTimeMeasurements = try c.decode(Int.self, forKey: .roundTripTimeMeasurements)
    }

    /// Encodes the stats, their times in seconds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(id, forKey: .id)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(kind, forKey: .kind)
        try c.encode(transportId, forKey: .transportId)
        try c.encode(localId, forKey: .localId)
        try c.encode(packetsLost, forKey: .packetsLost)
        try c.encode(fractionLost, forKey: .fractionLost)
        try c.encodeSeconds(jitter, forKey: .jitter)
        try c.encodeSeconds(roundTripTime, forKey: .roundTripTime)
        try c.encodeSeconds(totalRoundTripTime, forKey: .totalRoundTripTime)
        try c.encode(roundTripTimeMeasurements, forKey: .roundTripTimeMeasurements)
    }
}
