/// Congestion-window pushback: cuts the encoder's rate, and asks it to drop frames, while the data in flight and in
/// the pacer's queue exceed a window of (RTT + 350 ms) at the target rate.
///
/// ## What it is
///
/// libwebrtc's `CongestionWindowPushbackController`, as `rate_control_settings` turns it on by default
/// (`QueueSize:350,MinBitrate:30000,DropFrame:true`). A camera sender whose feedback stops (or whose path queues for
/// seconds) keeps encoding at the last target; the window bounds how much it may have outstanding:
///
/// - ``update(bytesInFlight:pacerQueueBytes:roundTripTime:targetBitrate:)`` sets the window to
///   (RTT, or 100 ms before one is known, + ``additionalTime``) × target / 8, at least 3000 bytes (libwebrtc
///   `kMinCwnd`), and records the bytes in flight (sent, not yet acknowledged or reported lost) and queued.
/// - ``adjust(_:)`` moves ``encodingRateRatio`` by the fill (in flight + queued) / window: over 1.5 × 0.9, over 1.0
///   × 0.95, under 0.1 back to 1, else × 1.05 up to 1; and returns target × ratio, never under
///   min(``minimumBitrate``, target).
/// - ``isDroppingFrames`` is true while the fill is over 1.0 (the window is full): the encoder should drop frames.
///
/// Call ``adjust(_:)`` once per target update (libwebrtc calls it on each network-state change, some 40 times a
/// second at most), not per packet: each call moves the ratio by one step.
///
/// ## Where this differs from libwebrtc
///
/// - The window is recomputed from each update's RTT; libwebrtc averages the new window with the previous one and
///   uses the minimum of the recent feedback's maximum RTTs (the owner passes that RTT here).
/// - The pacer's queue counts in the fill; libwebrtc adds it only behind `WebRTC-AddPacingToCongestionWindowPushback`.
///   A queue the pacer cannot drain is data the path has not taken either.
/// - With `DropFrame`, libwebrtc keeps the encoder's rate and drops frames by the pushback ratio; here the rate is
///   cut and ``isDroppingFrames`` says when to drop, and the owner decides how many.
///
/// ## Threading
///
/// A plain value, not thread-safe: one owner (the connection) mutates it.
public struct CongestionWindowPushback: Sendable, Hashable {
    /// The queueing time allowed on top of the RTT (libwebrtc `QueueSize`, 350 ms).
    public let additionalTime: Duration
    /// The lowest rate pushback cuts to, bit/s (libwebrtc `MinBitrate`, 30 kbit/s).
    public let minimumBitrate: Int

    static let defaultRoundTripTime: Int64 = 100 * Nanoseconds.perMillisecond
    static let minimumWindow = 3000

    /// The window, bytes; 0 until the first ``update(bytesInFlight:pacerQueueBytes:roundTripTime:targetBitrate:)``
    /// (no pushback until then).
    public private(set) var window = 0
    /// The factor ``adjust(_:)`` applies to the target, in [0, 1].
    public private(set) var encodingRateRatio = 1.0
    private var inFlight = 0
    private var queued = 0

    /// A controller with libwebrtc's defaults; a negative time counts as zero, a negative minimum as zero.
    public init(additionalTime: Duration = .milliseconds(350), minimumBitrate: Int = 30_000) {
        self.additionalTime = max(.zero, additionalTime)
        self.minimumBitrate = max(0, minimumBitrate)
    }

    /// Records the bytes in flight and in the pacer's queue (negatives count as zero) and sets the window from the
    /// round-trip time (nil: 100 ms) and the target bitrate, bit/s.
    public mutating func update(
        bytesInFlight: Int, pacerQueueBytes: Int, roundTripTime: Duration?, targetBitrate: Int
    ) {
        inFlight = max(0, bytesInFlight)
        queued = max(0, pacerQueueBytes)
        let rtt = roundTripTime.map { max(0, Nanoseconds.of($0)) } ?? Self.defaultRoundTripTime
        let time = Double(Nanoseconds.sum(rtt, Nanoseconds.of(additionalTime))) / 1e9
        let bytes = (Double(max(0, targetBitrate)) * time / 8).finiteOr(0)
        window = max(Self.minimumWindow, bytes < 1e15 ? Int(bytes) : Int(1e15))
    }

    /// The encoder rate for `targetBitrate` after pushback, bit/s; moves ``encodingRateRatio`` by one step.
    public mutating func adjust(_ targetBitrate: Int) -> Int {
        let target = max(0, targetBitrate)
        guard window > 0 else { return target }
        let fill = fillRatio
        if fill > 1.5 {
            encodingRateRatio *= 0.9
        } else if fill > 1 {
            encodingRateRatio *= 0.95
        } else if fill < 0.1 {
            encodingRateRatio = 1
        } else {
            encodingRateRatio = min(1, encodingRateRatio * 1.05)
        }
        // Never further down than the minimum needs: libwebrtc's ratio falls without bound while the window stays
        // full (its output is floored, not the ratio), and then takes hundreds of ×1.05 steps to come back.
        if target > 0 { encodingRateRatio = max(encodingRateRatio, min(1, Double(minimumBitrate) / Double(target))) }
        let adjusted = Int(bitrate: Double(target) * encodingRateRatio)
        return adjusted < minimumBitrate ? min(target, minimumBitrate) : adjusted
    }

    /// Whether the window is full (fill over 1.0): the encoder should drop frames (libwebrtc `DropFrame`).
    public var isDroppingFrames: Bool { window > 0 && fillRatio > 1 }

    private var fillRatio: Double {
        Double(PacingController.saturatingSum(inFlight, queued)) / Double(max(1, window))
    }
}
