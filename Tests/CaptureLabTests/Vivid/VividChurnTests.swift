import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureV4L2

/// Start/stop churn through the capturer on a real V4L2 driver: vivid in the QEMU guest, where this suite runs alone
/// (Scripts/vivid-guest.sh), so the process's descriptor, mapping and thread counts are this suite's.
@Suite(
    "Vivid churn", .tags(.lab, .vividGuest), .selectedByTags, .serialized,
    .enabled(
        if: VividGuest.enabled,
        "needs the vivid V4L2 driver: runs only inside the vivid QEMU guest (CAPTURE_VIVID_GUEST=1)"))
struct VividChurnTests {
    @Test("100 start/stop cycles on vivid, each with a frame: the device is released every time, nothing leaks")
    func startStopCycles() async throws {
        let device = try V4L2Backend.describe(node: VividGuest.node)
        let format = try #require(
            device.formats.first { $0.pixelFormat == .yuyv && $0.size == .discrete(VividGuest.vga) },
            "vivid has no YUYV 640x480")
        let fps = CaptureRules.frameRate(for: format.frameRates, limit: 30)
        let capturer = CameraVideoCapturer(provider: CameraProvider(backends: [V4L2Backend()]))
        // One cycle first, so that what stays for the process's life (pools, threads of the cooperative pool) is in
        // the baseline.
        try await Self.cycle(capturer, device, format, fps)
        let baseline = ProcessResources.now()
        for cycle in 0..<100 {
            try await Self.cycle(capturer, device, format, fps)
            #expect(capturer.captureState == .idle, "cycle \(cycle)")
        }
        let after = await ProcessResources.settle(to: baseline)
        print("vivid churn: 100 cycles, resources \(baseline) -> \(after)")
        #expect(after.isWithin(baseline), "resources went from \(baseline) to \(after)")
    }

    /// Starts, waits for one frame (5 s at most), stops.
    static func cycle(
        _ capturer: CameraVideoCapturer, _ device: CaptureDevice, _ format: CaptureFormat, _ fps: Double
    ) async throws {
        let stream = capturer.frames(bufferingNewest: 1)
        try await capturer.startCapture(device: device, format: format, fps: fps)
        let first = Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() != nil
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(5))
            first.cancel()
        }
        let gotFrame = await first.value
        timeout.cancel()
        #expect(gotFrame, "no frame within 5 s of starting")
        await capturer.stopCapture()
    }
}
