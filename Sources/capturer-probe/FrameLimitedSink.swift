import CaptureCall
import CaptureCore
import CaptureVP8

/// Forwards the first `limit` encoded frames to another sink and drops the rest, so that `send --frames N` sends
/// exactly N frames: the command stops capture only after it sees the count reached, and frames the encoder finishes
/// in between (more of them on a slow, e.g. sanitized, build) must not reach the wire.
final class FrameLimitedSink: EncodedFrameSink {
    private let next: any EncodedFrameSink
    private let limit: Int
    private let forwarded = Locked(0)

    /// Forwards at most `limit` frames to `next`.
    init(forwardingTo next: any EncodedFrameSink, limit: Int) {
        self.next = next
        self.limit = limit
    }

    func consume(_ frame: EncodedFrame) {
        let admitted = forwarded.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        if admitted { next.consume(frame) }
    }

    func finish() { next.finish() }
}
