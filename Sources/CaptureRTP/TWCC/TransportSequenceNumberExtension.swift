/// The transport-wide sequence number header extension (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2): a
/// 16-bit number that counts every packet the sender puts on the transport (media, retransmissions and probes of
/// every SSRC alike), so that the receiver's ``RTCPTransportFeedback`` can report on each of them.
///
/// ## Wire form
/// Two data bytes, big-endian, in an RFC 8285 element; in the one-byte form the element is three bytes: `ID | 1`
/// (length − 1), then the number. A data length other than 2 is not this extension (libwebrtc rejects it too; the
/// 4-byte "v2" form with feedback requests is not modelled).
///
/// ## Threading
/// Stateless functions.
public enum TransportSequenceNumberExtension {
    /// The extension's URI, as negotiated in SDP `a=extmap`.
    public static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// The number of data bytes.
    public static let dataSize = 2
    /// The size of the one-byte-form element: its ID/length byte and the data.
    public static let oneByteElementSize = 1 + dataSize

    /// The element carrying `sequenceNumber` under `id`.
    public static func element(id: UInt8, sequenceNumber: UInt16) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, data: data(for: sequenceNumber))
    }

    /// The two data bytes for `sequenceNumber`.
    public static func data(for sequenceNumber: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber)]
    }

    /// The sequence number an element's data carries, or `nil` when the data is not exactly two bytes.
    public static func sequenceNumber(from data: [UInt8]) -> UInt16? {
        guard data.count == dataSize else { return nil }
        return UInt16(data[0]) << 8 | UInt16(data[1])
    }

    /// The sequence number carried under `id` in `header`, or `nil` when the header has no such element or it is
    /// malformed.
    public static func sequenceNumber(in header: RTPHeader, id: UInt8) -> UInt16? {
        header.extensionElement(id: id).flatMap { sequenceNumber(from: $0.data) }
    }

    /// Writes the one-byte-form element (`id << 4 | 1`, then the number) at `offset` of `buffer`, for a sender that
    /// builds its header in place; returns the bytes written (3). Nothing is allocated.
    ///
    /// - Precondition: `id` is in 1...14 and `buffer` holds `offset + 3` bytes (the caller sized its header).
    @discardableResult
    public static func writeOneByteElement(
        id: UInt8, sequenceNumber: UInt16, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) -> Int {
        buffer[offset] = (id & 0x0F) << 4 | UInt8(dataSize - 1)
        buffer.rtpStore(sequenceNumber, at: offset + 1)
        return oneByteElementSize
    }

    /// The offset in `packet` (a whole RTP packet, not protected or SRTP-protected: header extensions are not
    /// encrypted) of the two data bytes of the element with `id`, or `nil` when the packet has no such element, its
    /// data is not two bytes, or the header is malformed. Reads the RFC 8285 one-byte and two-byte forms in place,
    /// allocating nothing: what a sender uses to give a copy of a packet (an RTX retransmission) a fresh number.
    public static func dataOffset(in packet: UnsafeRawBufferPointer, id: UInt8) -> Int? {
        guard let location = RTPHeaderExtensionElement.locate(id: id, in: packet), location.dataLength == dataSize
        else { return nil }
        return location.dataOffset
    }
}
