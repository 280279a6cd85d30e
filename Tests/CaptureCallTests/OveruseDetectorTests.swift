import CaptureCall
import Testing

@Suite("OveruseDetector")
struct OveruseDetectorTests {
    static let intervalNs: Int64 = 33_333_333
    static let config = OveruseConfiguration(windowFrames: 10, overuseWindows: 2, underuseWindows: 3)

    /// Feeds `count` frames at `usage` × the frame interval; returns the decisions that were not `keep`.
    static func feed(_ detector: inout OveruseDetector, usage: Double, count: Int) -> [OveruseDetector.Decision] {
        var decisions: [OveruseDetector.Decision] = []
        for _ in 0..<count {
            let decision = detector.addSample(
                encodeDurationNs: Int64(usage * Double(intervalNs)), frameIntervalNs: intervalNs)
            if decision != .keep {
                decisions.append(decision)
                detector.didStep(decision)
            }
        }
        return decisions
    }

    @Test("steps down after sustained overuse, only after the configured windows")
    func stepsDown() {
        var detector = OveruseDetector(configuration: Self.config)
        #expect(Self.feed(&detector, usage: 0.95, count: 19) == [])
        #expect(Self.feed(&detector, usage: 0.95, count: 1) == [.stepDown])
        #expect(detector.level == 1)
        #expect(Self.feed(&detector, usage: 0.95, count: 20) == [.stepDown])
        #expect(detector.level == 2)
    }

    @Test("steps up after sustained underuse, never above full resolution")
    func stepsUp() {
        var detector = OveruseDetector(configuration: Self.config)
        #expect(Self.feed(&detector, usage: 0.1, count: 200) == [], "no step up at full resolution")
        #expect(Self.feed(&detector, usage: 1.2, count: 20) == [.stepDown])
        #expect(Self.feed(&detector, usage: 0.3, count: 29) == [])
        #expect(Self.feed(&detector, usage: 0.3, count: 1) == [.stepUp])
        #expect(detector.level == 0)
    }

    @Test("a noisy signal between the thresholds, or one window out of line, changes nothing")
    func noisyNoOscillation() {
        var detector = OveruseDetector(configuration: Self.config)
        var seed: UInt32 = 7
        var decisions: [OveruseDetector.Decision] = []
        for _ in 0..<3000 {
            // Per-frame usage anywhere in 0.40…1.00 (mean 0.70): single frames cross both thresholds.
            seed = seed &* 1_664_525 &+ 1_013_904_223  // a fixed LCG sequence: the test is deterministic
            let usage = 0.40 + 0.60 * Double((seed >> 8) % 1000) / 1000
            let decision = detector.addSample(
                encodeDurationNs: Int64(usage * Double(Self.intervalNs)), frameIntervalNs: Self.intervalNs)
            if decision != .keep { decisions.append(decision) }
        }
        #expect(decisions == [])
        // Alternating overuse and underuse windows never reach a run.
        for round in 0..<40 {
            #expect(Self.feed(&detector, usage: round.isMultiple(of: 2) ? 0.95 : 0.2, count: 10) == [])
        }
    }

    @Test("a step down soon after a step up doubles the underuse needed next time")
    func backOff() {
        var detector = OveruseDetector(configuration: Self.config)
        _ = Self.feed(&detector, usage: 1.0, count: 20)
        _ = Self.feed(&detector, usage: 0.2, count: 30)
        #expect(detector.level == 0 && detector.requiredUnderuseWindows == 3)
        #expect(Self.feed(&detector, usage: 1.0, count: 20) == [.stepDown])
        #expect(detector.requiredUnderuseWindows == 6)
        #expect(Self.feed(&detector, usage: 0.2, count: 59) == [])
        #expect(Self.feed(&detector, usage: 0.2, count: 1) == [.stepUp])
    }

    @Test("disabled, or fed zero intervals, it never decides")
    func disabledAndBadInput() {
        var off = OveruseDetector(configuration: OveruseConfiguration(enabled: false, windowFrames: 1))
        #expect(Self.feed(&off, usage: 5, count: 100) == [])
        var on = OveruseDetector(configuration: Self.config)
        for _ in 0..<100 {
            #expect(on.addSample(encodeDurationNs: 1_000_000_000, frameIntervalNs: 0) == .keep)
            #expect(on.addSample(encodeDurationNs: -1, frameIntervalNs: Self.intervalNs) == .keep)
        }
    }

    @Test("resolution levels: full, 3/4, 1/2, 3/8, 1/4")
    func scales() {
        let scales = (0..<5).map { OveruseConfiguration.scale(level: $0) }
        #expect(scales.map(\.numerator) == [1, 3, 1, 3, 1])
        #expect(scales.map(\.denominator) == [1, 4, 2, 8, 4])
    }
}
