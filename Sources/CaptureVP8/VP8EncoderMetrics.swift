import CaptureCore
import CoreMetrics

/// The VP8 encoding consumer's metrics (component `vp8_encoder`), made once at creation so that counting a frame
/// allocates nothing.
final class VP8EncoderMetrics: Sendable {
    private let received: Counter
    private let encoded: Counter
    private let keyFrames: Counter
    private let droppedByRateControl: Counter
    private let failures: Counter
    private let bytes: Counter
    private let encodeTime: CoreMetrics.Timer

    init(deviceID: String, factory: any MetricsFactory) {
        let scope = CaptureMetricsScope(component: "vp8_encoder", deviceID: deviceID, factory: factory)
        received = scope.counter("frames_received")
        encoded = scope.counter("frames_encoded")
        keyFrames = scope.counter("key_frames")
        droppedByRateControl = scope.counter("frames_dropped_rate_control")
        failures = scope.counter("failures")
        bytes = scope.counter("bytes")
        encodeTime = scope.timer("encode_time")
    }

    /// One frame went through the encoder in `durationNs`; `output` is what came out (`nil`: rate control dropped
    /// it).
    func frame(durationNs: UInt64, output: EncodedFrame?) {
        received.increment()
        encodeTime.recordNanoseconds(Int64(clamping: durationNs))
        guard let output else {
            droppedByRateControl.increment()
            return
        }
        encoded.increment()
        bytes.increment(by: output.bytes.count)
        if output.isKeyFrame { keyFrames.increment() }
    }

    /// A frame failed to encode or to be written.
    func failed() {
        failures.increment()
    }
}
