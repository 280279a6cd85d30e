/// A padding-only RTP packet (RFC 3550 §5.1, the P bit): what a pacer sends to probe the path when there is no media
/// to send at the probe's rate, on the RTX stream as libwebrtc does (a receiver drops it after counting it: it has no
/// payload to repair or decode).
///
/// The packet is a 12-byte header with the padding bit set, the transport-wide sequence number element (when given
/// an id: a probe is worth nothing unless the feedback reports it), then `paddingLength` bytes whose last says how
/// many they are. Its payload is empty.
public enum RTPPaddingPacket {
    /// The most padding one packet carries: the padding length is one byte, and libwebrtc keeps 224 of its 255.
    public static let maximumPaddingLength = 224

    /// The header's size: the fixed header, and a one-byte extension block with the transport-wide element when
    /// `transportWideID` is given.
    public static func headerLength(transportWideID: UInt8?) -> Int {
        RTPHeader.fixedSize + (transportWideID == nil ? 0 : 8)
    }

    /// Writes a padding packet of `paddingLength` padding bytes (1…``maximumPaddingLength``, clamped) into `buffer`;
    /// returns its length, or 0 when `buffer` is too small. The transport-wide element's two data bytes are written
    /// 0 (the sender stamps its number when the packet leaves). Allocates nothing.
    public static func write(
        into buffer: UnsafeMutableRawBufferPointer, payloadType: UInt8, ssrc: UInt32, sequenceNumber: UInt16,
        timestamp: UInt32, transportWideID: UInt8?, paddingLength: Int
    ) -> Int {
        let padding = min(max(paddingLength, 1), maximumPaddingLength)
        let header = headerLength(transportWideID: transportWideID)
        guard buffer.count >= header + padding else { return 0 }
        // Version 2, padding, extension when numbered, no CSRC.
        buffer[0] = 0x80 | 0x20 | (transportWideID == nil ? 0 : 0x10)
        buffer[1] = payloadType & 0x7F
        buffer.rtpStore(sequenceNumber, at: 2)
        buffer.rtpStore(timestamp, at: 4)
        buffer.rtpStore(ssrc, at: 8)
        if let transportWideID {
            // RFC 8285 one-byte block: 0xBEDE, one word; the element (id, length − 1 = 1, two data bytes), a pad.
            buffer[12] = 0xBE
            buffer[13] = 0xDE
            buffer.rtpStore(UInt16(1), at: 14)
            buffer[16] = (transportWideID & 0x0F) << 4 | 0x01
            buffer[17] = 0
            buffer[18] = 0
            buffer[19] = 0
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[header..<(header + padding - 1)]).initializeMemory(
            as: UInt8.self, repeating: 0)
        buffer[header + padding - 1] = UInt8(padding)
        return header + padding
    }
}

extension RTPHeader {
    /// The length of the header of the RTP packet in `packet` (fixed part, CSRCs, extension block), or `nil` when it
    /// is shorter than that. Reads only the bytes it needs; never traps.
    public static func length(of packet: UnsafeRawBufferPointer) -> Int? {
        guard packet.count >= fixedSize else { return nil }
        var length = fixedSize + Int(packet[0] & 0x0F) * 4
        if packet[0] & 0x10 != 0 {
            guard packet.count >= length + 4 else { return nil }
            length += 4 + (Int(packet[length + 2]) << 8 | Int(packet[length + 3])) * 4
        }
        return length <= packet.count ? length : nil
    }
}
