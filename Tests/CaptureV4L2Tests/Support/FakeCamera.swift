import CaptureCore
import SystemPackage

@testable import CaptureV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// Ready-made fake devices, a fake converter and an event recorder for the backend's unit tests.
enum FakeCamera {
    static let vga = Dimensions(width: 640, height: 480)
    static let qvga = Dimensions(width: 320, height: 240)

    /// A UVC-like webcam at `/dev/video0`: YUYV (convertible) at 640x480 and 320x240, then H264 (not convertible).
    static func webcam() -> FakeV4L2Driver.Device {
        var device = FakeV4L2Driver.Device()
        device.formats = [
            .init(
                pixelFormat: .yuyv, description: "YUYV 4:2:2",
                sizes: .discrete([
                    (vga, .discrete([FrameInterval(fps: 30), FrameInterval(fps: 15)])),
                    (qvga, .discrete([FrameInterval(fps: 30)])),
                ])),
            .init(
                pixelFormat: .h264, description: "H.264", flags: 0x1, bytesPerPixel: 1,
                sizes: .discrete([(vga, .discrete([FrameInterval(fps: 30)]))])),
        ]
        return device
    }

    /// A conversion that accepts YUYV and NV12, needs `bytesPerLine × height` bytes, fails on frames filled with
    /// 0xFF, and writes the first source byte into the first luma byte.
    static let conversion = FrameConversion(
        canConvert: { $0 == .yuyv || $0 == .nv12 },
        minimumFrameBytes: { _, _, height, bytesPerLine in bytesPerLine * height },
        convert: { (source, _, _, _, _, destination, _) throws(CaptureError) in
            guard let first = source.first, first != 0xFF else {
                throw CaptureError(.conversionFailed, "corrupt test frame")
            }
            destination.mutablePlane(0).pointee = first
        })

    /// A backend on `driver` with the fake conversion.
    static func backend(_ driver: FakeV4L2Driver) -> V4L2Backend {
        V4L2Backend(driver: driver, conversion: conversion)
    }

    /// A YUYV 640x480 at 30 fps session configuration for `node`.
    static func configuration(node: String = "/dev/video0", bufferCount: Int = 4) -> CaptureSessionConfiguration {
        let format = CaptureFormat(.yuyv, 640, 480, fps: [30, 15])
        let device = CaptureDevice(id: "fake", name: "Fake", kind: .v4l2, node: node, formats: [format])
        return CaptureSessionConfiguration(
            device: device, format: format, dimensions: vga, fps: 30, output: .nv12, bufferCount: bufferCount)
    }

    /// The stall timeout of fake sessions unless a test gives its own: an hour, so that only the tests of the stall
    /// detector ever see it. The real default (1 s) made a test whose task waited over a second for a thread of a
    /// loaded pool see its idle fake stream restarted (a parallel CI run: four extra QBUFs, a "no frame" end).
    static let noStallNs: UInt64 = 3_600_000_000_000

    /// A session on `driver`, recording into `recorder`.
    static func session(
        _ driver: FakeV4L2Driver, _ recorder: EventRecorder, node: String = "/dev/video0",
        stallTimeoutNs: UInt64 = noStallNs
    ) -> V4L2Session {
        V4L2Session(
            configuration: configuration(node: node), events: recorder.events, driver: driver,
            conversion: conversion, stallTimeoutNs: stallTimeoutNs)
    }
}

extension FakeCamera {
    /// A started session on a fresh fake webcam whose `VIDIOC_DQBUF` plays `script`; `prepare` runs before start.
    static func streaming(
        _ script: [FakeV4L2Driver.Dequeue], recorder: EventRecorder = EventRecorder(),
        stallTimeoutNs: UInt64 = noStallNs, prepare: (FakeV4L2Driver) -> Void = { _ in }
    ) async throws -> (driver: FakeV4L2Driver, recorder: EventRecorder, session: V4L2Session) {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": webcam()])
        let session = session(driver, recorder, stallTimeoutNs: stallTimeoutNs)
        driver.script(script)
        prepare(driver)
        try await session.start()
        return (driver, recorder, session)
    }
}

/// Records a session's events.
final class EventRecorder: Sendable {
    struct Events {
        var frames: [(timestampNs: UInt64, firstLuma: UInt8, buffer: VideoFrameBuffer)] = []
        var drops: [FrameDropReason] = []
        var ended: [CaptureError?] = []
        var skipped: [Int] = []
    }
    let state = Locked(Events())
    /// Frames are kept (holding their pool buffers) only when this is set.
    let keepFrames: Bool

    init(keepFrames: Bool = false) { self.keepFrames = keepFrames }

    var events: CaptureSessionEvents {
        CaptureSessionEvents(
            frame: { [self] buffer, timestamp in
                let luma = buffer.plane(0).pointee
                state.withLock { $0.frames.append((timestamp, luma, keepFrames ? buffer : Self.placeholder)) }
            },
            dropped: { [self] reason in state.withLock { $0.drops.append(reason) } },
            ended: { [self] error in state.withLock { $0.ended.append(error) } },
            skipped: { [self] count in state.withLock { $0.skipped.append(count) } })
    }

    private static let placeholder = VideoFrameBuffer(format: .nv12, width: 2, height: 2)

    var frameCount: Int { state.withLock { $0.frames.count } }
    var timestamps: [UInt64] { state.withLock { $0.frames.map(\.timestampNs) } }
    var firstLumas: [UInt8] { state.withLock { $0.frames.map(\.firstLuma) } }
    var drops: [FrameDropReason] { state.withLock { $0.drops } }
    var ended: [CaptureError?] { state.withLock { $0.ended } }
    var skipped: [Int] { state.withLock { $0.skipped } }

    /// Waits (up to 10 s, so a broken build fails instead of hanging) until `condition` holds; returns whether it did.
    /// Suspends between looks: no thread is held while the capture thread works.
    @discardableResult
    func wait(until condition: (EventRecorder) -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(self)
    }
}
