internal import CV4L2
import CaptureCore
import CaptureFileCameras
import SystemPackage
import Testing

@testable import CaptureV4L2

/// The capture thread: delivery, drops, disconnection, stalls and stop (no hardware).
@Suite("V4L2 session streaming")
struct SessionStreamingTests {
    static let base: UInt64 = 1_000_000_000

    /// A driver whose timestamps are just behind the monotonic clock now, `step` apart.
    static func recentTimestamps(_ count: Int, step: UInt64 = 33_000_000) -> [UInt64] {
        let start = (MonotonicClock.nowNs() - UInt64(count + 1) * step) / 1000 * 1000  // timeval: microseconds.
        return (0..<count).map { start + UInt64($0) * step }
    }

    @Test("frames are converted, re-queued and delivered with the driver's timestamps; EAGAIN delivers nothing")
    func delivery() throws {
        let stamps = Self.recentTimestamps(6)
        let (driver, recorder, session) = try FakeCamera.streaming(
            stamps.enumerated().flatMap { index, stamp in
                [FakeV4L2Driver.Dequeue.again, .frame(timestampNs: stamp, fill: UInt8(index + 1))]
            })
        #expect(recorder.wait { $0.frameCount == 6 })
        session.stop()
        #expect(recorder.timestamps == stamps)
        #expect(recorder.firstLumas == [1, 2, 3, 4, 5, 6])
        #expect(recorder.drops.isEmpty)
        #expect(session.timestampSummary?.driver == true)
        // 4 initial QBUFs plus one per frame: more frames than buffers means every buffer went back to the driver.
        #expect(driver.count("VIDIOC_QBUF") == 4 + 6)
        #expect(driver.nothingLeaked)
    }

