import CaptureTestSupport
import Foundation
import Testing

/// `capture` keeps nothing per frame (no frame copies, no encoded bytes without a file), so its peak RSS does not
/// grow with the capture's length. Two child runs of the built probe, 30 and 300 unpaced frames, report their own
/// VmHWM (`peakRSSKiB`); the longer run may use at most 15 % more.
@Suite(
    "capturer-probe capture memory", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"),
    .enabled(
        if: FileManager.default.fileExists(atPath: "/proc/self/status"), "/proc/self/status (VmHWM) is Linux-only"),
    .disabled(
        if: Sanitizers.addressSanitizerIsActive,
        "under AddressSanitizer peak RSS measures its quarantine of freed memory, not ours (run without it)"))
struct MemoryGrowthTests {
    @Test(
        "peak RSS of 300 frames is within 15 % of that of 30 frames", arguments: ["640x480", "1280x720", "1920x1080"])
    func flat(size: String) async throws {
        func peak(frames: Int) async throws -> Int {
            let result = try await Probe.run(
                ["capture", "-d", "synthetic", "--target", size, "--frames", "\(frames)", "--unpaced", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try result.json()
            #expect(json["framesCaptured"] as? Int ?? 0 >= frames)
            return try #require(json["peakRSSKiB"] as? Int)
        }
        let short = try await peak(frames: 30)
        let long = try await peak(frames: 300)
        print("capture \(size): VmHWM \(short) KiB for 30 frames, \(long) KiB for 300 frames")
        #expect(Double(long) <= Double(short) * 1.15, "VmHWM \(short) KiB → \(long) KiB")
    }
}
