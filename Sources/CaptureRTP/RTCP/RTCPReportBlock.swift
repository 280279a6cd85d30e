/// One reception report block (RFC 3550 §6.4.1), carried in sender and receiver reports.
public struct RTCPReportBlock: Sendable, Hashable, Codable {
    /// The SSRC of the source this block reports on.
    public var ssrc: UInt32
    /// The fraction of packets lost since the previous report, in units of 1/256.
    public var fractionLost: UInt8
    /// The cumulative number of packets lost: a 24-bit signed value (duplicates can make it negative).
    public var cumulativeLost: Int32
    /// The extended highest sequence number received (cycles in the high 16 bits).
    public var extendedHighestSequence: UInt32
    /// The interarrival jitter, in RTP timestamp units.
    public var jitter: UInt32
    /// The middle 32 bits of the NTP timestamp of the last sender report received from this source (0 if none).
    public var lastSenderReport: UInt32
    /// The delay since that sender report was received, in units of 1/65536 s (0 if none).
    public var delaySinceLastSenderReport: UInt32

    /// The range a 24-bit signed cumulative loss can hold.
    public static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    /// Creates a block; `cumulativeLost` is clamped to the 24-bit signed range.
    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32, jitter: UInt32,
        lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = min(
            max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }
}
