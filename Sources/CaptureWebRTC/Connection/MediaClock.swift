internal import CaptureCore
public import CaptureRTP

/// How a ``WebRTCConnection`` relates the instants it is given to the clocks on the wire: the monotonic clock the
/// frames' capture times are on (RTP timestamps in sender reports follow it) and NTP wall-clock time (sender reports,
/// round-trip times). Taken once, so that everything after is a function of the instants alone.
///
/// A real connection takes ``now()``; a test in virtual time gives fixed values, and every report and round-trip time
/// it sees is then reproducible.
public struct MediaClock: Sendable, Hashable {
    /// The instant the correspondence was taken at.
    public var epoch: ContinuousClock.Instant
    /// The monotonic time (`CLOCK_MONOTONIC`, ns: the frames' capture clock) at ``epoch``.
    public var monotonicNanoseconds: UInt64
    /// The NTP time at ``epoch``.
    public var ntp: NTPTimestamp

    /// Creates a correspondence from explicit values (for tests and replays).
    public init(epoch: ContinuousClock.Instant, monotonicNanoseconds: UInt64, ntp: NTPTimestamp) {
        self.epoch = epoch
        self.monotonicNanoseconds = monotonicNanoseconds
        self.ntp = ntp
    }

    /// Reads the clocks now.
    public static func now() -> MediaClock {
        let epoch = ContinuousClock.now
        let mapping = NTPClockMapping()
        return MediaClock(epoch: epoch, monotonicNanoseconds: mapping.monotonicNanoseconds, ntp: mapping.ntp)
    }

    /// The monotonic nanoseconds of `instant` (clamped at 0).
    func nanoseconds(at instant: ContinuousClock.Instant) -> UInt64 {
        let offset = epoch.duration(to: instant)
        let (seconds, attoseconds) = offset.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return seconds < 0 ? 0 : UInt64.max }
        let delta = nanoseconds.partialValue &+ attoseconds / 1_000_000_000
        if delta >= 0 { return monotonicNanoseconds &+ UInt64(delta) }
        return monotonicNanoseconds - min(monotonicNanoseconds, delta.magnitude)
    }

    /// The instant of monotonic nanoseconds `nanoseconds`.
    func instant(atNanoseconds nanoseconds: UInt64) -> ContinuousClock.Instant {
        if nanoseconds >= monotonicNanoseconds {
            return epoch + .nanoseconds(Int64(clamping: nanoseconds - monotonicNanoseconds))
        }
        return epoch - .nanoseconds(Int64(clamping: monotonicNanoseconds - nanoseconds))
    }

    /// The mapping a sender report uses.
    var ntpMapping: NTPClockMapping { NTPClockMapping(monotonicNanoseconds: monotonicNanoseconds, ntp: ntp) }
}
