import Testing

@testable import CaptureCall

@Suite("LossBasedBitrateEstimator: WebRTC's classic loss-based rule")
struct LossBasedBitrateEstimatorTests {
    @Test("above 10 % loss the rate falls by half the loss; under 2 % it grows 8 % at most once a second")
    func rule() {
        var estimator = LossBasedBitrateEstimator()
        #expect(estimator.update(fractionLost: 0.2, currentKbps: 1_000, nowNs: 0) == 900)
        #expect(estimator.update(fractionLost: 0.05, currentKbps: 900, nowNs: 100_000_000) == nil, "2–10 %: hold")
        #expect(estimator.update(fractionLost: 0, currentKbps: 900, nowNs: 200_000_000) == 973)
        #expect(estimator.update(fractionLost: 0, currentKbps: 973, nowNs: 700_000_000) == nil, "once a second")
        #expect(estimator.update(fractionLost: 0, currentKbps: 973, nowNs: 1_300_000_000) == 1_051)
        for step in 0..<50 { _ = estimator.update(fractionLost: 0.5, currentKbps: 0, nowNs: UInt64(step)) }
        #expect(estimator.estimateKbps == estimator.minimumKbps, "never below the minimum")
    }
}