    @Test("a multi-planar-only node (one plane) is listed and streams")
    func multiplanar() throws {
        var device = FakeCamera.webcam()
        device.deviceCaps = UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_STREAMING)
        let driver = FakeV4L2Driver(devices: ["/dev/video0": device])
        let listed = FakeCamera.backend(driver).devices()
        #expect(listed.map(\.node) == ["/dev/video0"])
        #expect(listed.map(\.isMultiplanar) == [true])
        #expect(
            listed.first.map {
                V4L2FormatList($0).render().hasPrefix(
                    "ioctl: VIDIOC_ENUM_FMT\n\tType: Video Capture Multiplanar\n\n")
            } == true)
        let recorder = EventRecorder()
        let session = FakeCamera.session(driver, recorder)
        driver.script([.frame(fill: 1), .frame(bytesUsed: 10), .frame(fill: 2)])
        try session.start()
        #expect(recorder.wait { $0.frameCount == 2 })
        session.stop()
        #expect(session.granted.bytesPerLine == 640 * 2 + 64)
        #expect(recorder.firstLumas == [1, 2])
        #expect(recorder.drops == [.shortBuffer])
        #expect(driver.nothingLeaked)
    }

    @Test("error-flagged, short and unconvertible buffers are dropped, counted, and their buffers re-queued")
    func drops() throws {
        let (driver, recorder, session) = try FakeCamera.streaming([
            .frame(fill: 1), .frame(error: true), .frame(bytesUsed: 100), .frame(bytesUsed: 0), .frame(fill: 0xFF),
            .frame(fill: 2),
        ])
        #expect(recorder.wait { $0.frameCount == 2 })
        session.stop()
        #expect(recorder.firstLumas == [1, 2])
        #expect(recorder.drops == [.corruptBuffer, .shortBuffer, .shortBuffer, .conversionFailed])
        #expect(driver.count("VIDIOC_QBUF") == 4 + 6)
        #expect(driver.nothingLeaked)
    }

    @Test("frames held by the consumer exhaust the pool: later frames are dropped as poolExhausted")
    func poolExhausted() throws {
        let (driver, recorder, session) = try FakeCamera.streaming(
            Array(repeating: .frame(fill: 7), count: 10), recorder: EventRecorder(keepFrames: true))  // Pool: 4 + 4.
        #expect(recorder.wait { $0.frameCount + $0.drops.count == 10 })
        session.stop()
        #expect(recorder.frameCount == 8)
        #expect(recorder.drops == [.poolExhausted, .poolExhausted])
        #expect(driver.nothingLeaked)
    }

    @Test("ENODEV mid-stream ends the stream with deviceDisconnected, the thread ends and releases everything")
    func disconnect() throws {
        let (driver, recorder, session) = try FakeCamera.streaming([
            .frame(fill: 1), .frame(fill: 2), .fail(.noDevice), .frame(fill: 3),
        ])
        #expect(recorder.wait { !$0.ended.isEmpty })
        // Released by the thread itself, before anyone calls stop().
        #expect(driver.nothingLeaked)
        let error = try #require(recorder.ended.first ?? nil)
        #expect(error.code == .deviceDisconnected)
        #expect(error.call == "VIDIOC_DQBUF")
        #expect(error.device == "/dev/video0")
        #expect(recorder.frameCount == 2)
        session.stop()
        #expect(recorder.ended.count == 1)
    }

    @Test("EIO from VIDIOC_QBUF while streaming, with the device gone (QUERYCAP: ENODEV), is a disconnection too")
    func ioErrorOnRequeue() throws {
        let (driver, recorder, session) = try FakeCamera.streaming([.frame(fill: 1)]) {
            $0.failAfter("VIDIOC_QBUF", successes: 4, with: .ioError)
            $0.failAfter("VIDIOC_QUERYCAP", successes: 1, with: .noDevice)  // The start's QUERYCAP succeeds.
        }
        #expect(recorder.wait { !$0.ended.isEmpty })
        #expect(recorder.ended.first??.code == .deviceDisconnected)
        #expect(recorder.ended.first??.call == "VIDIOC_QBUF")
        session.stop()
        #expect(driver.nothingLeaked)
    }

    @Test("a stall restarts the stream once (STREAMOFF, re-queue, STREAMON), then fails with streamStalled")
    func stall() throws {
        let (driver, recorder, session) = try FakeCamera.streaming([], stallTimeoutNs: 100_000_000)
        #expect(recorder.wait { !$0.ended.isEmpty })
        #expect(recorder.ended.first??.code == .streamStalled)
        #expect(driver.count("VIDIOC_STREAMON") == 2)
        #expect(driver.count("VIDIOC_STREAMOFF") == 2)  // The restart, then the release.
        #expect(driver.count("VIDIOC_QBUF") == 8)
        session.stop()
        #expect(driver.nothingLeaked)
    }

    @Test("stop is idempotent, joins the thread, and no event follows it")
    func stopIsFinal() throws {
        let (driver, recorder, session) = try FakeCamera.streaming([.frame(fill: 1)])
        #expect(recorder.wait { $0.frameCount == 1 })
        session.stop()
        let after = recorder.frameCount
        driver.script(Array(repeating: .frame(fill: 2), count: 3))
        session.stop()
        #expect(recorder.frameCount == after)
        #expect(recorder.ended.isEmpty)
        #expect(driver.nothingLeaked)
    }

    @Test("stop from the ended callback (on the capture thread) does not deadlock")
    func stopFromCallback() throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let recorder = EventRecorder()
        let holder = SessionHolder()
        var events = recorder.events
        let recordEnd = events.ended
        events.ended = { error in
            holder.session?.stop()
            recordEnd(error)
        }
        let session = V4L2Session(
            configuration: FakeCamera.configuration(), events: events, driver: driver,
            conversion: FakeCamera.conversion)
        holder.session = session
        driver.script([.fail(.noDevice)])
        try session.start()
        #expect(recorder.wait { !$0.ended.isEmpty })
        session.stop()
        #expect(driver.nothingLeaked)
    }
}

/// Lets a callback reach the session it belongs to.
final class SessionHolder: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `session` is written once, before the session starts (and so before any
    // callback can read it on the capture thread; thread creation orders the write before the read).
    // Weak: the session owns the callback that owns this holder; a strong reference would be a cycle
    // (LeakSanitizer reported the session and its driver state as leaked).
    weak var session: V4L2Session?
}
