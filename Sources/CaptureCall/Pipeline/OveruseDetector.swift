/// Decides when encoding uses too much of the frame interval (WebRTC's `OveruseFrameDetector`), deterministically:
/// it sees only the encode durations and frame intervals it is fed, never a clock.
///
/// Feed one sample per encoded frame with ``addSample(encodeDurationNs:frameIntervalNs:)``; it returns
/// ``Decision/stepDown`` or ``Decision/stepUp`` when the resolution should change (see ``OveruseConfiguration``).
/// The caller applies the step (or not, at a limit) and reports it with ``didStep(_:)``, so that the detector
/// knows whether a step up is possible and can back off after an oscillation.
package struct OveruseDetector: Sendable, Hashable, Codable {
    /// What the caller should do.
    package enum Decision: String, Sendable, Hashable, Codable {
        /// Keep the resolution.
        case keep
        /// Encoding is too slow: lower the resolution one step.
        case stepDown
        /// Encoding has room: raise the resolution one step.
        case stepUp
    }

    /// The thresholds and windows.
    package let configuration: OveruseConfiguration
    /// The mean usage of the last complete window, if any.
    package private(set) var lastWindowUsage: Double?
    /// How many steps below full resolution the caller is (as reported by ``didStep(_:)``).
    package private(set) var level = 0
    /// Consecutive underuse windows needed now (grows after oscillations).
    package private(set) var requiredUnderuseWindows: Int

    private var windowUsageSum = 0.0
    private var windowCount = 0
    private var overuseRun = 0
    private var underuseRun = 0
    /// Windows completed since the last step up, or `nil` when there was none.
    private var windowsSinceStepUp: Int?

    /// Creates a detector.
    package init(configuration: OveruseConfiguration = OveruseConfiguration()) {
        self.configuration = configuration
        requiredUnderuseWindows = max(1, configuration.underuseWindows)
    }

    /// Adds one frame's encode duration and the interval since the previous frame, both in nanoseconds. Samples
    /// with a non-positive interval are ignored.
    package mutating func addSample(encodeDurationNs: Int64, frameIntervalNs: Int64) -> Decision {
        guard configuration.enabled, frameIntervalNs > 0, encodeDurationNs >= 0 else { return .keep }
        windowUsageSum += Double(encodeDurationNs) / Double(frameIntervalNs)
        windowCount += 1
        guard windowCount >= max(1, configuration.windowFrames) else { return .keep }
        let usage = windowUsageSum / Double(windowCount)
        windowUsageSum = 0
        windowCount = 0
        lastWindowUsage = usage
        if let since = windowsSinceStepUp { windowsSinceStepUp = since + 1 }
        if usage > configuration.highThreshold {
            overuseRun += 1
            underuseRun = 0
            if overuseRun >= max(1, configuration.overuseWindows) {
                overuseRun = 0
                return .stepDown
            }
        } else if usage < configuration.lowThreshold {
            underuseRun += 1
            overuseRun = 0
            if level > 0, underuseRun >= requiredUnderuseWindows {
                underuseRun = 0
                return .stepUp
            }
        } else {
            overuseRun = 0
            underuseRun = 0
        }
        return .keep
    }

    /// Tells the detector that the caller applied `decision` (``Decision/keep`` does nothing). A step down soon
    /// after a step up doubles the underuse windows needed for the next step up.
    package mutating func didStep(_ decision: Decision) {
        switch decision {
        case .keep:
            return
        case .stepDown:
            if let since = windowsSinceStepUp, since <= configuration.oscillationWindows {
                requiredUnderuseWindows = min(
                    requiredUnderuseWindows * 2, max(requiredUnderuseWindows, configuration.maxUnderuseWindows))
            }
            windowsSinceStepUp = nil
            level += 1
        case .stepUp:
            windowsSinceStepUp = 0
            level = max(0, level - 1)
        }
        overuseRun = 0
        underuseRun = 0
    }
}
