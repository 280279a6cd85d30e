import CaptureCore
import CoreMetrics
import MetricsTestKit
import Testing

// The capturer is given its own TestMetrics factory (CameraVideoCapturer.metricsFactory), so nothing is bootstrapped
// process-wide and other suites are not disturbed.
@Suite("CameraVideoCapturer metrics")
struct CapturerMetricsTests {
    @Test("swift-metrics counters match the capturer's statistics, with the device id as a dimension")
    func counters() async throws {
        let metrics = TestMetrics()
        let capturer = CameraVideoCapturer()
        capturer.isPaced = false
        capturer.metricsFactory = metrics
        let stream = capturer.frames(bufferingNewest: 64)
        let configuration = try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        var received = 0
        for await _ in stream {
            received += 1
            if received == 20 { break }
        }
        await capturer.stopCapture()
        let statistics = capturer.statistics
        let device = [("device", configuration.device.id)]

        let captured = try metrics.expectCounter("camera_capturer_frames_captured", device)
        let delivered = try metrics.expectCounter("camera_capturer_frames_delivered", device)
        #expect(captured.totalValue == Int64(statistics.framesCaptured))
        #expect(delivered.totalValue == Int64(statistics.framesDelivered))
        #expect(statistics.framesDelivered >= 20)
        let adjusted = try metrics.expectCounter("camera_capturer_timestamps_adjusted", device)
        #expect(adjusted.totalValue == Int64(statistics.timestampsAdjusted))
        for reason in FrameDropReason.allCases {
            let dropped = try metrics.expectCounter(
                "camera_capturer_frames_dropped", device + [("reason", reason.rawValue)])
            #expect(dropped.totalValue >= 0)
        }
        #expect(metrics.counterTotal(label: "camera_capturer_frames_dropped") == Int64(statistics.framesDropped))
        let latency = try metrics.expectTimer("camera_capturer_delivery_latency", device)
        #expect(latency.values.count == statistics.framesDelivered)
        #expect(latency.values.allSatisfy { $0 >= 0 })
    }

    @Test("a scope labels metrics camera_<component>_<name> with the device dimension (the sender's extension point)")
    func scope() throws {
        let metrics = TestMetrics()
        let scope = CaptureMetricsScope(component: "rtp_sender", deviceID: "cam0", factory: metrics)
        scope.counter("packets").increment(by: 3)
        scope.gauge("bitrate").record(1_500)
        scope.timer("rtt").recordMilliseconds(20)
        scope.recorder("packet_size").record(1_200)
        #expect(try metrics.expectCounter("camera_rtp_sender_packets", [("device", "cam0")]).totalValue == 3)
        #expect(try metrics.expectGauge("camera_rtp_sender_bitrate", [("device", "cam0")]).lastValue == 1_500)
        #expect(try metrics.expectTimer("camera_rtp_sender_rtt", [("device", "cam0")]).lastValue == 20_000_000)
        #expect(try metrics.expectRecorder("camera_rtp_sender_packet_size", [("device", "cam0")]).lastValue == 1_200)
    }
}
