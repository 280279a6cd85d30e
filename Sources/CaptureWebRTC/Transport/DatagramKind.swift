/// What a datagram on a WebRTC 5-tuple carries, told by its first byte as RFC 7983 §7 (updated by RFC 9443) has it:
/// STUN 0–3, DTLS 20–63, RTP and RTCP 128–191 (the two told apart by the RTCP packet type in the second byte,
/// RFC 5761 §4). Anything else (ZRTP 16–19, TURN channels 64–79, the rest) is not ours.
package enum DatagramKind: String, Sendable, Hashable, Codable {
    /// A STUN message (ICE connectivity check, its response, or consent freshness).
    case stun
    /// A DTLS record.
    case dtls
    /// An RTP packet (SRTP on a WebRTC transport).
    case rtp
    /// An RTCP packet (SRTCP on a WebRTC transport).
    case rtcp
    /// Something else: counted and dropped.
    case unknown

    /// Classifies `datagram` by its first byte (and, for RTP/RTCP, the second).
    package init(classifying datagram: UnsafeRawBufferPointer) {
        guard let first = datagram.first else {
            self = .unknown
            return
        }
        switch first {
        case 0...3: self = .stun
        case 20...63: self = .dtls
        case 128...191:
            // RTCP packet types SR 200 … XR 207 (and FIR 192, NACK 193, reserved 194–199) sit where RTP would carry
            // a marker bit plus payload type 64–95, which rtcp-mux forbids for RTP (RFC 5761 §4).
            guard datagram.count >= 2 else {
                self = .unknown
                return
            }
            self = (192...223).contains(datagram[1]) ? .rtcp : .rtp
        default: self = .unknown
        }
    }
}
