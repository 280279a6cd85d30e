/// One packet the sender put on the transport, as a ``TransportSendHistory`` remembers it.
///
/// ## Threading
/// A value.
public struct TransportSentPacket: Sendable, Hashable, Codable {
    /// The transport-wide sequence number, unwrapped to 64 bits (the history's own count; its low 16 bits are the
    /// number on the wire).
    public var sequenceNumber: Int64
    /// When it was sent, in the sender's monotonic nanoseconds.
    public var sendTimeNs: UInt64
    /// Its size in bytes, as the caller counts it (libwebrtc counts the RTP packet with headers and padding).
    public var size: Int
    /// The SSRC it was sent on.
    public var ssrc: UInt32
    /// Whether it was a retransmission (RTX).
    public var isRetransmission: Bool
    /// The probe cluster it belonged to, if it was sent to probe the link.
    public var probeClusterID: Int32?

    /// Creates a record.
    public init(
        sequenceNumber: Int64, sendTimeNs: UInt64, size: Int, ssrc: UInt32, isRetransmission: Bool = false,
        probeClusterID: Int32? = nil
    ) {
        self.sequenceNumber = sequenceNumber
        self.sendTimeNs = sendTimeNs
        self.size = size
        self.ssrc = ssrc
        self.isRetransmission = isRetransmission
        self.probeClusterID = probeClusterID
    }

    /// The 16-bit number in the packet's header extension.
    public var wireSequenceNumber: UInt16 { UInt16(truncatingIfNeeded: sequenceNumber) }
}

/// What one feedback message said about one packet the sender remembers.
///
/// ## Threading
/// A value.
public struct TransportPacketResult: Sendable, Hashable, Codable {
    /// The packet.
    public var sent: TransportSentPacket
    /// When it arrived, in the sender's clock (nanoseconds; see ``TransportSendHistory``), or `nil` when reported
    /// lost. Only differences between arrivals mean anything: the receiver's clock is mapped onto the sender's at
    /// the first feedback, so an arrival can even precede its send time.
    public var arrivalTimeNs: Int64?

    /// Creates a result.
    public init(sent: TransportSentPacket, arrivalTimeNs: Int64?) {
        self.sent = sent
        self.arrivalTimeNs = arrivalTimeNs
    }

    /// Whether the packet was received.
    public var isReceived: Bool { arrivalTimeNs != nil }
}

/// What one feedback message told the sender: the packets it newly reports, in sequence order, and the bytes acked.
///
/// ## Threading
/// A value.
public struct TransportFeedbackReport: Sendable, Hashable, Codable {
    /// When the feedback arrived (the sender's monotonic nanoseconds).
    public var receivedAtNs: UInt64
    /// The message's feedback count.
    public var feedbackPacketCount: UInt8
    /// Packets newly reported received, or reported lost for the first time, in sequence order.
    public var packets: [TransportPacketResult]
    /// Bytes of the packets newly reported received.
    public var newlyAckedBytes: Int
    /// Statuses about packets never sent, or sent so long ago that the history has forgotten them: ignored.
    public var unknownStatuses: Int
    /// Statuses about packets already reported received, or reported lost again: ignored.
    public var repeatedStatuses: Int
    /// Bytes sent and not yet reported on (received or lost), after this message.
    public var bytesInFlight: Int

    /// Creates a report.
    public init(
        receivedAtNs: UInt64, feedbackPacketCount: UInt8, packets: [TransportPacketResult], newlyAckedBytes: Int,
        unknownStatuses: Int, repeatedStatuses: Int, bytesInFlight: Int
    ) {
        self.receivedAtNs = receivedAtNs
        self.feedbackPacketCount = feedbackPacketCount
        self.packets = packets
        self.newlyAckedBytes = newlyAckedBytes
        self.unknownStatuses = unknownStatuses
        self.repeatedStatuses = repeatedStatuses
        self.bytesInFlight = bytesInFlight
    }

    /// The packets reported lost for the first time.
    public var lostPackets: Int { packets.count(where: { !$0.isReceived }) }
}
