/// Scripted arrivals for transport-wide feedback (loss, reordering, a duplicate, the 16-bit wrap, a 70 ms gap): the
/// generator's unit tests check its feedback byte for byte, and the tshark interop test has Wireshark decode it.
package enum TWCCArrivalScript {
    /// 1000.010 s: 15 625 reference-time units (1000.000 s) and 10 ms.
    package static let t0: UInt64 = 1_000_010_000_000

    /// `milliseconds` after ``t0``, in nanoseconds.
    package static func at(_ milliseconds: UInt64) -> UInt64 { t0 + milliseconds * 1_000_000 }

    /// The arrivals: (sequence number, milliseconds after ``t0``).
    package static let arrivals: [(UInt16, UInt64)] = [
        (65530, 0), (65531, 1), (65533, 3), (65532, 4),  // 65532 and 65533 swapped
        (65534, 5), (65535, 6), (0, 7),  // the wrap
        (2, 8),  // 1 lost
        (3, 78), (4, 79),  // 70 ms of silence
        (4, 80),  // a duplicate
    ]
}
