/// A padding-only RTP packet (RFC 3550 §5.1, the P bit): what a pacer sends to probe the path when there is no media
/// to send at the probe's rate, on the RTX stream as libwebrtc does (a receiver drops it after counting it: it has no
/// payload to repair or decode).
///
/// The packet is a 12-byte header with the padding bit set, an RFC 8285 one-byte extension block when it has
/// elements, then `paddingLength` bytes whose last says how many they are. Its payload is empty.
///
/// ## Header extensions
/// In this order, each when given:
/// 1. `sdes:mid` (RFC 8843) and 2. `sdes:repaired-rtp-stream-id` (RFC 8852 §3.2): what lets a receiver that was
///    not told the RTX SSRC (a simulcast offer declares none) map it to its m-line and layer. Janus drops a packet
///    from an SSRC it cannot map before counting it for transport-wide feedback, so probes without them on a
///    simulcast layer's RTX stream would all be reported lost. libwebrtc puts both on its RTX padding too.
/// 3. the transport-wide sequence number (a probe is worth nothing unless the feedback reports it), written 0.
public enum RTPPaddingPacket {
    /// The most padding one packet carries: the padding length is one byte, and libwebrtc keeps 224 of its 255.
    public static let maximumPaddingLength = 224

    /// The header's size: the fixed header, and a one-byte extension block with the elements given (see the type's
    /// notes; a mid or rid that `write` would leave out is not counted).
    public static func headerLength(
        transportWideID: UInt8?, midID: UInt8? = nil, mid: String = "", repairedRidID: UInt8? = nil, rid: String = ""
    ) -> Int {
        let elements = elementsLength(
            transportWideID: transportWideID, midID: midID, mid: mid, repairedRidID: repairedRidID, rid: rid)
        return RTPHeader.fixedSize + (elements == 0 ? 0 : 4 + (elements + 3) / 4 * 4)
    }

    /// Writes a padding packet of `paddingLength` padding bytes (1…``maximumPaddingLength``, clamped) into `buffer`;
    /// returns its length, or 0 when `buffer` is too small. The transport-wide element's two data bytes are written
    /// 0 (the sender stamps its number when the packet leaves). Allocates nothing.
    ///
    /// - Parameters:
    ///   - midID: The one-byte id (1...14) of the mid element, written with `mid` (1…16 bytes), or `nil`.
    ///   - repairedRidID: The one-byte id (1...14) of the repaired-rid element, written with `rid` (an RFC 8851
    ///     rid-id, ``RTPStreamIDExtension/isValid(_:)``), or `nil`.
    public static func write(
        into buffer: UnsafeMutableRawBufferPointer, payloadType: UInt8, ssrc: UInt32, sequenceNumber: UInt16,
        timestamp: UInt32, transportWideID: UInt8?, paddingLength: Int, midID: UInt8? = nil, mid: String = "",
        repairedRidID: UInt8? = nil, rid: String = ""
    ) -> Int {
        let padding = min(max(paddingLength, 1), maximumPaddingLength)
        let header = headerLength(
            transportWideID: transportWideID, midID: midID, mid: mid, repairedRidID: repairedRidID, rid: rid)
        guard buffer.count >= header + padding else { return 0 }
        // Version 2, padding, extension when there are elements, no CSRC.
        buffer[0] = 0x80 | 0x20 | (header > RTPHeader.fixedSize ? 0x10 : 0)
        buffer[1] = payloadType & 0x7F
        buffer.rtpStore(sequenceNumber, at: 2)
        buffer.rtpStore(timestamp, at: 4)
        buffer.rtpStore(ssrc, at: 8)
        if header > RTPHeader.fixedSize {
            // RFC 8285 one-byte block: 0xBEDE, its length in words, the elements, zero padding.
            buffer.rtpStore(RTPHeaderExtensionForm.oneByteProfile, at: 12)
            buffer.rtpStore(UInt16((header - RTPHeader.fixedSize - 4) / 4), at: 14)
            var offset = 16
            if let midID = validID(midID), isValidMid(mid) {
                offset += writeElement(id: midID, value: mid, into: buffer, at: offset)
            }
            if let repairedRidID = validID(repairedRidID), RTPStreamIDExtension.isValid(rid) {
                offset += writeElement(id: repairedRidID, value: rid, into: buffer, at: offset)
            }
            if let transportWideID {
                offset += TransportSequenceNumberExtension.writeOneByteElement(
                    id: transportWideID, sequenceNumber: 0, into: buffer, at: offset)
            }
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<header]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[header..<(header + padding - 1)]).initializeMemory(
            as: UInt8.self, repeating: 0)
        buffer[header + padding - 1] = UInt8(padding)
        return header + padding
    }

    /// The bytes of the elements the packet carries.
    private static func elementsLength(
        transportWideID: UInt8?, midID: UInt8?, mid: String, repairedRidID: UInt8?, rid: String
    ) -> Int {
        var length = transportWideID == nil ? 0 : TransportSequenceNumberExtension.oneByteElementSize
        if validID(midID) != nil, isValidMid(mid) { length += 1 + mid.utf8.count }
        if validID(repairedRidID) != nil, RTPStreamIDExtension.isValid(rid) { length += 1 + rid.utf8.count }
        return length
    }

    /// `id` when it is a one-byte-form id.
    private static func validID(_ id: UInt8?) -> UInt8? {
        guard let id, (1...14).contains(id) else { return nil }
        return id
    }

    /// Whether `mid` fits one one-byte element.
    private static func isValidMid(_ mid: String) -> Bool { (1...16).contains(mid.utf8.count) }

    /// Writes a one-byte element carrying `value`'s UTF-8 bytes (1…16, checked by the caller); returns its size.
    private static func writeElement(
        id: UInt8, value: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) -> Int {
        var index = offset + 1
        for byte in value.utf8 {
            buffer[index] = byte
            index += 1
        }
        buffer[offset] = id << 4 | UInt8(index - offset - 2)
        return index - offset
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
