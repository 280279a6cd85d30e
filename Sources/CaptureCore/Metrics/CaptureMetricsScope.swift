public import CoreMetrics

/// The naming scheme of the package's metrics, and the factory they are made with: every metric is labelled
/// `camera_<component>_<name>` and carries the camera's id as the `device` dimension.
///
/// The capturer reports as component `capturer`, the VP8 encoding consumer as `vp8_encoder` and a call's RTP sender as
/// `rtp_sender` (the metric names are listed in the Metrics article). Another stage reports through the same scheme
/// by making its metrics from a scope of its own, once per session, and updating them per packet:
///
/// ```swift
/// let scope = CaptureMetricsScope(component: "rtp_sender", deviceID: device.id)
/// let packets = scope.counter("packets")
/// let rtt = scope.timer("rtt")
/// packets.increment()
/// rtt.recordNanoseconds(rttNs)
/// ```
///
/// Metrics go to `MetricsSystem.factory` unless a factory is given; until the app bootstraps a backend that is
/// swift-metrics' no-op factory, and updating a metric costs a call and allocates nothing.
public struct CaptureMetricsScope: Sendable {
    /// The part of the pipeline that reports (`capturer`, `vp8_encoder`, …).
    public let component: String
    /// The dimensions every metric of the scope carries (`device` first).
    public let dimensions: [(String, String)]
    /// Where the metrics are made.
    public let factory: any MetricsFactory

    /// Creates a scope for `component` on the camera `deviceID`.
    public init(component: String, deviceID: String, factory: any MetricsFactory = MetricsSystem.factory) {
        self.component = component
        self.dimensions = [("device", deviceID)]
        self.factory = factory
    }

    /// The full label of the metric `name`: `camera_<component>_<name>`.
    public func label(_ name: String) -> String { "camera_\(component)_\(name)" }

    /// A counter `camera_<component>_<name>` with the scope's dimensions plus `extra`.
    public func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
        Counter(label: label(name), dimensions: dimensions + extra, factory: factory)
    }

    /// A timer `camera_<component>_<name>` with the scope's dimensions.
    public func timer(_ name: String) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: label(name), dimensions: dimensions, factory: factory)
    }

    /// A gauge `camera_<component>_<name>` (a recorder that keeps the last value) with the scope's dimensions.
    public func gauge(_ name: String) -> Gauge {
        Gauge(label: label(name), dimensions: dimensions, factory: factory)
    }

    /// A recorder `camera_<component>_<name>` with the scope's dimensions.
    public func recorder(_ name: String) -> Recorder {
        Recorder(label: label(name), dimensions: dimensions, factory: factory)
    }
}
