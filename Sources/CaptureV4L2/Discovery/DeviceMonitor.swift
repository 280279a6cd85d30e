public import CaptureCore
import Foundation
public import Logging
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Watches for V4L2 cameras being plugged in, unplugged and changed, and reports them as ``DeviceEvent``s.
///
/// ```swift
/// for await event in try DeviceMonitor().events() {
///     print(event)  // "added vivid (platform:vivid-000) at /dev/video0"
/// }
/// ```
///
/// It watches `/dev` with inotify (`IN_CREATE`, `IN_DELETE`, `IN_ATTRIB`, and the moves udev makes), so it needs no
/// udev daemon: the kernel's devtmpfs creates and removes the nodes, in containers that share the host's `/dev`
/// and in minimal systems alike, and where udevd runs it sees udevd's permission changes (`IN_ATTRIB`) too. A
/// netlink uevent socket was the alternative; it was not chosen because uevents reach only the initial network
/// namespace (most containers see none), they arrive before the node exists and before udev has set its
/// permissions, and a second source would still be needed to know when the node can be opened.
///
/// A new node is reported only once it can be opened and is a streaming video-capture device with a format the
/// capturer can convert (the same test as ``V4L2Backend/devices()``), with its stable id: a freshly created node
/// is retried with a short backoff (10 ms doubling to 250 ms) for up to ``settleTimeout`` while it is not found,
/// busy or not yet permitted (devtmpfs creates it `root:root 0600`; udev then sets its group). Where udevd runs,
/// the monitor also waits for udev's database entry of the node (`/run/udev/data/c81:<minor>`), so that the
/// `/dev/v4l/by-id` link that makes the id stable exists before the device is described. A removed node is reported
/// with the description it had. `changed` means a known node's description changed (a new id, other formats).
public struct DeviceMonitor: Sendable {
    /// How long a new node may take to become usable before it is given up (logged, not reported). A later
    /// attribute change of the node (udev setting its permissions) tries again.
    public var settleTimeout: Duration
    let scanner: DeviceScanner
    let directory: String
    /// udev's control socket: its presence means udevd runs.
    let udevControl: String
    /// Where udevd records the devices it has processed (`c<major>:<minor>` files).
    let udevData: String
    let logger: Logger

    /// A monitor of the system's `/dev`.
    public init(
        settleTimeout: Duration = .seconds(3), logger: Logger = Logger(label: "swift-camera-capture.v4l2")
    ) {
        self.init(
            scanner: DeviceScanner(
                driver: LibV4L2Driver(), canConvert: FrameConversion.libyuv.canConvert, logger: logger),
            directory: "/dev", settleTimeout: settleTimeout, logger: logger)
    }

    init(
        scanner: DeviceScanner, directory: String, settleTimeout: Duration = .seconds(3),
        udevControl: String = "/run/udev/control", udevData: String = "/run/udev/data", logger: Logger
    ) {
        self.scanner = scanner
        self.directory = directory
        self.settleTimeout = settleTimeout
        self.udevControl = udevControl
        self.udevData = udevData
        self.logger = logger
    }

    /// The cameras present now, as the monitor knows them (what ``events()`` will report as removed).
    public func devices() -> [CaptureDevice] { scanner.devices() }

    /// Starts watching and returns the events from now on. The watch is in place when this returns; cameras present
    /// then are not reported (``devices()`` lists them). The stream ends when the consumer stops iterating (or its
    /// task is cancelled) and then, within 100 ms, the watching thread exits and closes its inotify descriptor; it
    /// also ends if `/dev` itself goes away.
    ///
    /// - Throws: `CaptureError` `ioFailure` when inotify cannot be set up (`inotify_init1`, `inotify_add_watch`: for
    ///   example the per-user watch limit).
    public func events() throws(CaptureError) -> AsyncStream<DeviceEvent> {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw CaptureError(
                .ioFailure, "cannot watch for cameras", device: directory, call: "inotify_init1",
                errno: Errno(rawValue: Glibc.errno))
        }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            let error = CaptureError(
                .ioFailure, "cannot watch for cameras", device: directory, call: "inotify_add_watch",
                errno: Errno(rawValue: Glibc.errno))
            _ = Glibc.close(fd)
            throw error
        }
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceEvent.self)
        let loop = MonitorLoop(monitor: self, inotify: fd, continuation: continuation, present: scanner.devices())
        continuation.onTermination = { [loop] _ in loop.stopRequested.store(true, ordering: .releasing) }
        let thread = Thread {
            nameCurrentThread("v4l2-monitor")
            loop.run()
        }
        thread.start()
        return stream
    }
}

