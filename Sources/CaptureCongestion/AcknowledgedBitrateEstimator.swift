/// The throughput the receiver acknowledged: bytes of received packets per time on the receiver's clock, smoothed.
///
/// ## What it is
///
/// Received bytes are summed over windows of 150 ms of arrival time (500 ms for the first sample); each window's
/// rate is a sample, combined with the estimate by a scalar Bayesian update whose sample uncertainty grows with the
/// sample's distance from the estimate (`10·|estimate − sample| / estimate`, squared) and whose prediction variance
/// grows by 5 per sample: steady rates move the estimate slowly, a sustained change moves it within a few windows.
///
/// ## libwebrtc
///
/// Follows `acknowledged_bitrate_estimator.cc` and `bitrate_estimator.cc` (their defaults, kbit/s units, initial
/// variance 50). There is no ALR handling (camera video).
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct AcknowledgedBitrateEstimator {
    static let initialWindowMs: Int64 = 500
    static let windowMs: Int64 = 150
    static let uncertaintyScale = 10.0

    private var sumBytes = 0
    private var currentWindowMs: Int64 = 0
    private var previousMs: Int64?
    private var estimateKbps: Double?
    private var variance = 50.0

    /// The estimate in bit/s, or nil before the first window completed.
    var bitrate: Double? {
        guard let estimateKbps, estimateKbps > 0 else { return nil }
        return estimateKbps * 1000
    }

    /// Adds one received packet of `size` bytes that arrived at `arrival` (ns, receiver's clock).
    mutating func update(arrival: Int64, size: Int) {
        let nowMs = arrival / Nanoseconds.perMillisecond
        let window = estimateKbps == nil ? Self.initialWindowMs : Self.windowMs
        guard let sample = updateWindow(nowMs: nowMs, bytes: max(0, size), window: window) else { return }
        guard let estimate = estimateKbps else {
            estimateKbps = sample
            return
        }
        let uncertainty = Self.uncertaintyScale * abs(estimate - sample) / max(estimate, 1e-9)
        let sampleVariance = uncertainty * uncertainty
        let predictedVariance = variance + 5
        let denominator = sampleVariance + predictedVariance
        let next = (sampleVariance * estimate + predictedVariance * sample) / denominator
        estimateKbps = max(0, next.finiteOr(estimate))
        variance = (sampleVariance * predictedVariance / denominator).finiteOr(50)
    }

    private mutating func updateWindow(nowMs: Int64, bytes: Int, window: Int64) -> Double? {
        if let previous = previousMs, nowMs < previous {
            previousMs = nil
            sumBytes = 0
            currentWindowMs = 0
        }
        if let previous = previousMs {
            let elapsed = Nanoseconds.difference(nowMs, previous)
            currentWindowMs = Nanoseconds.sum(currentWindowMs, elapsed)
            if elapsed > window {
                sumBytes = 0
                currentWindowMs %= window
            }
        }
        previousMs = nowMs
        var sample: Double?
        if currentWindowMs >= window {
            sample = 8 * Double(sumBytes) / Double(window)
            currentWindowMs -= window
            sumBytes = 0
        }
        sumBytes = sumBytes &+ bytes
        return sample
    }
}
