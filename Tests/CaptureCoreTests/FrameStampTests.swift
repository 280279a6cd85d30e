import CaptureCore
import CaptureTestSupport
import Testing

@Suite("FrameStamp: frame number and capture time across the bottom of a synthetic frame")
struct FrameStampTests {
    @Test(
        "a stamp reads back, also through ±60 levels of noise; one misread cell makes it unreadable",
        arguments: [(320, 240), (640, 480), (1280, 720)])
    func roundTrip(width: Int, height: Int) throws {
        let stride = width + 16
        var luma = [UInt8](repeating: 128, count: stride * height)
        let stamp = FrameStamp(frameNumber: 0x8000_0001 &+ UInt32(width), captureTimeMs: 0xDEAD_BEEF)
        luma.withUnsafeMutableBufferPointer { plane in
            guard let base = plane.baseAddress else { return }
            stamp.draw(luma: base, stride: stride, width: width, height: height)
        }
        var generator = SeededGenerator(state: UInt64(width))
        for index in luma.indices {
            luma[index] = UInt8(clamping: Int(luma[index]) + Int.random(in: -60...60, using: &generator))
        }
        let read = luma.withUnsafeBufferPointer { plane in
            plane.baseAddress.flatMap { FrameStamp.read(luma: $0, stride: stride, width: width, height: height) }
        }
        #expect(read == stamp)
        // Any one cell of any row misread: the check row makes the stamp unreadable instead of wrong.
        let rowHeight = FrameStamp.rowHeight(frameHeight: height)
        let cellWidth = width / FrameStamp.cellsPerRow
        for row in 0..<FrameStamp.rows {
            for cell in [0, 13, 31] {
                var corrupted = luma
                let top = height - (FrameStamp.rows - row) * rowHeight
                for y in top..<top + rowHeight {
                    for x in cell * cellWidth..<(cell + 1) * cellWidth {
                        corrupted[y * stride + x] = corrupted[y * stride + x] >= 128 ? 16 : 235
                    }
                }
                let misread = corrupted.withUnsafeBufferPointer { plane in
                    plane.baseAddress.flatMap {
                        FrameStamp.read(luma: $0, stride: stride, width: width, height: height)
                    }
                }
                #expect(misread == nil, "row \(row) cell \(cell)")
            }
        }
    }

    @Test("frames too small for a stamp get none, and reading one gives nil")
    func tooSmall() {
        var luma = [UInt8](repeating: 7, count: 31 * 15)
        luma.withUnsafeMutableBufferPointer { plane in
            guard let base = plane.baseAddress else { return }
            FrameStamp(frameNumber: 1, captureTimeMs: 1).draw(luma: base, stride: 31, width: 31, height: 15)
            #expect(FrameStamp.read(luma: base, stride: 31, width: 31, height: 15) == nil)
        }
        #expect(luma.allSatisfy { $0 == 7 })
    }

    @Test("the synthetic camera stamps consecutive frame numbers and capture times close to now")
    func syntheticCameraStamps() async throws {
        let capturer = CameraVideoCapturer(provider: .builtIn)
        var stamps: [FrameStamp] = []
        // "Close to now" means on the same clock, in order: every capture time lies between a reading taken before the
        // start and one taken when its frame was read. No bound in seconds: a starved sanitized run once delivered a
        // frame 5.8 s after its capture, which says nothing about the stamp. Milliseconds wrap, so compare distances;
        // each conversion to the wall clock rounds down, so the window gets 2 ms either side.
        let startedAtMs = FrameStamp.at(frameNumber: 0, captureTimeNs: MonotonicClock.nowNs()).captureTimeMs &- 2
        var readAtMs: [UInt32] = []
        let stream = capturer.frames()
        try await capturer.startCapture(target: Dimensions(width: 320, height: 240))
        for await frame in stream {
            let plane = frame.buffer.packedI420()
            let stamp = plane.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.flatMap { FrameStamp.read(luma: $0, stride: 320, width: 320, height: 240) }
            }
            if let stamp {
                stamps.append(stamp)
                readAtMs.append(FrameStamp.at(frameNumber: 0, captureTimeNs: MonotonicClock.nowNs()).captureTimeMs)
            }
            if stamps.count == 10 { break }
        }
        await capturer.stopCapture()
        #expect(stamps.count == 10)
        // The stream keeps the newest frames only, and a starved or sanitized run may capture late: numbers must rise,
        // and frames can never be closer in time than 30 fps allows (give or take the clock conversion).
        for (previous, next) in zip(stamps, stamps.dropFirst()) {
            let frames = next.frameNumber &- previous.frameNumber
            let milliseconds = Double(next.captureTimeMs &- previous.captureTimeMs)
            #expect(frames >= 1 && frames < 100_000)
            #expect(
                milliseconds < 1e6 && milliseconds >= Double(frames) * 1_000 / 30 - 100,
                "\(frames) frames in \(milliseconds) ms")
        }
        for (stamp, readAt) in zip(stamps, readAtMs) {
            let sinceStart = stamp.captureTimeMs &- startedAtMs
            let readSinceStart = (readAt &- startedAtMs) &+ 2
            #expect(sinceStart <= readSinceStart, "captured at \(sinceStart) ms, read at \(readSinceStart) ms")
        }
    }
}
