/// The delay-gradient filter and overuse detector: a least-squares trend of the smoothed accumulated one-way delay
/// variation, compared with an adaptive threshold.
///
/// ## What it is
///
/// Each group delta `d = arrivalDelta − sendDelta` (ms) is accumulated and exponentially smoothed (coefficient
/// 0.9); the last 20 points (arrival time since the first, smoothed delay) are fitted by least squares, and the
/// slope, scaled by `min(deltas, 60) × 4`, is the *modified trend*. Above the threshold for more than 10 ms and on at
/// least 2 samples (and not falling) it is ``BandwidthUsage/overusing``; below `−threshold`,
/// ``BandwidthUsage/underusing``. The threshold starts at 12.5 and follows `|trend|` at `k_up` 0.0087 /
/// `k_down` 0.039 per ms (at most 100 ms per step), within [6, 600], except when `|trend|` exceeds it by more than 15
/// (a spike that must not drag the threshold).
///
/// ## Specification and libwebrtc
///
/// draft-ietf-rmcat-gcc-02 describes a Kalman filter for the delay gradient (§5.3) with the same adaptive threshold
/// (§5.4); libwebrtc replaced the Kalman filter with this trendline (`trendline_estimator.cc`), which reacts to a
/// queue that builds over several groups rather than to single deltas. This follows libwebrtc's constants and rules
/// exactly; the history is a fixed ring of 20 points instead of a deque (no allocation per packet).
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct TrendlineEstimator {
    static let windowSize = 20
    static let smoothingCoefficient = 0.9
    static let thresholdGain = 4.0
    static let minNumberOfDeltas = 60
    static let deltaCounterMax = 1000
    static let overusingTimeThresholdMs = 10.0
    static let kUp = 0.0087
    static let kDown = 0.039
    static let maxAdaptOffsetMs = 15.0
    static let maxTimeDeltaMs = 100.0
    static let thresholdRange = 6.0...600.0

    private var historyX = [Double](repeating: 0, count: windowSize)
    private var historyY = [Double](repeating: 0, count: windowSize)
    private var historyCount = 0
    private var historyNext = 0

    private var firstArrivalMs: Double?
    private var accumulatedDelay = 0.0
    private var smoothedDelay = 0.0
    private var numberOfDeltas = 0
    private var previousTrend = 0.0
    private var timeOverUsingMs = -1.0
    private var overuseCounter = 0
    private var lastThresholdUpdateMs: Double?

    /// The adaptive threshold now.
    private(set) var threshold = 12.5
    /// The last modified trend (slope × min(deltas, 60) × gain).
    private(set) var modifiedTrend = 0.0
    /// The hypothesis now.
    private(set) var state = BandwidthUsage.normal

    /// Adds one group delta; `arrivalMs` is the later group's arrival on the receiver's clock.
    mutating func update(arrivalDeltaMs: Double, sendDeltaMs: Double, arrivalMs: Double) {
        guard arrivalDeltaMs.isFinite, sendDeltaMs.isFinite, arrivalMs.isFinite else { return }
        let delta = arrivalDeltaMs - sendDeltaMs
        numberOfDeltas = min(numberOfDeltas + 1, Self.deltaCounterMax)
        let first = firstArrivalMs ?? arrivalMs
        firstArrivalMs = first
        accumulatedDelay += delta
        smoothedDelay = Self.smoothingCoefficient * smoothedDelay + (1 - Self.smoothingCoefficient) * accumulatedDelay
        historyX[historyNext] = arrivalMs - first
        historyY[historyNext] = smoothedDelay
        historyNext = (historyNext + 1) % Self.windowSize
        historyCount = min(historyCount + 1, Self.windowSize)
        var trend = previousTrend
        if historyCount == Self.windowSize, let slope = linearFitSlope() { trend = slope }
        detect(trend: trend, sendDeltaMs: sendDeltaMs, nowMs: arrivalMs)
    }

    /// Forgets everything, the threshold back at 12.5 (stream timeout), as libwebrtc recreates its detector.
    mutating func reset() { self = TrendlineEstimator() }

    private func linearFitSlope() -> Double? {
        var sumX = 0.0
        var sumY = 0.0
        for index in 0..<historyCount {
            sumX += historyX[index]
            sumY += historyY[index]
        }
        let meanX = sumX / Double(historyCount)
        let meanY = sumY / Double(historyCount)
        var numerator = 0.0
        var denominator = 0.0
        for index in 0..<historyCount {
            let dx = historyX[index] - meanX
            numerator += dx * (historyY[index] - meanY)
            denominator += dx * dx
        }
        guard denominator != 0 else { return nil }
        let slope = numerator / denominator
        return slope.isFinite ? slope : nil
    }

    private mutating func detect(trend: Double, sendDeltaMs: Double, nowMs: Double) {
        guard numberOfDeltas >= 2 else {
            state = .normal
            return
        }
        let modified = Double(min(numberOfDeltas, Self.minNumberOfDeltas)) * trend * Self.thresholdGain
        modifiedTrend = modified
        if modified > threshold {
            if timeOverUsingMs == -1 {
                timeOverUsingMs = sendDeltaMs / 2
            } else {
                timeOverUsingMs += sendDeltaMs
            }
            overuseCounter += 1
            if timeOverUsingMs > Self.overusingTimeThresholdMs && overuseCounter > 1 && trend >= previousTrend {
                timeOverUsingMs = 0
                overuseCounter = 0
                state = .overusing
            }
        } else if modified < -threshold {
            timeOverUsingMs = -1
            overuseCounter = 0
            state = .underusing
        } else {
            timeOverUsingMs = -1
            overuseCounter = 0
            state = .normal
        }
        previousTrend = trend
        updateThreshold(modifiedTrend: modified, nowMs: nowMs)
    }

    private mutating func updateThreshold(modifiedTrend: Double, nowMs: Double) {
        let last = lastThresholdUpdateMs ?? nowMs
        lastThresholdUpdateMs = nowMs
        let magnitude = abs(modifiedTrend)
        if magnitude > threshold + Self.maxAdaptOffsetMs { return }
        let k = magnitude < threshold ? Self.kDown : Self.kUp
        let elapsed = min(max(nowMs - last, 0), Self.maxTimeDeltaMs)
        let next = threshold + k * (magnitude - threshold) * elapsed
        threshold = min(max(next.finiteOr(threshold), Self.thresholdRange.lowerBound), Self.thresholdRange.upperBound)
    }
}
