/// One RTCP packet of a compound packet.
///
/// Feedback messages (RFC 4585 RTPFB/PSFB) have their own cases, transport-wide congestion control feedback among
/// them; packet types and feedback formats this package does not model (APP, XR, other FMTs) come back as
/// ``unknown(packetType:count:payload:)`` with their bytes, and serialize back unchanged.
public enum RTCPPacket: Sendable, Hashable, Codable {
    /// A sender report (PT 200).
    case senderReport(RTCPSenderReport)
    /// A receiver report (PT 201).
    case receiverReport(RTCPReceiverReport)
    /// Source descriptions (PT 202), e.g. CNAMEs.
    case sourceDescription([RTCPSourceDescriptionChunk])
    /// A BYE (PT 203).
    case goodbye(RTCPBye)
    /// Generic NACK (PT 205, FMT 1, RFC 4585 §6.2.1).
    case genericNACK(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [RTCPNACKEntry])
    /// Temporary Maximum Media Stream Bit Rate Request (PT 205, FMT 3, RFC 5104 §4.2.1).
    case temporaryMaximumBitrateRequest(senderSSRC: UInt32, entries: [RTCPTMMBEntry])
    /// Temporary Maximum Media Stream Bit Rate Notification (PT 205, FMT 4, RFC 5104 §4.2.2).
    case temporaryMaximumBitrateNotification(senderSSRC: UInt32, entries: [RTCPTMMBEntry])
    /// Transport-wide congestion control feedback (PT 205, FMT 15,
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1).
    case transportFeedback(RTCPTransportFeedback)
    /// Picture Loss Indication (PT 206, FMT 1, RFC 4585 §6.3.1).
    case pictureLossIndication(senderSSRC: UInt32, mediaSSRC: UInt32)
    /// Full Intra Request (PT 206, FMT 4, RFC 5104 §4.3.1).
    case fullIntraRequest(senderSSRC: UInt32, entries: [RTCPFIREntry])
    /// Receiver Estimated Maximum Bitrate (PT 206, FMT 15, "REMB").
    case receiverEstimatedMaximumBitrate(RTCPREMB)
    /// Any other packet: its type, its 5-bit count/FMT field and the bytes after the 4-byte header (padding removed).
    case unknown(packetType: UInt8, count: UInt8, payload: [UInt8])
}

/// RTCP packet type numbers (RFC 3550, RFC 4585).
enum RTCPPacketType {
    static let senderReport: UInt8 = 200
    static let receiverReport: UInt8 = 201
    static let sourceDescription: UInt8 = 202
    static let goodbye: UInt8 = 203
    static let transportFeedback: UInt8 = 205
    static let payloadFeedback: UInt8 = 206
}

/// Feedback message types (FMT) used by this package.
enum RTCPFeedbackFormat {
    static let genericNACK: UInt8 = 1
    static let tmmbr: UInt8 = 3
    static let tmmbn: UInt8 = 4
    static let transportWideCC: UInt8 = 15
    static let pli: UInt8 = 1
    static let fir: UInt8 = 4
    static let applicationLayer: UInt8 = 15
}

/// The "REMB" unique identifier of an application-layer feedback message.
let rembIdentifier: UInt32 = 0x5245_4D42
