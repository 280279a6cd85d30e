import CaptureCore
import CaptureTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

@testable import CaptureV4L2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The device monitor on a scratch directory standing in for `/dev`: real inotify events on real files, described
/// through the fake V4L2 driver (which serves the nodes by path whatever the files are).
@Suite("Device monitor (inotify)", .serialized)
struct DeviceMonitorTests {
    final class Fixture: Sendable {
        let directory: String
        let driver = FakeV4L2Driver()
        let monitor: DeviceMonitor

        init(settle: Duration = .seconds(1), udevControl: String? = nil, udevData: String? = nil) throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent("monitor-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let scanner = DeviceScanner(driver: driver, canConvert: FrameConversion.libyuv.canConvert)
            monitor = DeviceMonitor(
                scanner: scanner, directory: directory, settleTimeout: settle,
                udevControl: udevControl ?? directory + "/no-udev", udevData: udevData ?? directory + "/no-udev-data",
                logger: Logger(label: "test"))
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func node(_ name: String) -> String { directory + "/" + name }

        /// Makes the fake serve `name` (a webcam on `bus`), then creates the file (the inotify event).
        func plug(_ name: String, bus: String, createFile: Bool = true) {
            var device = FakeCamera.webcam()
            device.bus = bus
            driver.state.withLock { $0.devices[node(name)] = device }
            if createFile { _ = FileManager.default.createFile(atPath: node(name), contents: nil) }
        }

        func unplug(_ name: String) {
            try? FileManager.default.removeItem(atPath: node(name))
            driver.state.withLock { $0.devices[node(name)] = nil }
        }
    }

    /// Collects events in a task.
    final class Collector: Sendable {
        let events = Locked<[DeviceEvent]>([])
        let task: Task<Void, Never>
        init(_ stream: AsyncStream<DeviceEvent>) {
            let events = self.events
            task = Task { for await event in stream { events.withLock { $0.append(event) } } }
        }
        func wait(for count: Int, seconds: Double = 3) async -> [DeviceEvent] {
            for _ in 0..<Int(seconds * 100) where events.withLock({ $0.count }) < count {
                try? await Task.sleep(for: .milliseconds(10))
            }
            return events.withLock { $0 }
        }
    }

