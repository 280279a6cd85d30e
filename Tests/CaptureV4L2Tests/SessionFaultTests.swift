import CaptureCore
import SystemPackage
import Testing

@testable import CaptureV4L2

/// Regression tests for what vivid's fault injection found (Tests/CaptureV4L2Tests/VividFaultTests.swift), on the fake
/// driver: sequence gaps reach the capturer's statistics, wrapping sequence numbers are no gap and a jump is no gap
/// storm, and `EIO` with the device still present is a driver error, not a disconnection.
@Suite("V4L2 session faults")
struct SessionFaultTests {
    static let interval: UInt64 = 40_000_000

    @Test("sequence gaps: counted modulo 2^32 (a wrap is no gap, a drop across it is), backwards or implausible: none")
    func skippedFrames() {
        func gap(_ from: UInt32, _ to: UInt32, already: Int = 0, elapsedFrames: UInt64 = 1000) -> Int {
            CaptureLoop.skippedFrames(
                from: from, to: to, alreadySkipped: already, elapsedNs: elapsedFrames * Self.interval,
                frameIntervalNs: Self.interval)
        }
        #expect(gap(10, 11) == 0)
        #expect(gap(10, 14) == 3)
        #expect(gap(10, 10) == 0)
        #expect(gap(0xFFFF_FFFF, 0) == 0)  // wrap_sequence_number
        #expect(gap(0xFFFF_FFFE, 0) == 1)  // one frame lost across the wrap
        #expect(gap(0xFFFF_FFF0, 5) == 20)
        #expect(gap(1000, 5) == 0)  // the driver restarted its counter
        #expect(gap(5, 4_000_000_000) == 0)  // backwards modulo 2^32
        #expect(gap(5, 1_000_000) == 0)  // more than the stream's duration can hold: a jump, not a storm
        #expect(gap(5, 1_000_000, elapsedFrames: 1_000_000) == 999_994)  // the same gap after long enough
        #expect(gap(5, 30, already: 4000, elapsedFrames: 1000) == 0)  // the stream's total would be implausible
        #expect(
            CaptureLoop.skippedFrames(from: 5, to: 1_000_000, alreadySkipped: 0, elapsedNs: 0, frameIntervalNs: 0)
                == 999_994)  // unknown rate: no bound
    }

    @Test("a session reports each sequence gap as skipped frames, across a wrap, and none for a backwards jump")
    func sessionReportsGaps() async throws {
        let sequences: [UInt32] = [0xFFFF_FFFC, 0xFFFF_FFFD, 0xFFFF_FFFF, 2, 3, 1, 2]
        let (driver, recorder, session) = try await FakeCamera.streaming(
            sequences.map { .frame(fill: 1, sequence: $0) })
        await #expect(recorder.wait { $0.frameCount == sequences.count })
        await session.stop()
        #expect(recorder.skipped == [1, 2])
        #expect(session.driverSkippedFrames == 3)
        #expect(driver.nothingLeaked)
    }

    @Test("the capturer counts the device's skipped frames in its statistics, apart from its own drops")
    func capturerStatistics() async throws {
        let driver = FakeV4L2Driver(devices: ["/dev/video0": FakeCamera.webcam()])
        let backend = FakeCamera.backend(driver)
        let device = try #require(backend.devices().first)
        let format = try #require(
            device.formats.first { $0.pixelFormat == .yuyv && $0.size == .discrete(FakeCamera.vga) })
        let capturer = CameraVideoCapturer(provider: CameraProvider(backends: [backend]))
        driver.script([
            .frame(sequence: 0), .frame(sequence: 1), .frame(error: true, sequence: 2), .frame(sequence: 6),
            .frame(sequence: 7), .frame(sequence: 9),
        ])
        try await capturer.startCapture(device: device, format: format, fps: 30)
        for _ in 0..<1000 where capturer.statistics.framesDelivered < 5 { try await Task.sleep(for: .milliseconds(10)) }
        await capturer.stopCapture()
        let statistics = capturer.statistics
        #expect(statistics.framesDelivered == 5)
        #expect(statistics.droppedCorrupt == 1)
        #expect(statistics.framesDropped == 1)
        #expect(statistics.framesSkippedByDevice == 4)
        #expect(driver.nothingLeaked)
    }

    @Test("EIO from VIDIOC_DQBUF with the device still answering QUERYCAP (vb2_queue_error) is a driverError")
    func fatalStreamingError() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([.frame(fill: 1), .fail(.ioError)])
        await #expect(recorder.wait { !$0.ended.isEmpty })
        let error = try #require(recorder.ended.first ?? nil)
        #expect(error.code == .driverError)
        #expect(error.call == "VIDIOC_DQBUF")
        #expect(error.errno == .ioError)
        #expect(error.device == "/dev/video0")
        #expect(recorder.frameCount == 1)
        await session.stop()
        #expect(driver.nothingLeaked)
    }

    @Test("EIO from VIDIOC_DQBUF with the device gone (QUERYCAP: ENODEV) is deviceDisconnected")
    func ioErrorThenGone() async throws {
        let (driver, recorder, session) = try await FakeCamera.streaming([.frame(fill: 1), .fail(.ioError)]) {
            $0.failAfter("VIDIOC_QUERYCAP", successes: 1, with: .noDevice)
        }
        await #expect(recorder.wait { !$0.ended.isEmpty })
        let error = try #require(recorder.ended.first ?? nil)
        #expect(error.code == .deviceDisconnected)
        #expect(error.call == "VIDIOC_DQBUF")
        await session.stop()
        #expect(driver.nothingLeaked)
    }
}
