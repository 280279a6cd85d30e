/// What an SRTP sender remembers about one SSRC it sends: the highest RTP packet index protected so far, which of
/// the indices just below it were protected, and the last SRTCP index.
///
/// This is libsrtp's sender bookkeeping (`srtp_rdbx_estimate_index`, `srtp_rdbx_check`, `srtp_rdbx_add_index` and
/// `srtp_rdb_increment`) reproduced rule for rule, so that for any order of sequence numbers our packet indices,
/// hence rollover counters, are the ones a libsrtp sender would use, and a receiver's RFC 3711 §3.3.1 estimate finds
/// them. Allocates once (the window) at creation, nothing per packet. Not thread-safe: one thread at a time.
final class SRTPSenderStream {
    /// Half the sequence-number space, the threshold of RFC 3711 §3.3.1's estimate (libsrtp's `seq_num_median`).
    private static let median = 0x8000
    /// The sequence-number space (libsrtp's `seq_num_max`).
    private static let space = 0x1_0000

    /// The highest RTP packet index (ROC · 2^16 + SEQ) protected so far; 0 before the first packet.
    private(set) var highestIndex: UInt64 = 0
    /// How many indices the window covers, the highest included (libsrtp's replay window size).
    let windowSize: Int
    /// Bit k (word k / 64, bit k % 64) is set when index `highestIndex − k` was protected.
    private var window: [UInt64]
    /// The last SRTCP index used; 0 before the first SRTCP packet, which gets 1 (as libsrtp's).
    private(set) var rtcpIndex: UInt32 = 0

    /// Creates the state of a stream that has sent nothing; `windowSize` (a multiple of 64) is how far back a
    /// sequence number may be protected again or late.
    init(windowSize: Int) {
        precondition(windowSize > 0 && windowSize % 64 == 0, "the window is whole 64-bit words")
        self.windowSize = windowSize
        window = [UInt64](repeating: 0, count: windowSize / 64)
    }

    /// The packet index for `sequenceNumber`, recorded as protected.
    ///
    /// The index is RFC 3711 §3.3.1's estimate from the highest index so far (below 2^15 the rollover counter is
    /// taken as 0, as libsrtp does, so that a first packet never gets ROC 2^32 − 1). An index above the highest one
    /// moves the window up. One at or below it must be within the window (else ``SRTPError/replayTooOld``) and, when
    /// `allowingRepeats` is `false`, not protected before (else ``SRTPError/replayed``): reusing an index reuses the
    /// keystream, which only a retransmission of the same bytes may do.
    func recordRTP(sequenceNumber: UInt16, allowingRepeats: Bool) throws(SRTPError) -> UInt64 {
        let (index, delta) = estimate(sequenceNumber)
        if delta > 0 {
            advance(by: delta)
            highestIndex += UInt64(delta)
            return index
        }
        let age = -delta
        guard age < windowSize else { throw .replayTooOld }
        let word = age / 64
        let bit = UInt64(1) << UInt64(age % 64)
        if window[word] & bit != 0, !allowingRepeats { throw .replayed }
        window[word] |= bit
        return index
    }

    /// The next SRTCP index (1, 2, …); ``SRTPError/keyExpired`` after 2^31 − 1.
    func nextRTCPIndex() throws(SRTPError) -> UInt32 {
        guard rtcpIndex < 0x7FFF_FFFF else { throw .keyExpired }
        rtcpIndex += 1
        return rtcpIndex
    }

    /// The estimated index of `sequenceNumber` and its distance above the highest index (libsrtp's
    /// `srtp_rdbx_estimate_index` and `srtp_index_guess`).
    private func estimate(_ sequenceNumber: UInt16) -> (index: UInt64, delta: Int) {
        let sequence = Int(sequenceNumber)
        guard highestIndex > UInt64(Self.median) else {
            return (UInt64(sequenceNumber), sequence - Int(highestIndex))
        }
        let rolloverCounter = UInt32(truncatingIfNeeded: highestIndex >> 16)
        let highestSequence = Int(UInt16(truncatingIfNeeded: highestIndex))
        var guess = rolloverCounter
        var delta = sequence - highestSequence
        if highestSequence < Self.median {
            if delta > Self.median {
                guess = rolloverCounter &- 1
                delta -= Self.space
            }
        } else if highestSequence - Self.median > sequence {
            guess = rolloverCounter &+ 1
            delta += Self.space
        }
        return (UInt64(guess) << 16 | UInt64(sequenceNumber), delta)
    }

    /// Moves the window up by `delta` indices and marks the new highest one.
    private func advance(by delta: Int) {
        let words = window.count
        let wordShift = delta / 64
        let bitShift = UInt64(delta % 64)
        for target in stride(from: words - 1, through: 0, by: -1) {
            let source = target - wordShift
            var value: UInt64 = 0
            if source >= 0 {
                value = window[source] << bitShift
                if bitShift > 0, source > 0 { value |= window[source - 1] >> (64 - bitShift) }
            }
            window[target] = value
        }
        window[0] |= 1
    }
}
