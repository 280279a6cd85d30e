/// When a STUN request over UDP is sent again (RFC 8489 §6.2.1): once at the start, then after a timeout that doubles
/// up to a cap, for a fixed number of transmissions. The ICE agent's checks and the TURN client's requests keep one
/// each.
struct STUNRetransmission {
    /// When the next transmission is due (monotonic nanoseconds).
    private(set) var deadlineNs: UInt64
    /// The timeout that led to ``deadlineNs``.
    private(set) var timeoutNs: UInt64
    /// Transmissions so far: 1 after the first send.
    private(set) var transmissions = 1

    /// The schedule of a request first sent at `nowNs`.
    init(sentAtNs nowNs: UInt64, initialTimeoutNs: UInt64) {
        timeoutNs = initialTimeoutNs
        deadlineNs = nowNs + initialTimeoutNs
    }

    /// Whether the next transmission is due at `nowNs`.
    func isDue(atNs nowNs: UInt64) -> Bool { deadlineNs <= nowNs }

    /// Counts one more transmission at `nowNs` with the timeout doubled up to `maximumTimeoutNs`; `false`, and nothing
    /// changed, when `maximumTransmissions` were sent already: the request has timed out.
    mutating func retransmit(atNs nowNs: UInt64, maximumTimeoutNs: UInt64, maximumTransmissions: Int) -> Bool {
        guard transmissions < maximumTransmissions else { return false }
        transmissions += 1
        timeoutNs = min(timeoutNs * 2, maximumTimeoutNs)
        deadlineNs = nowNs + timeoutNs
        return true
    }
}
