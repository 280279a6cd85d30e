/// The sender's SRTP and SRTCP protection on OpenSSL's libcrypto, for any SSRC it sends (media and RTX): what
/// ``SRTPSession`` uses for the `.sender` role, in place of libsrtp2, whose Debian build (on NSS) allocates per
/// packet.
///
/// It reads the SSRC and sequence number from the packet, keeps one ``SRTPSenderStream`` per SSRC for the packet
/// and SRTCP indices (libsrtp's sender rules, so the bytes are libsrtp's for the same packets), and hands the packet
/// to the RTP or RTCP ``SRTPTransform`` (session keys derived once by ``SRTPKeyDerivation``). The first packet of an
/// SSRC allocates its stream; after that, nothing is allocated per packet. Not thread-safe: one thread at a time
/// (``SRTPSession`` calls it under its lock).
final class SRTPProtector {
    /// The fixed part of an RTP header (RFC 3550 §5.1).
    private static let rtpFixedHeaderLength = 12
    /// The RTCP bytes SRTCP leaves in the clear: the first packet's header word and its sender SSRC.
    private static let rtcpClearLength = 8

    /// The profile.
    let profile: SRTPProfile
    /// Whether an RTP packet index may be protected again (libsrtp's `allow_repeat_tx`, for retransmissions that
    /// repeat the original sequence number).
    let allowsRepeatedIndices: Bool
    /// The replay window of each SSRC (libsrtp's `window_size`).
    let windowSize: Int
    /// SRTP's transform (labels 0x00–0x02).
    private let rtp: SRTPTransform
    /// SRTCP's transform (labels 0x03–0x05).
    private let rtcp: SRTPTransform
    /// Each SSRC's indices, created on its first packet.
    private var streams: [UInt32: SRTPSenderStream] = [:]

    /// Derives the session keys from `keyingMaterial` and creates the OpenSSL contexts.
    ///
    /// - Parameters:
    ///   - keyingMaterial: the master key and salt; their lengths must match `profile`.
    ///   - profile: the crypto suite.
    ///   - replayProtection: when `false`, a sequence number may be protected again (retransmissions).
    ///   - windowSize: how far back (in packets, a multiple of 64) a sequence number may be protected late or again.
    init(
        keyingMaterial: SRTPKeyingMaterial, profile: SRTPProfile, replayProtection: Bool, windowSize: Int
    ) throws(SRTPError) {
        self.profile = profile
        allowsRepeatedIndices = !replayProtection
        self.windowSize = windowSize
        rtp = try SRTPTransform(
            profile: profile,
            keys: SRTPKeyDerivation.sessionKeys(from: keyingMaterial, profile: profile, direction: .rtp))
        rtcp = try SRTPTransform(
            profile: profile,
            keys: SRTPKeyDerivation.sessionKeys(from: keyingMaterial, profile: profile, direction: .rtcp))
    }

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place; `length` grows by the tag.
    ///
    /// Throws ``SRTPError/bufferTooSmall(needed:available:)`` when the packet is shorter than its header (fixed
    /// part, CSRCs, extension) or the buffer has no room for the tag, and ``SRTPError/replayed`` or
    /// ``SRTPError/replayTooOld`` as ``SRTPSenderStream/recordRTP(sequenceNumber:allowingRepeats:)`` says. A packet
    /// that throws leaves the stream's state as it was, except after an OpenSSL failure.
    func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        let headerLength = try Self.rtpHeaderLength(buffer, length: length)
        _ = try SRTPTransform.room(buffer, length: length, trailer: rtp.tagLength, header: headerLength)
        let ssrc = Self.bigEndianWord(buffer, at: 8)
        let sequenceNumber = UInt16(truncatingIfNeeded: Self.bigEndianWord(buffer, at: 0))
        let index = try stream(ssrc).recordRTP(sequenceNumber: sequenceNumber, allowingRepeats: allowsRepeatedIndices)
        length = try rtp.protectRTP(buffer, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
    }

    /// Protects the RTCP compound packet in `buffer[0..<length]` in place; `length` grows by the SRTCP trailer. The
    /// SRTCP index is that of the first packet's sender SSRC.
    ///
    /// Throws ``SRTPError/bufferTooSmall(needed:available:)`` when the packet is shorter than 8 bytes or the buffer
    /// has no room for the trailer, and ``SRTPError/keyExpired`` when the SSRC's SRTCP index is exhausted.
    func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: inout Int) throws(SRTPError) {
        _ = try SRTPTransform.room(
            buffer, length: length, trailer: rtcp.rtcpTrailerLength, header: Self.rtcpClearLength)
        let ssrc = Self.bigEndianWord(buffer, at: 4)
        let index = try stream(ssrc).nextRTCPIndex()
        length = try rtcp.protectRTCP(buffer, length: length, ssrc: ssrc, index: index)
    }

    /// The stream of `ssrc`, created (the one allocation) on its first packet.
    @inline(__always)
    private func stream(_ ssrc: UInt32) -> SRTPSenderStream {
        if let stream = streams[ssrc] { return stream }
        let stream = SRTPSenderStream(windowSize: windowSize)
        streams[ssrc] = stream
        return stream
    }

    /// The RTP header's length — fixed part, CSRCs and header extension (RFC 3550 §5.1, §5.3.1) — after checking
    /// that `length` bytes hold it (libsrtp's `srtp_validate_rtp_header`).
    private static func rtpHeaderLength(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= rtpFixedHeaderLength else {
            throw .bufferTooSmall(needed: rtpFixedHeaderLength, available: max(length, 0))
        }
        guard length <= buffer.count else { throw .bufferTooSmall(needed: length, available: buffer.count) }
        let first = buffer[0]
        var headerLength = rtpFixedHeaderLength + 4 * Int(first & 0x0F)
        if first & 0x10 != 0 {
            guard length >= headerLength + 4 else { throw .bufferTooSmall(needed: headerLength + 4, available: length) }
            let words = Int(UInt16(truncatingIfNeeded: bigEndianWord(buffer, at: headerLength)))
            headerLength += 4 + 4 * words
        }
        guard length >= headerLength else { throw .bufferTooSmall(needed: headerLength, available: length) }
        return headerLength
    }

    /// The 32-bit big-endian word at `offset` (any alignment).
    @inline(__always)
    private static func bigEndianWord(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
