/// RTP retransmission payload format (RFC 4588 §4): a lost packet sent again on its own stream.
///
/// The RTX packet keeps the original header (CSRCs and extensions included, so that BUNDLE receivers route it by its
/// mid extension too) with the RTX payload type, SSRC and sequence number, and its payload is the original sequence
/// number followed by the original payload.
public enum RTXPacket {
    /// The bytes an RTX packet adds to its original: the original sequence number.
    public static let overhead = 2

    /// Writes the RTX packet for `original` (a well-formed, unprotected RTP packet) into `buffer`, which must hold
    /// `original.count + overhead` bytes; returns its length, or 0 when `original` is not an RTP packet or `buffer`
    /// is too small.
    public static func write(
        wrapping original: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, payloadType: UInt8,
        ssrc: UInt32, sequenceNumber: UInt16
    ) -> Int {
        guard original.count >= RTPHeader.fixedSize, buffer.count >= original.count + overhead,
            let headerLength = RTPHeader.length(of: original)
        else { return 0 }
        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<headerLength])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: original[0..<headerLength]))
        buffer[1] = (original[1] & 0x80) | (payloadType & 0x7F)
        buffer.rtpStore(sequenceNumber, at: 2)
        buffer.rtpStore(ssrc, at: 8)
        buffer[headerLength] = original[2]
        buffer[headerLength + 1] = original[3]
        let payload = original.count - headerLength
        UnsafeMutableRawBufferPointer(rebasing: buffer[headerLength + overhead..<headerLength + overhead + payload])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: original[headerLength...]))
        return headerLength + overhead + payload
    }
}
