#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A 64-bit NTP timestamp (RFC 5905 §6): whole seconds since 1900-01-01 and a 32-bit binary fraction of a second.
///
/// RTCP sender reports carry the full 64 bits; receiver reports echo the middle 32 bits (``middle32``) as LSR.
public struct NTPTimestamp: Sendable, Hashable, Codable, Comparable {
    /// Seconds since 1900-01-01 00:00 UTC (wraps in 2036, as on the wire).
    public var seconds: UInt32
    /// The fraction of a second, in units of 2⁻³² s.
    public var fraction: UInt32

    /// Seconds between the NTP epoch (1900) and the Unix epoch (1970).
    public static let unixEpochOffsetSeconds: UInt64 = 2_208_988_800

    /// Creates a timestamp from its two wire halves.
    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// Creates a timestamp from its 64-bit wire form (seconds in the high half).
    public init(rawValue: UInt64) {
        self.init(seconds: UInt32(truncatingIfNeeded: rawValue >> 32), fraction: UInt32(truncatingIfNeeded: rawValue))
    }

    /// Creates the timestamp of a wall-clock instant given in nanoseconds since the Unix epoch.
    public init(unixNanoseconds: UInt64) {
        let wholeSeconds = unixNanoseconds / 1_000_000_000
        let nanoseconds = unixNanoseconds % 1_000_000_000
        self.init(
            seconds: UInt32(truncatingIfNeeded: wholeSeconds + Self.unixEpochOffsetSeconds),
            fraction: UInt32(truncatingIfNeeded: (nanoseconds << 32) / 1_000_000_000)
        )
    }

    /// The 64-bit wire form.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    /// The middle 32 bits (low 16 bits of the seconds, high 16 bits of the fraction): the LSR field of a report block
    /// and the unit (1/65536 s) of DLSR and round-trip times.
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// The current wall-clock time (`CLOCK_REALTIME`).
    public static func now() -> NTPTimestamp {
        NTPTimestamp(unixNanoseconds: clockNanoseconds(CLOCK_REALTIME))
    }

    /// Orders timestamps by their 64-bit value (ignoring the 2036 wrap).
    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A fixed correspondence between the monotonic clock and NTP wall-clock time, taken once (at session start) so that
/// timestamps derived from it move with the monotonic clock and never jump when the wall clock is adjusted.
public struct NTPClockMapping: Sendable, Hashable, Codable {
    /// The monotonic time (`CLOCK_MONOTONIC`, ns) of the reference instant.
    public var monotonicNanoseconds: UInt64
    /// The NTP time of the same instant.
    public var ntp: NTPTimestamp

    /// Creates a mapping from an explicit pair (for tests and replays).
    public init(monotonicNanoseconds: UInt64, ntp: NTPTimestamp) {
        self.monotonicNanoseconds = monotonicNanoseconds
        self.ntp = ntp
    }

    /// Reads both clocks now.
    public init() {
        let monotonic = clockNanoseconds(CLOCK_MONOTONIC)
        self.init(monotonicNanoseconds: monotonic, ntp: NTPTimestamp(unixNanoseconds: clockNanoseconds(CLOCK_REALTIME)))
    }

    /// The NTP time of a monotonic instant (ns).
    public func ntp(atMonotonicNanoseconds nanoseconds: UInt64) -> NTPTimestamp {
        let delta = Int64(bitPattern: nanoseconds &- monotonicNanoseconds)
        let units =
            (Int64(delta.magnitude / 1_000_000_000) << 32)
            + Int64(((delta.magnitude % 1_000_000_000) << 32) / 1_000_000_000)
        let signed = delta < 0 ? -units : units
        return NTPTimestamp(rawValue: ntp.rawValue &+ UInt64(bitPattern: signed))
    }

    /// The monotonic instant (ns) of an NTP time.
    public func monotonicNanoseconds(at timestamp: NTPTimestamp) -> UInt64 {
        let units = Int64(bitPattern: timestamp.rawValue &- ntp.rawValue)
        let magnitude = units.magnitude
        let nanoseconds = (magnitude >> 32) * 1_000_000_000 + ((magnitude & 0xFFFF_FFFF) * 1_000_000_000) >> 32
        return units < 0 ? monotonicNanoseconds &- nanoseconds : monotonicNanoseconds &+ nanoseconds
    }
}

/// Reads `clock` in nanoseconds.
func clockNanoseconds(_ clock: clockid_t) -> UInt64 {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}
