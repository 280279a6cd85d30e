import CaptureCore
import CaptureTestSupport
import CaptureVP8
import CoreMetrics
import MetricsTestKit
import Testing

// The consumer is given its own TestMetrics factory, so nothing is bootstrapped process-wide.
@Suite("VP8EncodingConsumer metrics")
struct ConsumerMetricsTests {
    @Test("swift-metrics counters and the encode timer match the consumer's statistics, per device")
    func counters() throws {
        let metrics = TestMetrics()
        let consumer = try VP8EncodingConsumer(
            configuration: VP8EncoderConfiguration(targetBitrateKbps: 50), deviceID: "cam0", metricsFactory: metrics)
        let size = Dimensions(width: 640, height: 480)
        for index in 0..<30 {
            if index == 15 { consumer.requestKeyFrame() }
            consumer.encode(TestMedia.noiseFrame(size, index: index))
        }
        let statistics = try consumer.finish()
        let device = [("device", "cam0")]
        func total(_ name: String) throws -> Int {
            Int(try metrics.expectCounter("camera_vp8_encoder_\(name)", device).totalValue)
        }
        #expect(try total("frames_received") == statistics.framesReceived)
        #expect(try total("frames_encoded") == statistics.framesEncoded)
        #expect(try total("key_frames") == statistics.keyFrames)
        #expect(try total("frames_dropped_rate_control") == statistics.framesDroppedByRateControl)
        #expect(try total("bytes") == statistics.encodedBytes)
        #expect(statistics.framesReceived == 30 && statistics.keyFrames >= 1 && statistics.encodedBytes > 0)
        #expect(statistics.framesDroppedByRateControl > 0, "noise at 50 kbit/s makes rate control drop frames")
        let encodeTime = try metrics.expectTimer("camera_vp8_encoder_encode_time", device)
        #expect(encodeTime.values.count == 30 && encodeTime.values.allSatisfy { $0 > 0 })
        #expect(try total("failures") == 0 && statistics.failures == 0)
    }
}
