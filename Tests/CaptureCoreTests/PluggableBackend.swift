import CaptureCore
import Foundation

/// A camera backend whose cameras a test plugs and unplugs: each session delivers a frame every 2 ms, filled with its
/// camera's luma value (so a test can tell cameras apart), until stopped or until its camera is unplugged, when it
/// ends with `deviceDisconnected`. Plugging and unplugging is reported on ``deviceEvents()`` (unless built without
/// events, to exercise the capturer's polling fallback).
final class PluggableBackend: CameraBackend {
    struct Camera: Sendable {
        var device: CaptureDevice
        var luma: UInt8
    }

    let kind = CaptureDevice.Kind.recorded
    let cameras: [Camera]
    let watches: Bool
    private let plugged: Locked<Set<String>>
    private let watchers = Locked<[UInt64: AsyncStream<DeviceEvent>.Continuation]>([:])
    private let nextWatcher = Locked<UInt64>(0)
    /// Running sessions by camera id.
    private let running = Locked<[String: [Session]]>([:])
    /// Sessions started and stopped, in all.
    let counts = Locked((started: 0, stopped: 0))
    /// Ids whose next start fails (once) with `deviceNotFound`.
    let failNextStart = Locked<Set<String>>([])

    init(_ cameras: [Camera], watches: Bool = true) {
        self.cameras = cameras
        self.watches = watches
        self.plugged = Locked(Set(cameras.map(\.device.id)))
    }

    static func camera(_ id: String, luma: UInt8, position: CameraPosition = .front) -> Camera {
        Camera(
            device: CaptureDevice(
                id: id, name: "Pluggable \(id)", kind: .recorded, position: position,
                formats: [CaptureFormat(.yu12, 64, 48, fps: [30])]),
            luma: luma)
    }

    var provider: CameraProvider { CameraProvider(backends: [self]) }

    func devices() -> [CaptureDevice] {
        let present = plugged.withLock { $0 }
        return cameras.filter { present.contains($0.device.id) }.map(\.device)
    }

    func canConvert(_ pixelFormat: PixelFormat) -> Bool { pixelFormat == .yu12 }

    /// How many watchers (device-event streams) are open.
    var watcherCount: Int { watchers.withLock { $0.count } }

    func deviceEvents() -> AsyncStream<DeviceEvent>? {
        guard watches else { return nil }
        let (stream, continuation) = AsyncStream.makeStream(of: DeviceEvent.self)
        let id = nextWatcher.withLock { next in
            defer { next += 1 }
            return next
        }
        watchers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    private func report(_ kind: DeviceEvent.Kind, _ id: String) {
        guard let camera = cameras.first(where: { $0.device.id == id }) else { return }
        let now = MonotonicClock.nowNs()
        let event = DeviceEvent(kind: kind, device: camera.device, observedNs: now, reportedNs: now)
        for continuation in watchers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// Unplugs camera `id`: it leaves the list, its sessions end with `deviceDisconnected`, `removed` is reported.
    func unplug(_ id: String) {
        plugged.withLock { _ = $0.remove(id) }
        for session in running.withLock({ $0[id] ?? [] }) { session.disconnect() }
        report(.removed, id)
    }

    /// Plugs camera `id` back in: it is listed again and `added` is reported.
    func plug(_ id: String) {
        plugged.withLock { _ = $0.insert(id) }
        report(.added, id)
    }

    func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        guard let camera = cameras.first(where: { $0.device.id == configuration.device.id }) else {
            throw CaptureError(.deviceNotFound, "no such camera", device: configuration.device.id)
        }
        return Session(backend: self, camera: camera, configuration: configuration, events: events)
    }

    fileprivate func register(_ session: Session) {
        running.withLock { $0[session.camera.device.id, default: []].append(session) }
        counts.withLock { $0.started += 1 }
    }

    fileprivate func unregister(_ session: Session) {
        running.withLock { $0[session.camera.device.id]?.removeAll { $0 === session } }
        counts.withLock { $0.stopped += 1 }
    }

    fileprivate func isPlugged(_ id: String) -> Bool { plugged.withLock { $0.contains(id) } }

    fileprivate final class Session: CaptureSession {
        let backend: PluggableBackend
        let camera: Camera
        let events: CaptureSessionEvents
        let pool: FrameBufferPool
        let granted: GrantedFormat
        /// (stop requested, disconnected, thread started).
        private let flags = Locked((stop: false, disconnected: false, started: false))
        /// Finished by the capture thread as its last act.
        private let finished = Completion()

        init(
            backend: PluggableBackend, camera: Camera, configuration: CaptureSessionConfiguration,
            events: CaptureSessionEvents
        ) {
            self.backend = backend
            self.camera = camera
            self.events = events
            pool = FrameBufferPool(format: configuration.output, dimensions: configuration.dimensions, capacity: 8)
            granted = GrantedFormat(
                pixelFormat: configuration.format.pixelFormat, dimensions: configuration.dimensions,
                fps: configuration.fps)
        }

        func disconnect() { flags.withLock { $0.disconnected = true } }

        func start() async throws(CaptureError) {
            let id = camera.device.id
            let failing = backend.failNextStart.withLock { $0.remove(id) != nil }
            guard backend.isPlugged(id), !failing else {
                throw CaptureError(.deviceNotFound, "the camera is not plugged in", device: id)
            }
            flags.withLock { $0.started = true }
            backend.register(self)
            let thread = Thread { [self] in
                run()
                backend.unregister(self)
                finished.finish()
            }
            thread.name = "PluggableCamera"
            thread.start()
        }

        private func run() {
            while true {
                let (stop, disconnected) = flags.withLock { ($0.stop, $0.disconnected) }
                if stop { return }
                if disconnected {
                    events.ended(
                        CaptureError(.deviceDisconnected, "the camera was unplugged", device: camera.device.id))
                    return
                }
                if let buffer = pool.take() {
                    for plane in 0..<buffer.planes.count {
                        buffer.mutablePlane(plane).update(repeating: camera.luma, count: buffer.planes[plane].byteCount)
                    }
                    events.frame(buffer, MonotonicClock.nowNs())
                } else {
                    events.dropped(.poolExhausted)
                }
                // blocking: the fake camera's own capture thread paces its frames.
                Thread.sleep(forTimeInterval: 0.002)
            }
        }

        func stop() async {
            let started = flags.withLock { flags -> Bool in
                flags.stop = true
                return flags.started
            }
            guard started else { return }
            await finished.wait()
        }
    }
}