    /// The process's inotify descriptors.
    static func openDescriptors() -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify"
        }.count
    }

    @Test("a node created is reported added (with its stable id), deleted is reported removed with that id")
    func addedAndRemoved() async throws {
        let fixture = try Fixture()
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        fixture.plug("video3", bus: "usb-0000:00:14.0-3")
        var events = await collector.wait(for: 1)
        try #require(events.count == 1)
        #expect(events[0].kind == .added)
        #expect(events[0].device.id == "usb-0000:00:14.0-3")
        #expect(events[0].device.node == fixture.node("video3"))
        #expect(events[0].reportedNs >= events[0].observedNs)
        print(
            "monitor (host): added reported \(Double(events[0].reportedNs - events[0].observedNs) / 1e6) ms after the event"
        )

        fixture.unplug("video3")
        events = await collector.wait(for: 2)
        try #require(events.count == 2)
        #expect(events[1].kind == .removed)
        #expect(events[1].device.id == "usb-0000:00:14.0-3")
    }

    @Test("a node that cannot be opened yet (permission pending) is reported only once it can be, after its chmod")
    func waitsForPermission() async throws {
        let fixture = try Fixture(settle: .seconds(5))
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        let node = fixture.node("video4")
        fixture.driver.failOpen(node, with: .permissionDenied)
        fixture.plug("video4", bus: "usb-1")
        try await Task.sleep(for: .milliseconds(300))
        #expect(collector.events.withLock { $0.isEmpty }, "reported before it could be opened")
        #expect(fixture.driver.count("VIDIOC_QUERYCAP") == 0)
        fixture.driver.state.withLock { $0.openFailures[node] = nil }
        chmod(node, 0o660)  // What udev does; IN_ATTRIB makes the monitor try at once.
        let events = await collector.wait(for: 1)
        #expect(events.map(\.kind) == [.added])
        #expect(events.first?.device.id == "usb-1")
    }

    @Test("a known node whose description changes (udev's chmod, a new by-id link) is reported changed")
    func changed() async throws {
        let fixture = try Fixture()
        fixture.plug("video2", bus: "usb-2")
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        // Same description: an attribute change alone reports nothing.
        chmod(fixture.node("video2"), 0o640)
        try await Task.sleep(for: .milliseconds(200))
        #expect(collector.events.withLock { $0.isEmpty })
        // udev adds the by-id link that gives the camera its stable id, and sets the node's group.
        fixture.driver.link("usb-Vendor_Camera-video-index0", to: fixture.node("video2"))
        chmod(fixture.node("video2"), 0o660)
        let events = await collector.wait(for: 1)
        #expect(events.map(\.kind) == [.changed])
        #expect(events.first?.device.id == "usb-Vendor_Camera-video-index0")
    }

    @Test("a node that never becomes usable is given up after the settle time, and nothing is reported")
    func givesUp() async throws {
        let fixture = try Fixture(settle: .milliseconds(200))
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        // video5: the fake serves no such node; vbi0: not a video node.
        _ = FileManager.default.createFile(atPath: fixture.node("video5"), contents: nil)
        _ = FileManager.default.createFile(atPath: fixture.node("vbi0"), contents: nil)
        try await Task.sleep(for: .milliseconds(500))
        #expect(collector.events.withLock { $0.isEmpty })
        // A camera after that is still reported.
        fixture.plug("video6", bus: "usb-6")
        #expect(await collector.wait(for: 1).map(\.device.id) == ["usb-6"])
    }

    @Test("cameras present at the start are not reported added, but their removal is, with their id")
    func presentAtStart() async throws {
        let fixture = try Fixture()
        fixture.plug("video0", bus: "platform:present")
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        #expect(fixture.monitor.devices().map(\.id) == ["platform:present"])
        fixture.unplug("video0")
        let events = await collector.wait(for: 1)
        #expect(events.map(\.kind) == [.removed])
        #expect(events.first?.device.id == "platform:present")
    }

    @Test(
        "where udevd runs, a new node waits for udev's database entry (c81:<minor>) before it is described",
        .enabled(if: getuid() == 0, "creating a character-device node (mknod) needs root"))
    func waitsForUdev() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("udev-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        _ = FileManager.default.createFile(atPath: scratch + "/control", contents: nil)
        let fixture = try Fixture(settle: .seconds(5), udevControl: scratch + "/control", udevData: scratch + "/data")
        let collector = Collector(try fixture.monitor.events())
        defer { collector.task.cancel() }
        fixture.plug("video7", bus: "usb-7", createFile: false)
        try #require(mknod(fixture.node("video7"), S_IFCHR | 0o600, dev_t(81 << 8 | 207)) == 0)
        try await Task.sleep(for: .milliseconds(300))
        #expect(collector.events.withLock { $0.isEmpty }, "described before udev processed it")
        _ = FileManager.default.createFile(atPath: scratch + "/data/c81:207", contents: nil)
        #expect(await collector.wait(for: 1).map(\.kind) == [.added])
    }

    @Test("cancelling the consumer ends the watch: the thread exits and its inotify descriptor is closed")
    func cancellationReleases() async {
        // The count is the whole process's, which other suites' inotify descriptors would move (an ASan CI run saw
        // 1 -> 0): the test runs in a process of its own (an exit test), where it is the only test.
        await #expect(processExitsWith: .success) { try await DeviceMonitorTests.cancellationReleasesInThisProcess() }
    }

    static func cancellationReleasesInThisProcess() async throws {
        let fixture = try Fixture()
        let before = Self.openDescriptors()
        for _ in 0..<20 {
            let collector = Collector(try fixture.monitor.events())
            collector.task.cancel()
            await collector.task.value
        }
        var after = Self.openDescriptors()
        for _ in 0..<100 where after != before {
            try await Task.sleep(for: .milliseconds(20))
            after = Self.openDescriptors()
        }
        #expect(after == before, "inotify descriptors went from \(before) to \(after)")
    }

    @Test("the stream ends by itself when the watched directory goes away")
    func directoryRemoved() async throws {
        let fixture = try Fixture()
        let collector = Collector(try fixture.monitor.events())
        try FileManager.default.removeItem(atPath: fixture.directory)
        let ended = Task {
            await collector.task.value
            return true
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(3))
            collector.task.cancel()
        }
        #expect(await ended.value)
        #expect(!timeout.isCancelled)
        timeout.cancel()
    }

    @Test("watching a directory that does not exist is a typed ioFailure naming inotify_add_watch")
    func missingDirectory() throws {
        let scanner = DeviceScanner(driver: FakeV4L2Driver(), canConvert: { _ in true })
        let monitor = DeviceMonitor(scanner: scanner, directory: "/nonexistent-dev", logger: Logger(label: "test"))
        let error = try #require(throws: CaptureError.self) { try monitor.events() }
        #expect(error.code == .ioFailure)
        #expect(error.call == "inotify_add_watch")
        #expect(error.errno == .noSuchFileOrDirectory)
    }
}