/// The monitor's thread: reads inotify events, retries new nodes until usable, reports.
final class MonitorLoop: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `known` and `pending` are touched only by the monitor thread, which receives the
    // loop before it starts (thread creation orders the handover) and owns it until `run()` returns; `inotify` is
    // used and closed only by that thread. `stopRequested` is atomic; everything else is immutable and Sendable.

    /// A node seen created that is not usable yet.
    private struct Pending {
        var observedNs: UInt64
        var deadlineNs: UInt64
        var nextAttemptNs: UInt64
        var delayNs: UInt64
    }

    let stopRequested = Atomic<Bool>(false)
    private let monitor: DeviceMonitor
    private let inotify: CInt
    private let continuation: AsyncStream<DeviceEvent>.Continuation
    /// Reported cameras by node.
    private var known: [String: CaptureDevice]
    private var pending: [String: Pending] = [:]
    static let sliceMs: Int64 = 100

    init(
        monitor: DeviceMonitor, inotify: CInt, continuation: AsyncStream<DeviceEvent>.Continuation,
        present: [CaptureDevice]
    ) {
        self.monitor = monitor
        self.inotify = inotify
        self.continuation = continuation
        var known: [String: CaptureDevice] = [:]
        for device in present { if let node = device.node { known[node] = device } }
        self.known = known
    }

    func run() {
        defer {
            _ = Glibc.close(inotify)
            continuation.finish()
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopRequested.load(ordering: .acquiring) {
            let now = MonotonicClock.nowNs()
            var timeoutMs = Self.sliceMs
            if let next = pending.values.map(\.nextAttemptNs).min() {
                timeoutMs = min(timeoutMs, next > now ? Int64((next - now + 999_999) / 1_000_000) : 0)
            }
            var descriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&descriptor, 1, Int32(timeoutMs))
            if ready < 0 && Glibc.errno != EINTR {
                monitor.logger.error("device monitor: poll failed: \(Errno(rawValue: Glibc.errno))")
                return
            }
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
                if count > 0 {
                    if !handle(buffer[0..<count]) { return }
                } else if count < 0 && Glibc.errno != EAGAIN && Glibc.errno != EINTR {
                    monitor.logger.error("device monitor: read failed: \(Errno(rawValue: Glibc.errno))")
                    return
                }
            }
            attemptPending()
        }
    }

    /// Handles a batch of inotify events; `false` when the watch is gone.
    private func handle(_ bytes: ArraySlice<UInt8>) -> Bool {
        let observed = MonotonicClock.nowNs()
        var offset = bytes.startIndex
        let header = 16  // struct inotify_event: wd, mask, cookie, len.
        while offset + header <= bytes.endIndex {
            let mask = Self.uint32(bytes, offset + 4)
            let length = Int(Self.uint32(bytes, offset + 12))
            let nameBytes = bytes[(offset + header)..<min(offset + header + length, bytes.endIndex)]
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            offset += header + length
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                rescan(observed)
                continue
            }
            if mask & UInt32(IN_IGNORED | IN_DELETE_SELF) != 0 {
                monitor.logger.notice("device monitor: \(monitor.directory) went away; stopping")
                return false
            }
            guard Self.isVideoNode(name) else { continue }
            let node = monitor.directory + "/" + name
            if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                pending[node] = nil
                if let device = known.removeValue(forKey: node) { report(.removed, device, observed) }
            } else if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                startPending(node, observed)
            } else if mask & UInt32(IN_ATTRIB) != 0 {
                if pending[node] != nil {
                    pending[node]?.nextAttemptNs = observed
                } else {
                    // Permissions changed: a node given up earlier may be usable now, a known one may differ.
                    startPending(node, observed)
                }
            }
        }
        return true
    }

    private func startPending(_ node: String, _ observed: UInt64) {
        let timeout = monitor.settleTimeout.components
        let timeoutNs =
            UInt64(max(0, timeout.seconds)) * 1_000_000_000 + UInt64(max(0, timeout.attoseconds / 1_000_000_000))
        pending[node] = Pending(
            observedNs: observed, deadlineNs: observed + timeoutNs, nextAttemptNs: observed, delayNs: 10_000_000)
    }

    /// Tries every pending node whose time has come.
    private func attemptPending() {
        let now = MonotonicClock.nowNs()
        for (node, entry) in pending where entry.nextAttemptNs <= now {
            switch attempt(node, udevDeadlinePassed: now >= entry.deadlineNs) {
            case .done(let device):
                pending[node] = nil
                guard let device else { continue }
                let previous = known[node]
                known[node] = device
                if previous == nil {
                    report(.added, device, entry.observedNs)
                } else if previous != device {
                    report(.changed, device, entry.observedNs)
                }
            case .retry(let reason):
                if now >= entry.deadlineNs {
                    pending[node] = nil
                    monitor.logger.notice("device monitor: giving up on \(node): \(reason)")
                } else {
                    pending[node]?.nextAttemptNs = now + entry.delayNs
                    pending[node]?.delayNs = min(entry.delayNs * 2, 250_000_000)
                }
            }
        }
    }

    private enum Attempt {
        /// Described (`nil`: not a camera the capturer can use; nothing to report).
        case done(CaptureDevice?)
        /// Not usable yet.
        case retry(String)
    }

    private func attempt(_ node: String, udevDeadlinePassed: Bool) -> Attempt {
        if !udevDeadlinePassed, let entry = udevEntry(node), !FileManager.default.fileExists(atPath: entry) {
            return .retry("udev has not processed it (\(entry) is missing)")
        }
        do {
            let device = try monitor.scanner.describe(node)
            guard device.formats.contains(where: { monitor.scanner.canConvert($0.pixelFormat) }) else {
                return .done(nil)
            }
            return .done(device)
        } catch {
            switch error.code {
            case .permissionDenied, .deviceNotFound, .deviceBusy, .driverError: return .retry("\(error)")
            default:
                monitor.logger.debug("device monitor: \(node) is not a camera: \(error)")
                return .done(nil)
            }
        }
    }

    /// udev's database file for `node` when udevd runs (`/run/udev/data/c<major>:<minor>`), else `nil`.
    private func udevEntry(_ node: String) -> String? {
        guard FileManager.default.fileExists(atPath: monitor.udevControl) else { return nil }
        var status = stat()
        guard stat(node, &status) == 0, status.st_mode & S_IFMT == S_IFCHR else { return nil }
        let device = UInt64(status.st_rdev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return "\(monitor.udevData)/c\(major):\(minor)"
    }

    /// After a queue overflow: compares a fresh scan with what was reported.
    private func rescan(_ observed: UInt64) {
        let present = Dictionary(
            monitor.scanner.devices().compactMap { device in device.node.map { ($0, device) } },
            uniquingKeysWith: { first, _ in first })
        for (node, device) in known where present[node] == nil {
            known[node] = nil
            report(.removed, device, observed)
        }
        for (node, device) in present where known[node] != device {
            let kind: DeviceEvent.Kind = known[node] == nil ? .added : .changed
            known[node] = device
            report(kind, device, observed)
        }
    }

    private func report(_ kind: DeviceEvent.Kind, _ device: CaptureDevice, _ observed: UInt64) {
        let event = DeviceEvent(kind: kind, device: device, observedNs: observed, reportedNs: MonotonicClock.nowNs())
        monitor.logger.debug("device monitor: \(event)")
        continuation.yield(event)
    }

    /// `videoN`.
    static func isVideoNode(_ name: String) -> Bool {
        name.hasPrefix("video") && name.count > 5 && name.dropFirst(5).allSatisfy(\.isNumber)
    }

    /// The native-endian `UInt32` at index `at` of `bytes`.
    private static func uint32(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at - bytes.startIndex, as: UInt32.self) }
    }
}
