/// Chooses each frame's timestamp: the driver's monotonic capture time while it is plausible, else the monotonic
/// clock at dequeue; the result is strictly increasing.
///
/// A driver timestamp is rejected when it is more than ``futureToleranceNs`` in the future, more than
/// ``maximumAgeNs`` old, or not after the previous frame's. The tolerance is one frame interval: drivers that stamp
/// the nominal end of a frame they generate (vivid does: start of frame + frame period) deliver a buffer up to one
/// period before its timestamp. After the first rejection the clock is used for the rest of the stream (as
/// GStreamer does), so the two time bases are never mixed back and forth.
struct FrameTimestamps {
    /// The oldest a driver timestamp may be, relative to the dequeue time.
    static let maximumAgeNs: UInt64 = 2_000_000_000

    /// Whether driver timestamps are still in use.
    private(set) var usingDriverTimestamps = true
    /// Why driver timestamps were abandoned, if they were.
    private(set) var fallbackReason: String?
    private var last: UInt64?
    /// How far in the future a driver timestamp may be (one frame interval).
    let futureToleranceNs: UInt64

    /// Timestamps for a stream whose frames come `frameIntervalNs` apart (0 allows no future timestamp at all).
    init(frameIntervalNs: UInt64 = 0) {
        self.futureToleranceNs = frameIntervalNs
    }

    /// The timestamp for a frame dequeued at `nowNs` whose driver timestamp is `driverNs` (nil when the driver's
    /// timestamps are not on the monotonic clock).
    mutating func next(driverNs: UInt64?, nowNs: UInt64) -> UInt64 {
        var timestamp = nowNs
        if usingDriverTimestamps {
            if let driverNs, let problem = problem(driverNs, nowNs) {
                usingDriverTimestamps = false
                fallbackReason = problem
            } else if let driverNs {
                timestamp = driverNs
            } else {
                usingDriverTimestamps = false
                fallbackReason = "the driver's timestamps are not on the monotonic clock"
            }
        }
        if let last, timestamp <= last { timestamp = last + 1 }
        last = timestamp
        return timestamp
    }

    private func problem(_ driverNs: UInt64, _ nowNs: UInt64) -> String? {
        if driverNs > nowNs &+ futureToleranceNs {
            return "driver timestamp \(driverNs) ns is more than one frame interval after the dequeue time \(nowNs) ns"
        }
        if nowNs > driverNs, nowNs - driverNs > Self.maximumAgeNs {
            return "driver timestamp \(driverNs) ns is older than 2 s"
        }
        if let last, driverNs <= last { return "driver timestamp \(driverNs) ns does not follow \(last) ns" }
        return nil
    }
}
