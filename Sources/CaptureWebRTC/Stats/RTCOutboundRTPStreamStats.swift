internal import CaptureCore

/// The stream we send, as W3C webrtc-stats' `RTCOutboundRtpStreamStats` (type `outbound-rtp`).
///
/// The engine fills what the RTP sender sees. The encoder's fields (`framesEncoded`, `frameWidth`, …) are `nil` from
/// a bare ``WebRTCConnection`` and filled by ``WHIPPublisher``, which owns the encoder.
public struct RTCOutboundRTPStreamStats: Sendable, Hashable, Codable {
    /// The W3C stats type, `outbound-rtp`.
    public var type = RTCStatsType.outboundRTP
    /// The stats id: `OT01V` and the SSRC, as Chromium names it.
    public var id: String
    /// The stream's SSRC (W3C `ssrc`).
    public var ssrc: UInt32
    /// `video` (W3C `kind`).
    public var kind = "video"
    /// The transport's stats id (W3C `transportId`).
    public var transportId = "T01"
    /// The retransmission stream's SSRC, when RTX was negotiated (W3C `rtxSsrc`).
    public var rtxSsrc: UInt32?
    /// The simulcast encoding's RTP stream id (RFC 8851), when the stream is one of several (W3C `rid`).
    public var rid: String?
    /// The simulcast encoding's index, 0 the lowest resolution, when the stream is one of several (W3C
    /// `encodingIndex`).
    public var encodingIndex: Int?
    /// RTP packets sent, retransmissions included (W3C `packetsSent`).
    public var packetsSent = 0
    /// Payload bytes sent in first transmissions and retransmissions (W3C `bytesSent`; here the VP8 payload
    /// descriptor counts as header, and retransmissions count whole protected packets, as they are kept).
    public var bytesSent = 0
    /// Header bytes of first transmissions: RTP headers and extensions, VP8 payload descriptors, SRTP tags (W3C
    /// `headerBytesSent`).
    public var headerBytesSent = 0
    /// Packets sent again in answer to NACKs (W3C `retransmittedPacketsSent`).
    public var retransmittedPacketsSent = 0
    /// Bytes of those packets as sent, protected (W3C `retransmittedBytesSent` counts payload only).
    public var retransmittedBytesSent = 0
    /// Encoded frames packetized and sent (W3C `framesSent`).
    public var framesSent = 0
    /// Key frames sent; W3C's `keyFramesEncoded`, every key frame encoded being sent.
    public var keyFramesEncoded = 0
    /// Generic NACKs received for this stream (W3C `nackCount`).
    public var nackCount = 0
    /// Picture loss indications received (W3C `pliCount`).
    public var pliCount = 0
    /// Full intra requests received (W3C `firCount`).
    public var firCount = 0
    /// The bit rate the encoder is asked for, in bit/s (W3C `targetBitrate`).
    public var targetBitrate: Double?
    /// Frames the encoder produced (W3C `framesEncoded`); from the publisher.
    public var framesEncoded: Int?
    /// The last encoded frame's width (W3C `frameWidth`); from the publisher.
    public var frameWidth: Int?
    /// The last encoded frame's height (W3C `frameHeight`); from the publisher.
    public var frameHeight: Int?
    /// The time spent encoding (W3C `totalEncodeTime`); from the publisher.
    public var totalEncodeTime: Duration?
    /// The encoder (W3C `encoderImplementation`), `libvpx`; from the publisher.
    public var encoderImplementation: String?
    /// What limits the resolution or frame rate now: `none`, `bandwidth`, `cpu` or `other` (W3C
    /// `qualityLimitationReason`); from the publisher.
    public var qualityLimitationReason: String?
    /// Time spent in each limitation, keyed by reason (W3C `qualityLimitationDurations`, seconds in JSON); from the
    /// publisher.
    public var qualityLimitationDurations: [String: Duration]?
    /// Resolution changes made for CPU or bandwidth (W3C `qualityLimitationResolutionChanges`); from the publisher.
    public var qualityLimitationResolutionChanges: Int?

    /// Stats for the stream `ssrc` with nothing sent.
    public init(ssrc: UInt32, rtxSsrc: UInt32? = nil) {
        id = "OT01V\(ssrc)"
        self.ssrc = ssrc
        self.rtxSsrc = rtxSsrc
    }

    private enum CodingKeys: String, CodingKey {
        case type, id, ssrc, kind, transportId, rtxSsrc, rid, encodingIndex, packetsSent, bytesSent, headerBytesSent
        case retransmittedPacketsSent, retransmittedBytesSent, framesSent, keyFramesEncoded, nackCount, pliCount
        case firCount, targetBitrate, framesEncoded, frameWidth, frameHeight, totalEncodeTime, encoderImplementation
        case qualityLimitationReason, qualityLimitationDurations, qualityLimitationResolutionChanges
    }

