import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureV4L2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Processes and the vivid module, for the hot-plug suite. Uses ``SpawnedProcess``: Foundation's `Process` hangs in
/// the guest.
enum VividPlug {
    /// Spawns `argv` with standard output and error to /dev/null; returns its pid.
    static func spawn(_ argv: [String]) throws -> pid_t {
        try SpawnedProcess.start(argv, output: .null, error: .null)
    }

    /// Runs `argv` to completion; returns its exit status.
    static func run(_ argv: [String]) throws -> Int32 { SpawnedProcess.waitForExit(try spawn(argv)) }

    /// The vivid module file, from /etc/vivid-vm/modules ("<path> <name>" lines).
    static func modulePath() throws -> String {
        let text = try String(contentsOfFile: "/etc/vivid-vm/modules", encoding: .utf8)
        let line = try #require(
            text.split(separator: "\n").first { $0.hasSuffix(" vivid") }, "vivid is not in /etc/vivid-vm/modules")
        return String(line.split(separator: " ")[0])
    }

    /// The options vivid was loaded with at boot.
    static func bootOptions() throws -> [String] {
        try String(contentsOfFile: "/etc/vivid-vm/vivid-options", encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).map(String.init)
    }

    static func rmmod() throws {
        let status = try run(["rmmod", "vivid"])
        try #require(status == 0, "rmmod vivid failed with status \(status)")
    }

    static func insmod(_ options: [String]) throws {
        let status = try run(["insmod", try modulePath()] + options)
        try #require(status == 0, "insmod vivid \(options) failed with status \(status)")
    }

    /// Waits until `node` describes as a capture device (5 s at most).
    static func waitForNode(_ node: String) async throws -> CaptureDevice {
        for _ in 0..<500 {
            if let device = try? V4L2Backend.describe(node: node) { return device }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try V4L2Backend.describe(node: node)
    }

    /// Sets the menu control `name` of `node` to the item named `item`.
    static func setMenu(_ node: String, _ name: String, _ item: String) throws {
        let handle = try V4L2Handle.open(node, driver: LibV4L2Driver())
        defer { handle.close() }
        let info = try #require(try handle.controls().first { $0.name == name }, "no control \(name) on \(node)")
        let value = try #require(try handle.menuItems(info).first { $0.value == item }?.key, "no item \(item)")
        try handle.setControl(info.id, to: value)
    }

    static func ms(_ ns: UInt64) -> String { String(format: "%.1f ms", Double(ns) / 1e6) }
}

/// The mean luma of a frame's Y plane, sampled on a grid.
func meanLuma(_ frame: VideoFrame) -> Double {
    frame.buffer.withUnsafeBytes(plane: 0) { bytes in
        let plane = frame.buffer.planes[0]
        var sum = 0
        var count = 0
        for row in stride(from: 0, to: plane.rows, by: 16) {
            for column in stride(from: 0, to: plane.rowBytes, by: 16) {
                sum += Int(bytes[row * plane.stride + column])
                count += 1
            }
        }
        return count == 0 ? 0 : Double(sum) / Double(count)
    }
}

