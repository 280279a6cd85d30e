/// RTP retransmission payload format (RFC 4588 §4): a lost packet sent again on its own stream.
///
/// The RTX packet keeps the original header (CSRCs and extensions included, so that BUNDLE receivers route it by its
/// mid extension too) with the RTX payload type, SSRC and sequence number, and its payload is the original sequence
/// number followed by the original payload.
///
/// ## Stream identifiers (RFC 8852)
/// A simulcast layer's packets carry `rtp-stream-id` (its `a=rid`). An RTX packet must not: a receiver learning SSRCs
/// from it (Janus) would take the RTX SSRC for the layer's media SSRC. It carries `repaired-rtp-stream-id` with the
/// same rid instead (§3.2). Given the rid element's id,
/// ``write(wrapping:into:payloadType:ssrc:sequenceNumber:ridExtensionID:repairedRidExtensionID:appending:)`` rewrites the
/// copied element in place (same length, so nothing moves):
/// - with a repaired-rid id, only the element's ID changes;
/// - without one, the whole element (ID byte and data) becomes zero bytes, which RFC 8285 §4 allows between elements
///   as padding: the RTX packet then names no stream at all. (Neither ID 0, which is one padding byte, nor ID 15,
///   which stops the parsing of the elements after it, can relabel a whole element.) Negotiate the repaired-rid
///   extension whenever rids are sent with RTX: without it a receiver that has no `a=ssrc-group:FID` cannot map the
///   RTX stream.
public enum RTXPacket {
    /// The bytes an RTX packet adds to its original: the original sequence number.
    public static let overhead = 2

    /// The most bytes ``write(wrapping:into:payloadType:ssrc:sequenceNumber:ridExtensionID:repairedRidExtensionID:appending:)``
    /// adds to its original beyond ``overhead`` when it appends elements of `elements` bytes: a new extension block's
    /// 4-byte header and up to 3 bytes of padding.
    public static func maximumGrowth(appending elements: Int) -> Int { elements + 4 + 3 }

    /// Writes the RTX packet for `original` (a well-formed, unprotected RTP packet) into `buffer`, which must hold
    /// `original.count + overhead` bytes (``maximumGrowth(appending:)`` more with `elements`); returns its length, or 0
    /// when `original` is not an RTP packet or `buffer` is too small. Allocates nothing.
    ///
    /// - Parameters:
    ///   - ridExtensionID: The id of the `rtp-stream-id` element the original may carry (``RTPStreamIDExtension``),
    ///     or `nil` when the stream sends none: the copy's element is relabelled or blanked (see the type's notes).
    ///   - repairedRidExtensionID: The id of `repaired-rtp-stream-id`, or `nil` when it was not negotiated (1...14
    ///     for a one-byte block, 1...255 for a two-byte one; another value counts as `nil`).
    ///   - elements: RFC 8285 one-byte-form elements (ID and length byte, then the data) appended to the copy's
    ///     extension block, which is made if the original has none and re-padded to 32 bits: the mid and
    ///     repaired rid of an original sent after its stream stopped carrying them
    ///     (``VP8Packetizer/stopSendingStreamIdentifiers()``), while the receiver may not know the RTX SSRC yet.
    ///     Left out when the original's block is in the two-byte form.
    public static func write(
        wrapping original: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, payloadType: UInt8,
        ssrc: UInt32, sequenceNumber: UInt16, ridExtensionID: UInt8? = nil, repairedRidExtensionID: UInt8? = nil,
        appending elements: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) -> Int {
        guard original.count >= RTPHeader.fixedSize, let headerLength = RTPHeader.length(of: original) else {
            return 0
        }
        // Where the extension block starts (after the CSRCs), and whether elements can be appended to it.
        let blockStart = RTPHeader.fixedSize + Int(original[0] & 0x0F) * 4
        let hasBlock = original[0] & 0x10 != 0
        let oneByteForm = !hasBlock || (original[blockStart] == 0xBE && original[blockStart + 1] == 0xDE)
        let appended = oneByteForm ? elements.count : 0
        let blockData = hasBlock ? headerLength - blockStart - 4 : 0
        let copyHeaderLength = appended == 0 ? headerLength : blockStart + 4 + (blockData + appended + 3) / 4 * 4
        let payload = original.count - headerLength
        guard buffer.count >= copyHeaderLength + overhead + payload else { return 0 }
        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<headerLength])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: original[0..<headerLength]))
        if appended > 0 {
            buffer[0] |= 0x10
            buffer[blockStart] = 0xBE
            buffer[blockStart + 1] = 0xDE
            buffer.rtpStore(UInt16((copyHeaderLength - blockStart - 4) / 4), at: blockStart + 2)
            let at = blockStart + 4 + blockData
            UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + appended]).copyMemory(from: elements)
            UnsafeMutableRawBufferPointer(rebasing: buffer[(at + appended)..<copyHeaderLength])
                .initializeMemory(as: UInt8.self, repeating: 0)
        }
        buffer[1] = (original[1] & 0x80) | (payloadType & 0x7F)
        buffer.rtpStore(sequenceNumber, at: 2)
        buffer.rtpStore(ssrc, at: 8)
        buffer[copyHeaderLength] = original[2]
        buffer[copyHeaderLength + 1] = original[3]
        let payloadStart = copyHeaderLength + overhead
        UnsafeMutableRawBufferPointer(rebasing: buffer[payloadStart..<payloadStart + payload])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: original[headerLength...]))
        if let ridExtensionID {
            relabelStreamID(
                in: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<copyHeaderLength]),
                ridExtensionID: ridExtensionID, repairedRidExtensionID: repairedRidExtensionID)
        }
        return payloadStart + payload
    }

    /// Turns the `rtp-stream-id` element of the RTP header in `header` into `repaired-rtp-stream-id`, or into padding
    /// when `repairedRidExtensionID` is `nil` or does not fit the block's form; nothing when there is no such element.
    private static func relabelStreamID(
        in header: UnsafeMutableRawBufferPointer, ridExtensionID: UInt8, repairedRidExtensionID: UInt8?
    ) {
        guard let location = RTPHeaderExtensionElement.locate(id: ridExtensionID, in: UnsafeRawBufferPointer(header))
        else { return }
        switch (location.form, repairedRidExtensionID) {
        case (.oneByte, let id?) where (1...14).contains(id):
            header[location.idOffset] = id << 4 | (header[location.idOffset] & 0x0F)
        case (.twoByte, let id?) where id != 0:
            header[location.idOffset] = id
        default:
            UnsafeMutableRawBufferPointer(rebasing: header[location.elementRange]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
    }
}
