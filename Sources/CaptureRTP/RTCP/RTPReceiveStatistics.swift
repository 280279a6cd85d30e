/// Reception statistics for one RTP source (RFC 3550 appendix A.1, A.3, A.8): sequence tracking with probation,
/// wrap and restart, loss, fraction lost between reports and interarrival jitter.
///
/// Feed every received packet to ``update(sequenceNumber:rtpTimestamp:arrivalTimeNs:clockRate:)`` and call
/// ``makeReportBlock(ssrc:nowNs:lastSenderReport:)`` when sending a report. A value type with no allocation.
public struct RTPReceiveStatistics: Sendable, Hashable, Codable {
    /// Sequential packets needed before a source is valid (RFC 3550 `MIN_SEQUENTIAL`).
    public static let minimumSequential = 2
    /// The largest forward jump still treated as loss rather than a restart (`MAX_DROPOUT`).
    public static let maximumDropout: UInt16 = 3000
    /// The largest backward jump still treated as reordering (`MAX_MISORDER`).
    public static let maximumMisorder: UInt16 = 100

    private var maxSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var baseSequence: UInt32 = 0
    private var badSequence: UInt32 = 1 << 16 + 1
    private var probation = 0
    private var started = false
    private var receivedPrior: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var lastTransit: UInt32 = 0
    private var lastJitterTimestamp: UInt32 = 0
    private var hasTransit = false
    private var jitterQ4: UInt32 = 0
    private var firstArrivalNs: UInt64 = 0

    /// Packets counted as received (after probation; duplicates count, as in RFC 3550).
    public private(set) var received: UInt32 = 0
    /// Packets discarded as out of probation or as an unexplained big jump (not counted).
    public private(set) var discarded: UInt32 = 0
    /// How many times the sequence restarted after a big jump (RFC 3550 A.1 "bad_seq").
    public private(set) var restarts: UInt32 = 0

    /// Creates empty statistics.
    public init() {}

    /// Whether the source has passed probation.
    public var isValid: Bool { started && probation == 0 }

    /// The extended highest sequence number received (cycles × 65536 + highest).
    public var extendedHighestSequence: UInt32 { cycles + UInt32(maxSequence) }

    /// Packets expected so far (from the first valid packet to the extended highest).
    public var expected: UInt32 { isValid ? extendedHighestSequence &- baseSequence &+ 1 : 0 }

    /// Cumulative packets lost (expected − received, may be negative with duplicates), clamped to 24 bits signed.
    public var cumulativeLost: Int32 {
        let lost = Int64(expected) - Int64(received)
        return Int32(min(max(lost, -0x80_0000), 0x7F_FFFF))
    }

    /// The interarrival jitter in RTP timestamp units.
    public var jitter: UInt32 { jitterQ4 >> 4 }

    /// Accounts for one received packet; returns whether it was counted (false during probation or for a
    /// big jump awaiting confirmation).
    ///
    /// Jitter is updated only when the RTP timestamp changes (as libwebrtc does): the packets of one video frame share
    /// a timestamp but leave the sender spread out, which is not network jitter.
    @discardableResult
    public mutating func update(
        sequenceNumber: UInt16, rtpTimestamp: UInt32, arrivalTimeNs: UInt64, clockRate: UInt32
    ) -> Bool {
        guard updateSequence(sequenceNumber) else {
            discarded &+= 1
            return false
        }
        updateJitter(rtpTimestamp: rtpTimestamp, arrivalTimeNs: arrivalTimeNs, clockRate: clockRate)
        return true
    }

    private mutating func initSequence(_ sequence: UInt16) {
        baseSequence = UInt32(sequence)
        maxSequence = sequence
        badSequence = 1 << 16 + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    private mutating func updateSequence(_ sequence: UInt16) -> Bool {
        if !started {
            started = true
            initSequence(sequence)
            maxSequence = sequence &- 1
            probation = Self.minimumSequential
        }
        let delta = sequence &- maxSequence
        if probation > 0 {
            if sequence == maxSequence &+ 1 {
                probation -= 1
                maxSequence = sequence
                if probation == 0 {
                    initSequence(sequence)
                    received &+= 1
                    return true
                }
            } else {
                probation = Self.minimumSequential - 1
                maxSequence = sequence
            }
            return false
        } else if delta < Self.maximumDropout {
            if sequence < maxSequence { cycles &+= 1 << 16 }
            maxSequence = sequence
        } else if delta <= UInt16.max - Self.maximumMisorder {
            if UInt32(sequence) == badSequence {
                // Two sequential packets after a big jump: the sender restarted.
                initSequence(sequence)
                restarts &+= 1
                hasTransit = false
            } else {
                badSequence = (UInt32(sequence) + 1) & 0xFFFF
                return false
            }
        }
        // Otherwise a duplicate or reordered packet: counted, highest unchanged.
        received &+= 1
        return true
    }

    private mutating func updateJitter(rtpTimestamp: UInt32, arrivalTimeNs: UInt64, clockRate: UInt32) {
        if !hasTransit && received <= 1 { firstArrivalNs = arrivalTimeNs }
        let elapsed = arrivalTimeNs &- firstArrivalNs
        let rate = UInt64(clockRate)
        let ticks = (elapsed / 1_000_000_000) * rate + (elapsed % 1_000_000_000) * rate / 1_000_000_000
        let transit = UInt32(truncatingIfNeeded: ticks) &- rtpTimestamp
        // Transit is taken from the first packet of each timestamp (frame) only.
        guard !hasTransit || rtpTimestamp != lastJitterTimestamp else { return }
        if hasTransit {
            let difference = Int32(bitPattern: transit &- lastTransit).magnitude
            // RFC 3550 A.8, in Q4 fixed point: J += (|D| − J) / 16.
            jitterQ4 = jitterQ4 &+ difference &- ((jitterQ4 &+ 8) >> 4)
        }
        lastTransit = transit
        lastJitterTimestamp = rtpTimestamp
        hasTransit = true
    }

    /// Makes the report block for this source and starts a new fraction-lost interval.
    ///
    /// - Parameters:
    ///   - ssrc: the source's SSRC.
    ///   - nowNs: the monotonic time the block is sent (same clock as `receivedAtNs`).
    ///   - lastSenderReport: the middle 32 bits of the last SR's NTP timestamp and when it arrived, or `nil`.
    public mutating func makeReportBlock(
        ssrc: UInt32, nowNs: UInt64, lastSenderReport: (ntpMiddle32: UInt32, receivedAtNs: UInt64)?
    ) -> RTCPReportBlock {
        let expected = self.expected
        let expectedInterval = expected &- expectedPrior
        let receivedInterval = received &- receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction: UInt8 =
            expectedInterval == 0 || lostInterval <= 0
            ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
        var lsr: UInt32 = 0
        var dlsr: UInt32 = 0
        if let lastSenderReport {
            lsr = lastSenderReport.ntpMiddle32
            let delay = nowNs >= lastSenderReport.receivedAtNs ? nowNs - lastSenderReport.receivedAtNs : 0
            dlsr = UInt32(truncatingIfNeeded: min(UInt64(UInt32.max), (delay << 16) / 1_000_000_000))
        }
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: cumulativeLost,
            extendedHighestSequence: extendedHighestSequence, jitter: jitter, lastSenderReport: lsr,
            delaySinceLastSenderReport: dlsr)
    }
}
