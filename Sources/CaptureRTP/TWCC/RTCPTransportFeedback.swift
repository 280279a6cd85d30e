/// A transport-wide congestion control feedback message (RTCP RTPFB, PT 205, FMT 15): for a run of consecutive
/// transport-wide sequence numbers, whether each packet arrived and, if it did, when.
///
/// ## What it says
/// The run starts at ``baseSequenceNumber`` and has one ``PacketStatus`` per packet (``packetStatusCount`` of them).
/// Arrival times are in 250 µs ticks: the first received packet's delta counts from the ``referenceTime`` (64 ms
/// units, in a time base only the receiver knows), each later one from the previous received packet. A delta of 0–255
/// ticks is sent in one byte ("small"), anything else, negative included, in two ("large"). ``feedbackPacketCount``
/// counts the feedback messages the receiver has sent (8 bits, wrapping), so the sender can tell a lost one.
///
/// ## Wire form
/// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1: the 12-byte feedback header (sender and media SSRC),
/// base sequence number, status count, 24-bit reference time, feedback count, then 16-bit status chunks (run length,
/// 1-bit vector of 14, 2-bit vector of 7), then the receive deltas, then padding to 32 bits. Parsing is part of
/// ``RTCPCompoundPacket/parse(_:)`` and is strict: a status count of 0, a chunk or delta past the end, a reserved
/// status (`11`) for a counted packet, or more than 3 bytes after the deltas is an ``RTCPParseError``. Parsing never
/// reserves storage from the count field: the statuses array grows only as chunks really describe packets (at most
/// 65 535). The padding is read both ways it is sent: zero bytes without the P bit (Janus, older libwebrtc) or with
/// it (libwebrtc today; ``RTCPCompoundPacket/parse(_:)`` removes it).
///
/// Serializing (``RTCPPacket/serialize(into:)``) chooses chunks as libwebrtc's `TransportFeedback` does: a run-length
/// chunk while every status is the same, a 1-bit vector of 14 when mixed without a large delta, a 2-bit vector of 7
/// when a large delta mixes in; the body is zero-padded to 32 bits without the P bit (as Janus does, so the packet
/// can sit anywhere in a compound). More than 65 535 statuses, or more than an RTCP packet's 256 KiB, are cut.
///
/// ## Threading
/// A value.
public struct RTCPTransportFeedback: Sendable, Hashable, Codable {
    /// One receive-delta tick in nanoseconds (250 µs).
    public static let deltaTickNs: Int64 = 250_000
    /// One reference-time unit in nanoseconds (64 ms).
    public static let referenceTimeTickNs: Int64 = 64_000_000
    /// The most statuses one message can carry (the 16-bit count).
    public static let maximumPacketStatusCount = 0xFFFF

    /// One packet's fate in a feedback message: its status symbol and, when received, its receive delta.
    public enum PacketStatus: Sendable, Hashable, Codable {
        /// Not received (yet): symbol `00`.
        case notReceived
        /// Received, delta 0...255 ticks (0–63.75 ms) in one byte: symbol `01`.
        case receivedSmallDelta(UInt8)
        /// Received, delta in two bytes, signed (−8192 to +8191.75 ms): symbol `10`.
        case receivedLargeDelta(Int16)

        /// A received status with `delta` ticks, small when it fits one byte (libwebrtc's and the draft's choice).
        public static func received(delta: Int16) -> PacketStatus {
            (0...255).contains(delta) ? .receivedSmallDelta(UInt8(delta)) : .receivedLargeDelta(delta)
        }

        /// Whether the packet was received.
        public var isReceived: Bool {
            if case .notReceived = self { return false }
            return true
        }

        /// The receive delta in ticks, or `nil` when not received.
        public var delta: Int16? {
            switch self {
            case .notReceived: nil
            case .receivedSmallDelta(let delta): Int16(delta)
            case .receivedLargeDelta(let delta): delta
            }
        }

        /// The 2-bit status symbol (0 not received, 1 small delta, 2 large delta).
        var symbol: UInt8 {
            switch self {
            case .notReceived: 0
            case .receivedSmallDelta: 1
            case .receivedLargeDelta: 2
            }
        }
    }

    /// The SSRC of the feedback's sender.
    public var senderSSRC: UInt32
    /// The SSRC of a media source the feedback is about (informative: the feedback covers the whole transport).
    public var mediaSSRC: UInt32
    /// The transport-wide sequence number of the first status.
    public var baseSequenceNumber: UInt16
    /// The reference time in 64 ms units, a 24-bit signed value (−2²³ ..< 2²³; serialized as its low 24 bits).
    public var referenceTime: Int32
    /// The feedback message's number (8 bits, wrapping).
    public var feedbackPacketCount: UInt8
    /// One status per packet from ``baseSequenceNumber`` on.
    public var packets: [PacketStatus]

    /// Creates a feedback message.
    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: Int32,
        feedbackPacketCount: UInt8, packets: [PacketStatus]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.packets = packets
    }

    /// The packet status count: how many packets the message covers.
    public var packetStatusCount: Int { packets.count }

    /// The reference time in nanoseconds of the receiver's time base (``referenceTime`` × 64 ms).
    public var referenceTimeNs: Int64 { Int64(referenceTime) * Self.referenceTimeTickNs }

    /// For each status in order, the packet's arrival relative to the reference time in nanoseconds (the running sum
    /// of the deltas), or `nil` when it was not received.
    public var arrivalOffsetsNs: [Int64?] {
        var ticks: Int64 = 0
        return packets.map { status in
            guard let delta = status.delta else { return nil }
            ticks += Int64(delta)
            return ticks * Self.deltaTickNs
        }
    }

    /// The 24-bit signed value of the low 24 bits of `value`.
    static func signExtend24(_ value: UInt32) -> Int32 {
        Int32(bitPattern: value << 8) >> 8
    }
}
