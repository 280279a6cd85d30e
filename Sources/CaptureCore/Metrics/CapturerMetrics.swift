import CoreMetrics

/// The capturer's metrics for one capture session (component `capturer`), made once at start so that counting a
/// frame allocates nothing.
final class CapturerMetrics: Sendable {
    private let captured: Counter
    private let delivered: Counter
    private let timestampsAdjusted: Counter
    private let droppedCorrupt: Counter
    private let droppedShort: Counter
    private let droppedConversion: Counter
    private let droppedPoolExhausted: Counter
    private let droppedRateAdaptation: Counter
    private let skippedByDevice: Counter
    private let deliveryLatency: CoreMetrics.Timer

    init(deviceID: String, factory: any MetricsFactory) {
        let scope = CaptureMetricsScope(component: "capturer", deviceID: deviceID, factory: factory)
        captured = scope.counter("frames_captured")
        delivered = scope.counter("frames_delivered")
        timestampsAdjusted = scope.counter("timestamps_adjusted")
        func dropped(_ reason: FrameDropReason) -> Counter {
            scope.counter("frames_dropped", [("reason", reason.rawValue)])
        }
        droppedCorrupt = dropped(.corruptBuffer)
        droppedShort = dropped(.shortBuffer)
        droppedConversion = dropped(.conversionFailed)
        droppedPoolExhausted = dropped(.poolExhausted)
        droppedRateAdaptation = dropped(.rateAdaptation)
        skippedByDevice = scope.counter("frames_skipped_by_device")
        deliveryLatency = scope.timer("delivery_latency")
    }

    func frameCaptured(timestampAdjusted: Bool) {
        captured.increment()
        if timestampAdjusted { timestampsAdjusted.increment() }
    }

    /// A frame was handed to the delegate and streams; `latencyNs` is capture timestamp → hand-over.
    func frameDelivered(latencyNs: UInt64) {
        delivered.increment()
        deliveryLatency.recordNanoseconds(Int64(clamping: latencyNs))
    }

    func frameDropped(_ reason: FrameDropReason) {
        switch reason {
        case .corruptBuffer: droppedCorrupt.increment()
        case .shortBuffer: droppedShort.increment()
        case .conversionFailed: droppedConversion.increment()
        case .poolExhausted: droppedPoolExhausted.increment()
        case .rateAdaptation: droppedRateAdaptation.increment()
        }
    }

    /// The device skipped `count` frames (a gap in its sequence numbers).
    func framesSkippedByDevice(_ count: Int) {
        skippedByDevice.increment(by: Int64(count))
    }
}
