/// The AIMD controller's memory of where the link's capacity was: an average of the throughput measured at each
/// overuse, with its deviation.
///
/// ## What it is
///
/// Each overuse contributes the acknowledged throughput at that moment (weight 0.05); the normalised variance
/// (`error² / estimate`, kbit/s, clamped to [0.4, 2.5]) gives bounds `estimate ± 3·√(variance·estimate)`. While an
/// estimate exists the AIMD controller increases additively (it is near the capacity); a throughput outside the
/// bounds means the link changed, and the estimate is dropped so that the increase is multiplicative again.
///
/// ## Specification and libwebrtc
///
/// draft-ietf-rmcat-gcc-02 §5.5 keeps "the average and variance of the incoming bitrate at overuse"; this follows
/// libwebrtc's `link_capacity_estimator.cc` (kbit/s units, the same weights and clamps).
///
/// ## Threading
///
/// A plain value, not thread-safe.
struct LinkCapacityEstimator {
    /// The estimate in kbit/s, or nil when unknown.
    private(set) var estimateKbps: Double?
    private var deviationKbps = 0.4

    /// Whether an estimate exists.
    var hasEstimate: Bool { estimateKbps != nil }

    /// The upper bound in bit/s (infinite without an estimate).
    var upperBound: Double {
        guard let estimateKbps else { return .infinity }
        return (estimateKbps + 3 * deviationEstimateKbps) * 1000
    }

    /// The lower bound in bit/s (zero without an estimate).
    var lowerBound: Double {
        guard let estimateKbps else { return 0 }
        return max(0, estimateKbps - 3 * deviationEstimateKbps) * 1000
    }

    /// The estimate in bit/s, or nil.
    var estimate: Double? { estimateKbps.map { $0 * 1000 } }

    private var deviationEstimateKbps: Double {
        guard let estimateKbps else { return 0 }
        return (deviationKbps * estimateKbps).squareRoot()
    }

    /// Records the throughput (bit/s) measured when an overuse was detected.
    mutating func onOveruseDetected(throughput: Double) { update(sample: throughput, alpha: 0.05) }

    /// Forgets the estimate: the link changed.
    mutating func reset() { estimateKbps = nil }

    private mutating func update(sample: Double, alpha: Double) {
        guard sample.isFinite, sample >= 0 else { return }
        let sampleKbps = sample / 1000
        let estimate = estimateKbps.map { (1 - alpha) * $0 + alpha * sampleKbps } ?? sampleKbps
        let norm = max(estimate, 1)
        let error = estimate - sampleKbps
        let deviation = (1 - alpha) * deviationKbps + alpha * error * error / norm
        deviationKbps = min(max(deviation.finiteOr(0.4), 0.4), 2.5)
        estimateKbps = estimate
    }
}
