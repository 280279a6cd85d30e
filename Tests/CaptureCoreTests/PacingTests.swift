import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

/// Frame pacing of the synthetic camera through the capturer. Timing-sensitive (Tag.wallClock): `Scripts/test` runs it
/// apart from the parallel suites, so that no other test competes for the two cores, and not under the sanitizers.
@Suite("Pacing", .tags(.wallClock), .selectedByTags, .serialized)
struct PacingTests {
    @Test("640x480@30 for 2 s: count, pacing, timestamps, geometry, rotation; stop ends delivery")
    func pacing() async throws {
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate)
        capturer.deviceOrientation = .portrait
        let configuration = try await capturer.startCapture(target: Dimensions(width: 640, height: 480))
        #expect(configuration.granted.dimensions == Dimensions(width: 640, height: 480))
        #expect(configuration.granted.fps == 30)
        #expect(capturer.captureState == .running)
        try await Task.sleep(for: .seconds(2))
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
        let delivered = delegate.frames.withLock { $0 }
        let countAtStop = delivered.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(delegate.count == countAtStop, "no frame after stopCapture() returned")
        #expect(delegate.stops.withLock { $0.count } == 1)

        // Judge the first 2 s of capture time (by the frames' own timestamps), however late the test task woke up.
        let start = try #require(delivered.first?.timestampNs)
        let frames = delivered.filter { $0.timestampNs - start < 2_000_000_000 }
        #expect(abs(frames.count - 60) <= 6, "frame count \(frames.count) within 10% of 60")
        let intervals = zip(frames.dropFirst(), frames).map { Double($0.timestampNs - $1.timestampNs) / 1e6 }
        #expect(intervals.allSatisfy { $0 > 0 }, "timestamps strictly increase")
        let outliers = intervals.filter { abs($0 - 33.333) > 0.2 * 33.333 }
        #expect(outliers.isEmpty, "every interval within 20% of 33.3 ms; outliers: \(outliers)")
        let mean = intervals.reduce(0, +) / Double(max(intervals.count, 1))
        let jitter = intervals.map { abs($0 - mean) }.max() ?? 0
        // Delivery: when the frames really reached the delegate.
        let delivery = zip(frames.dropFirst(), frames).map { Double($0.deliveredNs - $1.deliveredNs) / 1e6 }
        let deliveryMean = delivery.reduce(0, +) / Double(max(delivery.count, 1))
        let deliveryJitter = delivery.map { abs($0 - deliveryMean) }.max() ?? 0
        #expect(abs(deliveryMean - 33.333) <= 0.1 * 33.333, "mean delivery interval \(deliveryMean) ms")
        print(
            "synthetic 640x480@30 for 2 s: \(frames.count) frames; timestamp interval mean \(mean) ms, max deviation"
                + " \(jitter) ms; delivery interval mean \(deliveryMean) ms, max deviation \(deliveryJitter) ms")
        for frame in frames {
            #expect(frame.dimensions == Dimensions(width: 640, height: 480))
            #expect(frame.format == .nv12)
            #expect(frame.strides == [640, 640])
            #expect(frame.offsets.allSatisfy { $0 % 64 == 0 })
            #expect(frame.rotation == .degrees90)
        }
    }
}
