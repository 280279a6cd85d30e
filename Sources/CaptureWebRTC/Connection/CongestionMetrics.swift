internal import CaptureCore
internal import CoreMetrics

/// A sending connection's congestion-control metrics (component `congestion`, see CaptureCore's Metrics article): the
/// estimate, the encoder's target, the acknowledged and pacing rates, the pacer's queue, bytes in flight, and the
/// padding and probes sent. Made once per connection, updated as the pacer drains and the estimate moves: nothing is
/// allocated per update. A no-op until the app bootstraps a swift-metrics backend.
final class CongestionMetrics: Sendable {
    private let estimate: Gauge
    private let target: Gauge
    private let acknowledged: Gauge
    private let pacingRate: Gauge
    private let queueMilliseconds: Gauge
    private let queueBytes: Gauge
    private let inFlight: Gauge
    private let droppingFrames: Gauge
    private let paddingBytes: Counter
    private let probeClusters: Counter

    init(deviceID: String, factory: any MetricsFactory = MetricsSystem.factory) {
        let scope = CaptureMetricsScope(component: "congestion", deviceID: deviceID, factory: factory)
        estimate = scope.gauge("estimate_bps")
        target = scope.gauge("target_kbps")
        acknowledged = scope.gauge("acknowledged_bps")
        pacingRate = scope.gauge("pacing_bps")
        queueMilliseconds = scope.gauge("pacer_queue_ms")
        queueBytes = scope.gauge("pacer_queue_bytes")
        inFlight = scope.gauge("bytes_in_flight")
        droppingFrames = scope.gauge("dropping_frames")
        paddingBytes = scope.counter("padding_bytes")
        probeClusters = scope.counter("probe_clusters")
    }

    /// The estimator's figures, after it moved.
    func estimated(bitrate: Int, acknowledged acked: Int?, targetKbps: Int, bytesInFlight: Int) {
        estimate.record(bitrate)
        target.record(targetKbps)
        if let acked { acknowledged.record(acked) }
        inFlight.record(bytesInFlight)
    }

    /// The pacer's figures, after a drain.
    func paced(rate: Int, queueDelay: Duration, queuedBytes: Int, dropping: Bool) {
        pacingRate.record(rate)
        queueMilliseconds.record(queueDelay.inMilliseconds)
        queueBytes.record(queuedBytes)
        droppingFrames.record(dropping ? 1 : 0)
    }

    /// `bytes` of padding sent for probes.
    func padded(_ bytes: Int) { paddingBytes.increment(by: bytes) }

    /// A probe cluster handed to the pacer.
    func probed() { probeClusters.increment() }
}