/// Records what a capturer tells its delegate, with the time of each frame and its luma.
final class VividHotplugDelegate: CameraVideoCapturerDelegate {
    struct Seen: Sendable {
        var timestampNs: UInt64
        var sequence: UInt64
        var luma: Double
        var atNs: UInt64
    }
    let frames = Locked<[Seen]>([])
    let stops = Locked<[CaptureError?]>([])
    let pauses = Locked<[(CaptureError, UInt64)]>([])
    let resumes = Locked<[(CaptureConfiguration, UInt64)]>([])

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let seen = Seen(
            timestampNs: frame.timestampNs, sequence: frame.sequenceNumber, luma: meanLuma(frame),
            atNs: MonotonicClock.nowNs())
        frames.withLock { $0.append(seen) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        stops.withLock { $0.append(error) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didPauseWith error: CaptureError) {
        pauses.withLock { $0.append((error, MonotonicClock.nowNs())) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didResumeWith configuration: CaptureConfiguration) {
        resumes.withLock { $0.append((configuration, MonotonicClock.nowNs())) }
    }
    var count: Int { frames.withLock { $0.count } }

    /// Waits until `condition` holds (`seconds` at most); returns whether it did.
    func until(seconds: Double = 20, _ condition: (VividHotplugDelegate) -> Bool) async -> Bool {
        for _ in 0..<Int(seconds * 100) {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(self)
    }
}

/// Hot-plug, auto-resume, camera switching and busy-device diagnosis against vivid in the QEMU guest. Unloads and
/// reloads vivid; every test leaves it loaded with the boot options and /dev/video0 present, for the suites after it.
@Suite(
    "Vivid hot-plug", .tags(.lab, .vividGuest), .selectedByTags, .serialized,
    .enabled(
        if: VividGuest.enabled,
        "needs the vivid V4L2 driver: runs only inside the vivid QEMU guest (CAPTURE_VIVID_GUEST=1)"))
struct VividHotplugTests {
    static let node = VividGuest.node

    @Test("1. a node streamed by `v4l2-ctl --stream-mmap` is deviceBusy naming that pid and v4l2-ctl")
    func test1_busyNamesHolder() async throws {
        let pid = try VividPlug.spawn(["v4l2-ctl", "-d", Self.node, "--stream-mmap", "--stream-count=100000"])
        defer {
            SpawnedProcess.killAndWait(pid)
        }
        let device = try V4L2Backend.describe(node: Self.node)
        var busy: CaptureError?
        // Until v4l2-ctl streams, our own start may succeed; then stop and try again.
        for _ in 0..<100 where busy == nil {
            let (session, _) = try VividGuest.session(device, events: VividRecorder().events)
            do throws(CaptureError) {
                try await session.start()
                await session.stop()
            } catch {
                busy = error
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let error = try #require(busy, "v4l2-ctl never made the node busy")
        print("busy: \(error)")
        #expect(error.code == .deviceBusy)
        #expect(error.holders.contains(DeviceHolder(pid: pid, command: "v4l2-ctl")), "\(error.holders)")
        #expect(error.message.contains("in use by pid \(pid) (v4l2-ctl)"))
    }

    @Test("2. rmmod vivid then insmod: removed, then added (same id), each within 1 s")
    func test2_removedThenAdded() async throws {
        let monitor = DeviceMonitor()
        let before = try #require(monitor.devices().first { $0.node == Self.node }, "vivid is not listed")
        let events = try monitor.events()
        var iterator = events.makeAsyncIterator()

        let rmmodAt = MonotonicClock.nowNs()
        try VividPlug.rmmod()
        let rmmodDone = MonotonicClock.nowNs()
        let removed = try #require(await iterator.next(), "the event stream ended")
        #expect(removed.kind == .removed)
        #expect(removed.device.id == before.id)
        #expect(removed.device.node == Self.node)

        let insmodAt = MonotonicClock.nowNs()
        try VividPlug.insmod(try VividPlug.bootOptions())
        let insmodDone = MonotonicClock.nowNs()
        let added = try #require(await iterator.next(), "the event stream ended")
        #expect(added.kind == .added)
        #expect(added.device.id == before.id)
        #expect(added.device.node == Self.node)
        #expect(added.device.formats == before.formats)

        let removedLatency = removed.reportedNs - rmmodAt
        let addedLatency = added.reportedNs - insmodAt
        print(
            "monitor: removed \(VividPlug.ms(removedLatency)) after rmmod started (rmmod took "
                + "\(VividPlug.ms(rmmodDone - rmmodAt))); added \(VividPlug.ms(addedLatency)) after insmod started "
                + "(insmod took \(VividPlug.ms(insmodDone - insmodAt)); node usable "
                + "\(VividPlug.ms(added.reportedNs - added.observedNs)) after it appeared)")
        #expect(removedLatency < 1_000_000_000)
        #expect(addedLatency < 1_000_000_000)
    }

    @Test("3. auto-resume: Disconnect pauses the capture; after rmmod + insmod the same camera resumes, frames flow")
    func test3_autoResume() async throws {
        try VividPlug.setMenu(Self.node, "OSD Text Mode", "None")
        let delegate = VividHotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: CameraProvider(backends: [V4L2Backend()]))
        capturer.automaticallyResumes = true
        let stream = capturer.frames(bufferingNewest: 10_000)
        let streamEnded = Locked(false)
        let streamed = Locked(0)
        let consumer = Task {
            for await _ in stream { streamed.withLock { $0 += 1 } }
            streamEnded.withLock { $0 = true }
        }
        let device = try V4L2Backend.describe(node: Self.node)
        let format = try #require(
            device.formats.first { $0.pixelFormat == .yuyv && $0.size == .discrete(VividGuest.vga) })
        let started = try await capturer.startCapture(
            device: device, format: format, fps: CaptureRules.frameRate(for: format.frameRates, limit: 30))
        #expect(await delegate.until { $0.count >= 10 }, "no frames before the disconnect")

        // Disconnect, keeping our control handle open: vivid stays disconnected while anyone holds it.
        let control = try V4L2Handle.open(Self.node, driver: LibV4L2Driver())
        let disconnect = try #require(try control.controls().first { $0.name == "Disconnect" })
        let disconnectAt = MonotonicClock.nowNs()
        try control.setControl(disconnect.id, to: 1)
        #expect(await delegate.until { $0.pauses.withLock { !$0.isEmpty } }, "the capture did not pause")
        let pausedAt = try #require(delegate.pauses.withLock { $0.first })
        #expect(pausedAt.0.code == .deviceDisconnected)
        guard case .paused = capturer.captureState else {
            Issue.record("not paused: \(capturer.captureState)")
            control.close()
            await capturer.stopCapture()
            return
        }
        let beforeGap = delegate.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(delegate.resumes.withLock { $0.isEmpty }, "resumed while vivid was still disconnected")
        #expect(!streamEnded.withLock { $0 }, "the frame stream ended while paused")

        control.close()
        try VividPlug.rmmod()
        let insmodAt = MonotonicClock.nowNs()
        try VividPlug.insmod(try VividPlug.bootOptions())
        #expect(await delegate.until { $0.resumes.withLock { !$0.isEmpty } }, "the capture did not resume")
        #expect(await delegate.until { $0.count >= beforeGap + 10 }, "frames did not flow after resuming")
        let resumed = try #require(delegate.resumes.withLock { $0.first })
        #expect(resumed.0.device.id == started.device.id)
        #expect(resumed.0.format == started.format)
        #expect(resumed.0.granted == started.granted)
        #expect(capturer.captureState == .running)
        let frames = delegate.frames.withLock { $0 }
        #expect(zip(frames.dropFirst(), frames).allSatisfy { $0.timestampNs > $1.timestampNs })
        #expect(zip(frames.dropFirst(), frames).allSatisfy { $0.sequence == $1.sequence + 1 })
        print(
            "auto-resume: paused \(VividPlug.ms(pausedAt.1 - disconnectAt)) after Disconnect; resumed "
                + "\(VividPlug.ms(resumed.1 - insmodAt)) after insmod started, first frame after the gap "
                + "\(VividPlug.ms(frames[beforeGap].atNs - insmodAt)) after it; \(beforeGap) frames before, "
                + "\(frames.count - beforeGap) after; timestamp gap "
                + "\(VividPlug.ms(frames[beforeGap].timestampNs - frames[beforeGap - 1].timestampNs))")

        await capturer.stopCapture()
        await consumer.value
        #expect(streamEnded.withLock { $0 })
        #expect(streamed.withLock { $0 } == delegate.count)
        #expect(delegate.stops.withLock { $0.count } == 1)
        #expect(delegate.stops.withLock { $0.first ?? nil } == nil)
        _ = try await VividPlug.waitForNode(Self.node)
    }

    @Test("4. n_devs=2: switchCamera moves a running capture between the two nodes; no old frame after return")
    func test4_switchCamera() async throws {
        try VividPlug.rmmod()
        try VividPlug.insmod(["n_devs=2", "node_types=0x1,0x1"])
        var restored = false
        defer {
            if !restored {
                _ = try? VividPlug.run(["rmmod", "vivid"])
                _ = try? VividPlug.insmod(try VividPlug.bootOptions())
            }
        }
        let first = try await VividPlug.waitForNode("/dev/video0")
        let second = try await VividPlug.waitForNode("/dev/video1")
        #expect(first.id != second.id)
        // Tell the cameras apart by their picture: black on one, white on the other.
        for (node, pattern) in [("/dev/video0", "100% Black"), ("/dev/video1", "100% White")] {
            try VividPlug.setMenu(node, "OSD Text Mode", "None")
            try VividPlug.setMenu(node, "Test Pattern", pattern)
        }
        let delegate = VividHotplugDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: CameraProvider(backends: [V4L2Backend()]))
        let stream = capturer.frames(bufferingNewest: 10_000)
        let streamEnded = Locked(false)
        let consumer = Task {
            for await _ in stream {}
            streamEnded.withLock { $0 = true }
        }
        let format = try #require(
            first.formats.first { $0.pixelFormat == .yuyv && $0.size == .discrete(VividGuest.vga) })
        let started = try await capturer.startCapture(
            device: first, format: format, fps: CaptureRules.frameRate(for: format.frameRates, limit: 30))
        #expect(await delegate.until { $0.count >= 10 })

        var timings: [String] = []
        var formats: [String] = []
        for (target, dark) in [(second, false), (first, true), (second, false)] {
            let calledAt = MonotonicClock.nowNs()
            let configuration = try await capturer.switchCamera(to: target)
            let returnedAt = MonotonicClock.nowNs()
            let atReturn = delegate.count
            #expect(configuration.device.id == target.id)
            // The rules choose on the new camera for the size and rate the capture asked for (NV12 on vivid).
            let chosen = capturer.selectFormat(
                on: target, for: FormatRequest(target: VividGuest.vga, fpsLimit: started.requestedFPS))
            #expect(configuration.format == chosen?.format)
            #expect(configuration.granted.dimensions == VividGuest.vga)
            formats.append("\(configuration.granted.pixelFormat) \(configuration.granted.dimensions)")
            #expect(await delegate.until { $0.count >= atReturn + 10 }, "no frames from \(target.node ?? "")")
            let frames = delegate.frames.withLock { $0 }
            let after = frames[atReturn...]
            let wrong = after.filter { dark ? $0.luma > 64 : $0.luma < 128 }
            #expect(
                wrong.isEmpty, "\(wrong.count) frames after the switch to \(target.node ?? "") were the other camera's")
            let firstNew = try #require(
                frames.firstIndex { $0.atNs > calledAt && (dark ? $0.luma < 64 : $0.luma > 128) })
            timings.append(
                "\(target.node ?? ""): call \(VividPlug.ms(returnedAt - calledAt)), first frame "
                    + "\(VividPlug.ms(frames[firstNew].atNs - calledAt)) after the call")
        }
        let frames = delegate.frames.withLock { $0 }
        #expect(zip(frames.dropFirst(), frames).allSatisfy { $0.timestampNs > $1.timestampNs })
        #expect(zip(frames.dropFirst(), frames).allSatisfy { $0.sequence == $1.sequence + 1 })
        #expect(!streamEnded.withLock { $0 })
        #expect(delegate.stops.withLock { $0.isEmpty })
        print(
            "switchCamera on vivid (started in YUYV 640x480, switched to \(formats.joined(separator: ", "))): "
                + timings.joined(separator: "; "))
        await capturer.stopCapture()
        await consumer.value
        #expect(streamEnded.withLock { $0 })

        // Leave vivid as the boot loaded it, /dev/video0 present, for the suites after this one.
        try VividPlug.rmmod()
        try VividPlug.insmod(try VividPlug.bootOptions())
        restored = true
        _ = try await VividPlug.waitForNode("/dev/video0")
        #expect(!FileManager.default.fileExists(atPath: "/dev/video1"))
    }
}