    /// Decodes the stats, their times in seconds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(RTCStatsType.self, forKey: .type)
        id = try c.decode(String.self, forKey: .id)
        ssrc = try c.decode(UInt32.self, forKey: .ssrc)
        kind = try c.decode(String.self, forKey: .kind)
        transportId = try c.decode(String.self, forKey: .transportId)
        rtxSsrc = try c.decodeIfPresent(UInt32.self, forKey: .rtxSsrc)
        rid = try c.decodeIfPresent(String.self, forKey: .rid)
        encodingIndex = try c.decodeIfPresent(Int.self, forKey: .encodingIndex)
        packetsSent = try c.decode(Int.self, forKey: .packetsSent)
        bytesSent = try c.decode(Int.self, forKey: .bytesSent)
        headerBytesSent = try c.decode(Int.self, forKey: .headerBytesSent)
        retransmittedPacketsSent = try c.decode(Int.self, forKey: .retransmittedPacketsSent)
        retransmittedBytesSent = try c.decode(Int.self, forKey: .retransmittedBytesSent)
        framesSent = try c.decode(Int.self, forKey: .framesSent)
        keyFramesEncoded = try c.decode(Int.self, forKey: .keyFramesEncoded)
        nackCount = try c.decode(Int.self, forKey: .nackCount)
        pliCount = try c.decode(Int.self, forKey: .pliCount)
        firCount = try c.decode(Int.self, forKey: .firCount)
        targetBitrate = try c.decodeIfPresent(Double.self, forKey: .targetBitrate)
        framesEncoded = try c.decodeIfPresent(Int.self, forKey: .framesEncoded)
        frameWidth = try c.decodeIfPresent(Int.self, forKey: .frameWidth)
        frameHeight = try c.decodeIfPresent(Int.self, forKey: .frameHeight)
        totalEncodeTime = try c.decodeSeconds(forKey: .totalEncodeTime)
        encoderImplementation = try c.decodeIfPresent(String.self, forKey: .encoderImplementation)
        qualityLimitationReason = try c.decodeIfPresent(String.self, forKey: .qualityLimitationReason)
        if let seconds = try c.decodeIfPresent([String: Double].self, forKey: .qualityLimitationDurations) {
            var durations: [String: Duration] = [:]
            for (reason, value) in seconds {
                guard value.isFinite, abs(value) < 1e12 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .qualityLimitationDurations, in: c,
                        debugDescription: "\(value) is not a duration in seconds")
                }
                durations[reason] = .nanoseconds(Int64((value * 1e9).rounded()))
            }
            qualityLimitationDurations = durations
        }
        qualityLimitationResolutionChanges = try c.decodeIfPresent(
            Int.self, forKey: .qualityLimitationResolutionChanges)
    }

    /// Encodes the stats, their times in seconds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(id, forKey: .id)
        try c.encode(ssrc, forKey: .ssrc)
        try c.encode(kind, forKey: .kind)
        try c.encode(transportId, forKey: .transportId)
        try c.encodeIfPresent(rtxSsrc, forKey: .rtxSsrc)
        try c.encodeIfPresent(rid, forKey: .rid)
        try c.encodeIfPresent(encodingIndex, forKey: .encodingIndex)
        try c.encode(packetsSent, forKey: .packetsSent)
        try c.encode(bytesSent, forKey: .bytesSent)
        try c.encode(headerBytesSent, forKey: .headerBytesSent)
        try c.encode(retransmittedPacketsSent, forKey: .retransmittedPacketsSent)
        try c.encode(retransmittedBytesSent, forKey: .retransmittedBytesSent)
        try c.encode(framesSent, forKey: .framesSent)
        try c.encode(keyFramesEncoded, forKey: .keyFramesEncoded)
        try c.encode(nackCount, forKey: .nackCount)
        try c.encode(pliCount, forKey: .pliCount)
        try c.encode(firCount, forKey: .firCount)
        try c.encodeIfPresent(targetBitrate, forKey: .targetBitrate)
        try c.encodeIfPresent(framesEncoded, forKey: .framesEncoded)
        try c.encodeIfPresent(frameWidth, forKey: .frameWidth)
        try c.encodeIfPresent(frameHeight, forKey: .frameHeight)
        try c.encodeSeconds(totalEncodeTime, forKey: .totalEncodeTime)
        try c.encodeIfPresent(encoderImplementation, forKey: .encoderImplementation)
        try c.encodeIfPresent(qualityLimitationReason, forKey: .qualityLimitationReason)
        try c.encodeIfPresent(
            qualityLimitationDurations?.mapValues { $0.inSeconds }, forKey: .qualityLimitationDurations)
        try c.encodeIfPresent(qualityLimitationResolutionChanges, forKey: .qualityLimitationResolutionChanges)
    }
}
