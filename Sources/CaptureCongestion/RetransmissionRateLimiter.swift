/// Keeps retransmissions within the target rate: libwebrtc's `RetransmissionRateLimiter` (RTX bytes over the last
/// second at most the target bitrate), as a token bucket of one second at the target rate.
///
/// ## Why
/// When a link narrows under a full queue, most of what was in flight is lost at once; every NACK answered at once
/// fills the pacer with retransmissions of frames the receiver is about to give up on (it asks for a key frame), the
/// congestion window stays full behind them and the encoder is held back for seconds. Answering at most the target
/// rate's worth a second keeps repair from crowding out the stream.
///
/// ## Where this differs from libwebrtc
/// libwebrtc measures the RTX rate over a sliding one-second window; a bucket of one second's bytes refilled at the
/// rate allows the same average and the same one-second burst, with two integers of state instead of a window.
///
/// ## Threading
/// A plain value, one owner.
public struct RetransmissionRateLimiter: Sendable, Hashable {
    /// The most retransmitted bytes a second, from the target bitrate (bit/s).
    public private(set) var maximumBitrate: Int
    /// Bytes that may be sent now.
    public private(set) var available: Int
    /// Retransmissions refused so far.
    public private(set) var refused = 0
    private var last: ContinuousClock.Instant

    /// A limiter at `maximumBitrate` bit/s, its bucket full.
    public init(maximumBitrate: Int, at now: ContinuousClock.Instant) {
        self.maximumBitrate = max(0, maximumBitrate)
        available = self.maximumBitrate / 8
        last = now
    }

    /// Sets the most retransmitted bits a second (the connection's target).
    public mutating func setMaximumBitrate(_ bitsPerSecond: Int, at now: ContinuousClock.Instant) {
        refill(at: now)
        maximumBitrate = max(0, bitsPerSecond)
        available = min(available, maximumBitrate / 8)
    }

    /// Whether a retransmission of `bytes` may go at `now` (then its bytes are taken).
    public mutating func tryUse(_ bytes: Int, at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        let size = max(0, bytes)
        guard size <= available else {
            refused += 1
            return false
        }
        available -= size
        return true
    }

    private mutating func refill(at now: ContinuousClock.Instant) {
        guard now > last else { return }
        let elapsed = Nanoseconds.of(last.duration(to: now))
        last = now
        let added = Double(maximumBitrate) / 8 * Double(elapsed) / 1e9
        let capacity = maximumBitrate / 8
        available = min(capacity, available + (added.isFinite && added < Double(capacity) ? Int(added) : capacity))
    }
}
