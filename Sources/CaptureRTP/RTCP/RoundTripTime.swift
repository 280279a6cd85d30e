/// Round-trip time from a report block (RFC 3550 §6.4.1), computed by the media sender.
package enum RoundTripTime {
    /// RTT = A − LSR − DLSR, where A is when the block arrived (middle 32 bits of NTP time, 1/65536 s units).
    /// `nil` when the block carries no LSR (the receiver has not heard a sender report yet) or when the result would
    /// be negative (clock trouble).
    package static func compute(reportBlock: RTCPReportBlock, receivedAt: NTPTimestamp) -> Duration? {
        guard reportBlock.lastSenderReport != 0 else { return nil }
        let sinceReport = receivedAt.middle32 &- reportBlock.lastSenderReport
        guard sinceReport >= reportBlock.delaySinceLastSenderReport, sinceReport < 0x8000_0000 else { return nil }
        let units = UInt64(sinceReport - reportBlock.delaySinceLastSenderReport)
        return .nanoseconds(Int64((units * 1_000_000_000) >> 16))
    }
}
