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

    @Test("frames are converted, re-queued and delivered with the driver's timestamps; EAGAIN delivers nothing")
    func delivery() async throws {
        // Each stamped 10 ms before it is dequeued, however loaded the machine: the 2 s age limit never applies.
        let (driver, recorder, session) = try await FakeCamera.streaming(
            (0..<6).flatMap { index in
                [FakeV4L2Driver.Dequeue.again, .frameAged(ageNs: 10_000_000, fill: UInt8(index + 1))]
            })
        await #expect(recorder.wait { $0.frameCount == 6 })
        await session.stop()
        let stamps = driver.state.withLock { $0.agedStamps }
        #expect(stamps.count == 6)
        #expect(recorder.timestamps == stamps)
        #expect(recorder.firstLumas == [1, 2, 3, 4, 5, 6])
        #expect(recorder.drops.isEmpty)
        #expect(session.timestampSummary?.driver == true)
        // 4 initial QBUFs plus one per frame: more frames than buffers means every buffer went back to the driver.
        #expect(driver.count("VIDIOC_QBUF") == 4 + 6)
        #expect(driver.nothingLeaked)
    }

    @Test("a multi-planar-only node (one plane) is listed and streams")
    func multiplanar() async throws {
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
        try await session.start()
        await #expect(recorder.wait { $0.frameCount == 2 })
        await session.stop()
        #expect(session.granted.bytesPerLine == 640 * 2 + 64)
        #expect(recorder.firstLumas == [1, 2])
        #expect(recorder.drops == [.shortBuffer])
        #expect(driver.nothingLeaked)
    }

    @Test("error-flagged, short and unconvertible buffers are dropped, counted, and their buffers re-queued")
    func drops() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([
            .frame(fill: 1), .frame(error: true), .frame(bytesUsed: 100), .frame(bytesUsed: 0), .frame(fill: 0xFF),
            .frame(fill: 2),
        ])
        await #expect(recorder.wait { $0.frameCount == 2 })
        await session.stop()
        #expect(recorder.firstLumas == [1, 2])
        #expect(recorder.drops == [.corruptBuffer, .shortBuffer, .shortBuffer, .conversionFailed])
        #expect(driver.count("VIDIOC_QBUF") == 4 + 6)
        #expect(driver.nothingLeaked)
    }

    @Test("frames held by the consumer exhaust the pool: later frames are dropped as poolExhausted")
    func poolExhausted() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming(
            Array(repeating: .frame(fill: 7), count: 10), recorder: EventRecorder(keepFrames: true))  // Pool: 4 + 4.
        await #expect(recorder.wait { $0.frameCount + $0.drops.count == 10 })
        await session.stop()
        #expect(recorder.frameCount == 8)
        #expect(recorder.drops == [.poolExhausted, .poolExhausted])
        #expect(driver.nothingLeaked)
    }

    @Test("ENODEV mid-stream ends the stream with deviceDisconnected, the thread ends and releases everything")
    func disconnect() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([
            .frame(fill: 1), .frame(fill: 2), .fail(.noDevice), .frame(fill: 3),
        ])
        await #expect(recorder.wait { !$0.ended.isEmpty })
        // Released by the thread itself, before anyone calls stop().
        #expect(driver.nothingLeaked)
        let error = try #require(recorder.ended.first ?? nil)
        #expect(error.code == .deviceDisconnected)
        #expect(error.call == "VIDIOC_DQBUF")
        #expect(error.device == "/dev/video0")
        #expect(recorder.frameCount == 2)
        await session.stop()
        #expect(recorder.ended.count == 1)
    }

    @Test("EIO from VIDIOC_QBUF while streaming, with the device gone (QUERYCAP: ENODEV), is a disconnection too")
    func ioErrorOnRequeue() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([.frame(fill: 1)]) {
            $0.failAfter("VIDIOC_QBUF", successes: 4, with: .ioError)
            $0.failAfter("VIDIOC_QUERYCAP", successes: 1, with: .noDevice)  // The start's QUERYCAP succeeds.
        }
        await #expect(recorder.wait { !$0.ended.isEmpty })
        #expect(recorder.ended.first??.code == .deviceDisconnected)
        #expect(recorder.ended.first??.call == "VIDIOC_QBUF")
        await session.stop()
        #expect(driver.nothingLeaked)
    }

    @Test("a stall restarts the stream once (STREAMOFF, re-queue, STREAMON), then fails with streamStalled")
    func stall() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([], stallTimeoutNs: 100_000_000)
        await #expect(recorder.wait { !$0.ended.isEmpty })
        #expect(recorder.ended.first??.code == .streamStalled)
        #expect(driver.count("VIDIOC_STREAMON") == 2)
        #expect(driver.count("VIDIOC_STREAMOFF") == 2)  // The restart, then the release.
        #expect(driver.count("VIDIOC_QBUF") == 8)
        await session.stop()
        #expect(driver.nothingLeaked)
    }

    @Test("stop is idempotent, joins the thread, and no event follows it")
    func stopIsFinal() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([.frame(fill: 1)])
        await #expect(recorder.wait { $0.frameCount == 1 })
        await session.stop()
        let after = recorder.frameCount
        driver.script(Array(repeating: .frame(fill: 2), count: 3))
        await session.stop()
        #expect(recorder.frameCount == after)
        #expect(recorder.ended.isEmpty)
        #expect(driver.nothingLeaked)
    }

    @Test("a stop started from the ended callback (on the capture thread) completes once that thread has finished")
    func stopFromCallback() async throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let recorder = EventRecorder()
        let holder = SessionHolder()
        var events = recorder.events
        let recordEnd = events.ended
        let stopped = Completion()
        events.ended = { error in
            let session = holder.session
            Task {
                await session?.stop()
                stopped.finish()
            }
            recordEnd(error)
        }
        let session = V4L2Session(
            configuration: FakeCamera.configuration(), events: events, driver: driver,
            conversion: FakeCamera.conversion)
        holder.session = session
        driver.script([.fail(.noDevice)])
        try await session.start()
        #expect(await recorder.wait { !$0.ended.isEmpty })
        await stopped.wait()
        #expect(driver.nothingLeaked)
        await session.stop()
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
