import Testing

@testable import CaptureV4L2

/// Choosing frame timestamps (pure; no hardware).
@Suite("V4L2 frame timestamps")
struct FrameTimestampsTests {
    @Test("plausible driver timestamps are used as they are")
    func driver() {
        var stamps = FrameTimestamps()
        #expect(stamps.next(driverNs: 1_000, nowNs: 5_000) == 1_000)
        #expect(stamps.next(driverNs: 2_000, nowNs: 6_000) == 2_000)
        #expect(stamps.usingDriverTimestamps)
    }

    @Test("a timestamp going backwards switches to the clock for good, still strictly increasing")
    func backwards() {
        var stamps = FrameTimestamps()
        #expect(stamps.next(driverNs: 10_000, nowNs: 10_500) == 10_000)
        #expect(stamps.next(driverNs: 9_000, nowNs: 11_000) == 11_000)
        #expect(stamps.next(driverNs: 12_000, nowNs: 12_500) == 12_500)
        #expect(!stamps.usingDriverTimestamps)
        #expect(stamps.fallbackReason?.contains("does not follow") == true)
    }

    @Test("a timestamp more than one frame interval in the future, or older than 2 s, is rejected")
    func implausible() {
        var nominal = FrameTimestamps(frameIntervalNs: 40_000)  // vivid: the nominal end of the frame.
        #expect(nominal.next(driverNs: 30_000, nowNs: 10_000) == 30_000)
        #expect(nominal.usingDriverTimestamps)
        var future = FrameTimestamps(frameIntervalNs: 5_000)
        #expect(future.next(driverNs: 20_000, nowNs: 10_000) == 10_000)
        #expect(!future.usingDriverTimestamps)
        var stale = FrameTimestamps()
        #expect(stale.next(driverNs: 1, nowNs: 3_000_000_000) == 3_000_000_000)
        #expect(!stale.usingDriverTimestamps)
    }

    @Test("without monotonic driver timestamps the clock is used, and equal clock readings still increase")
    func clock() {
        var stamps = FrameTimestamps()
        #expect(stamps.next(driverNs: nil, nowNs: 7_000) == 7_000)
        #expect(stamps.next(driverNs: nil, nowNs: 7_000) == 7_001)
        #expect(stamps.next(driverNs: nil, nowNs: 6_000) == 7_002)
    }
}
