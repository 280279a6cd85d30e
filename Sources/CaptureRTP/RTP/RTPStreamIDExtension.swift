/// The RTP stream identifier header extensions (RFC 8852): `rtp-stream-id`, the `a=rid` of the stream a media packet
/// belongs to, and `repaired-rtp-stream-id`, the `a=rid` of the stream a redundancy packet (an RFC 4588 RTX
/// retransmission) repairs.
///
/// A simulcast sender (RFC 8853) sends several RTP streams of one m-line without declaring their SSRCs; the receiver
/// learns each SSRC from these elements on its first packets (Janus on every packet with an SSRC it does not know).
///
/// ## Wire form
/// The element's data is the rid's bytes, with no terminator (RFC 8852 §3.1, §3.2); in the RFC 8285 one-byte form at
/// most 16 bytes. A media packet carries `rtp-stream-id` only; an RTX packet carries `repaired-rtp-stream-id` only,
/// with the rid of the stream it repairs (§3.2: the repaired stream's own id would make the receiver take the RTX
/// SSRC for the media one).
///
/// ## Which rids
/// ``isValid(_:)``: RFC 8851 §10's `rid-id` (`1*(alpha-numeric / "-" / "_")`), at most ``maximumLength`` bytes.
/// libwebrtc accepts letters and digits only, and Janus 1.1.2 keeps only the first 15 bytes of an `a=rid`: short
/// alphanumeric rids (`h`, `m`, `l`) suit every peer.
public enum RTPStreamIDExtension {
    /// The URI of the RtpStreamId extension, as negotiated in SDP `a=extmap` (RFC 8852 §4.1).
    public static let uri = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    /// The URI of the RepairedRtpStreamId extension (RFC 8852 §4.2).
    public static let repairedURI = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    /// The longest rid sent, in bytes: what one RFC 8285 one-byte element holds.
    public static let maximumLength = 16

    /// Whether `rid` is an RFC 8851 `rid-id` (ASCII letters, digits, `-` and `_`) of 1…``maximumLength`` bytes.
    public static func isValid(_ rid: String) -> Bool {
        let bytes = rid.utf8
        return (1...maximumLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }
}
