import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

/// Keeps every delivered frame as packed I420, the drops and the stop.
private final class ReplayRecorder: CameraVideoCapturerDelegate {
    let frames = Locked<[[UInt8]]>([])
    let drops = Locked<[FrameDropReason]>([])
    let stops = Locked<[CaptureError?]>([])

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let bytes = frame.buffer.packedI420()
        frames.withLock { $0.append(bytes) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didDropFrameFor reason: FrameDropReason) {
        drops.withLock { $0.append(reason) }
    }
    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        stops.withLock { $0.append(error) }
    }
}

/// The replay camera against FFmpeg: raw and MJPEG files FFmpeg writes, played through the capturer, compared with
/// FFmpeg's own decoding of the same file.
@Suite("Replay camera")
struct ReplayCameraTests {
    static let size = Dimensions(width: 320, height: 240)
    static let frameCount = 6

    /// Writes `frameCount` testsrc2 frames as `muxer`/`pixelFormat`, and FFmpeg's I420 (`reference`) of that file.
    private static func media(
        muxer: String, pixelFormat: String, in directory: URL
    ) async throws -> (file: URL, reference: [UInt8]) {
        let ffmpeg = try #require(ExternalTools.ffmpeg)
        let file = directory.appendingPathComponent("clip.\(pixelFormat)")
        try await ExternalTools.run(
            ffmpeg,
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-frames:v",
                "\(frameCount)", "-pix_fmt", pixelFormat, "-f", muxer, file.path,
            ])
        let reference = directory.appendingPathComponent("reference.yuv")
        var input = ["-f", muxer]
        if muxer == "rawvideo" { input += ["-pix_fmt", pixelFormat, "-s", "\(size)"] }
        try await ExternalTools.run(
            ffmpeg,
            ["-v", "error", "-y"] + input + [
                "-i", file.path, "-f", "rawvideo", "-pix_fmt", muxer == "mjpeg" ? "yuvj420p" : "yuv420p",
                reference.path,
            ])
        return (file, Array(try Data(contentsOf: reference)))
    }

    /// Plays `source` once, paced at its rate, and waits for the end of the file. (Unpaced, a six-frame file can end
    /// before `startCapture` returns, which the capturer reports as "stopped while it was starting".)
    private static func play(_ source: ReplaySource, output: OutputPixelFormat) async throws -> ReplayRecorder {
        let recorder = ReplayRecorder()
        let capturer = CameraVideoCapturer(delegate: recorder, provider: try .replay(source, loop: false))
        capturer.outputPixelFormat = output
        let device = try #require(capturer.captureDevices().first)
        #expect(device.kind == .replay)
        #expect(device.formats.map(\.pixelFormat) == [source.pixelFormat])
        try await capturer.startCapture(device: device, target: source.dimensions)
        for _ in 0..<500 where recorder.stops.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        await capturer.stopCapture()
        return recorder
    }

    @Test(
        "YUYV, UYVY, NV12 and MJPEG files play through the converter like FFmpeg decodes them",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"),
        arguments: [
            ("rawvideo", "yuyv422", PixelFormat.yuyv), ("rawvideo", "uyvy422", .uyvy), ("rawvideo", "nv12", .nv12),
            ("mjpeg", "yuvj420p", .mjpg),
        ])
    func matchesFFmpeg(muxer: String, pixelFormat: String, format: PixelFormat) async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, reference) = try await Self.media(muxer: muxer, pixelFormat: pixelFormat, in: directory)
        let frameBytes = Self.size.area * 3 / 2
        try #require(reference.count == Self.frameCount * frameBytes)
        for output in OutputPixelFormat.allCases {
            let source = ReplaySource(path: file.path, pixelFormat: format, dimensions: Self.size, fps: 30)
            let recorder = try await Self.play(source, output: output)
            let frames = recorder.frames.withLock { $0 }
            #expect(frames.count == Self.frameCount, "\(format) → \(output)")
            #expect(recorder.drops.withLock { $0 }.isEmpty)
            #expect(recorder.stops.withLock { $0.count == 1 && $0[0] == nil })
            for (index, frame) in frames.enumerated() {
                let expected = Array(reference[index * frameBytes..<(index + 1) * frameBytes])
                let psnr = try #require(FrameQuality.psnr(packed: frame, expected, lumaCount: Self.size.area))
                if index == 0 { print("replay \(format) → \(output): frame 0 PSNR \(psnr)") }
                #expect(psnr.luma >= 40, "\(format) → \(output) frame \(index): \(psnr)")
                #expect(psnr.chroma >= 30, "\(format) → \(output) frame \(index): \(psnr)")
            }
        }
    }

    @Test(
        "a corrupt JPEG mid-stream is a counted drop; the frames around it still play",
        .enabled(if: ExternalTools.ffmpeg != nil, "ffmpeg is not installed"))
    func corruptJPEG() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (file, _) = try await Self.media(muxer: "mjpeg", pixelFormat: "yuvj420p", in: directory)
        var bytes = Array(try Data(contentsOf: file))
        // Cut the third image short, just after its headers: its decode fails, the next SOI starts frame four.
        let starts = (0..<bytes.count - 2).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 }
        try #require(starts.count == Self.frameCount)
        bytes.removeSubrange(starts[2] + 700..<starts[3])
        try Data(bytes).write(to: file)
        let source = ReplaySource(path: file.path, pixelFormat: .mjpg, dimensions: Self.size)
        let recorder = try await Self.play(source, output: .i420)
        #expect(recorder.frames.withLock { $0.count } == Self.frameCount - 1)
        #expect(recorder.drops.withLock { $0 } == [.conversionFailed])
        #expect(recorder.stops.withLock { $0.count == 1 && $0[0] == nil })
    }

    @Test("a looping file none of whose frames converts ends the stream with the reason after one pass")
    func nothingConverts() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("garbage.mjpeg")
        // Three "images": SOI, bytes that are no JPEG header, EOI.
        let image: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 500) + [0xFF, 0xD9]
        try Data(image + image + image).write(to: file)
        let recorder = ReplayRecorder()
        let source = ReplaySource(path: file.path, pixelFormat: .mjpg, dimensions: Self.size)
        let capturer = CameraVideoCapturer(delegate: recorder, provider: try .replay(source))
        try await capturer.startCapture(target: source.dimensions)
        for _ in 0..<500 where recorder.stops.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        await capturer.stopCapture()
        let stops = recorder.stops.withLock { $0 }
        #expect(stops.count == 1 && stops.first??.code == .conversionFailed, "\(stops)")
        #expect(recorder.drops.withLock { $0 } == [.conversionFailed, .conversionFailed, .conversionFailed])
        #expect(recorder.frames.withLock { $0.isEmpty })
    }

    @Test("loops back to the first frame")
    func loops() async throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("two.nv12")
        let frame = 16 * 8 * 3 / 2
        try Data([UInt8](repeating: 10, count: frame) + [UInt8](repeating: 200, count: frame)).write(to: file)
        let recorder = ReplayRecorder()
        let source = ReplaySource(path: file.path, pixelFormat: .nv12, dimensions: Dimensions(width: 16, height: 8))
        let capturer = CameraVideoCapturer(delegate: recorder, provider: try .replay(source))
        capturer.isPaced = false
        try await capturer.startCapture(target: source.dimensions)
        for _ in 0..<200 where recorder.frames.withLock({ $0.count }) < 5 {
            try await Task.sleep(for: .milliseconds(10))
        }
        await capturer.stopCapture()
        let lumas = recorder.frames.withLock { $0.prefix(5).map { $0[0] } }
        #expect(lumas == [10, 200, 10, 200, 10])
    }

    @Test("a missing file, a size that does not divide the file, an empty MJPEG file are typed errors")
    func badFiles() throws {
        let directory = try ExternalTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = Dimensions(width: 16, height: 8)
        #expect(throws: CaptureError.self) {
            try ReplayCamera.device(ReplaySource(path: "/nonexistent.yuyv", pixelFormat: .yuyv, dimensions: size))
        }
        do {
            _ = try ReplayCamera.device(ReplaySource(path: "/nonexistent.yuyv", pixelFormat: .yuyv, dimensions: size))
        } catch {
            #expect(error.code == .deviceNotFound)
        }
        let odd = directory.appendingPathComponent("odd.yuyv")
        try Data(count: 16 * 8 * 2 * 3 + 5).write(to: odd)
        do {
            _ = try ReplayCamera.device(ReplaySource(path: odd.path, pixelFormat: .yuyv, dimensions: size))
            Issue.record("expected malformedFile")
        } catch {
            #expect(error.code == .malformedFile)
            #expect(error.message.contains("whole number"))
        }
        let noJPEG = directory.appendingPathComponent("none.mjpeg")
        try Data(count: 1000).write(to: noJPEG)
        do {
            _ = try ReplayCamera.device(ReplaySource(path: noJPEG.path, pixelFormat: .mjpg, dimensions: size))
            Issue.record("expected malformedFile")
        } catch {
            #expect(error.code == .malformedFile)
        }
    }

    @Test(
        "the command-line form FILE:FORMAT:WxH[@FPS] parses, file names may hold colons, and bad parts are named",
        arguments: [
            ("a.yuyv:YUYV:640x480", "a.yuyv", PixelFormat.yuyv, 640, 30.0),
            ("dir:x/b.mjpeg:mjpg:1920x1080@15", "dir:x/b.mjpeg", .mjpg, 1920, 15),
        ])
    func parsing(text: String, path: String, format: PixelFormat, width: Int, fps: Double) throws {
        let source = try ReplaySource(parsing: text)
        #expect(source.path == path)
        #expect(source.pixelFormat == format)
        #expect(source.dimensions.width == width)
        #expect(source.fps == fps)
    }

    @Test(
        "bad command-line forms are invalidArgument",
        arguments: ["a.yuyv", "a:YUYV:640", "a:H264:640x480", "a:YUYV:640x480@0"])
    func badParsing(text: String) {
        do {
            _ = try ReplaySource(parsing: text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
