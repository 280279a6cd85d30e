import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

/// Camera → CameraVideoCapturer → VP8EncodingConsumer → IVF → our decoder, vpxdec and ffmpeg.
@Suite("VP8 loopback through the capturer", .tags(.interop), .selectedByTags, .serialized)
struct LoopbackTests {
    static let vga = Dimensions(width: 640, height: 480)
    static let frameCount = 60

    /// Records what the capturer delivered (packed I420 by capture time) and forwards the first `limit` frames to the
    /// encoding consumer.
    final class Recorder: CameraVideoCapturerDelegate {
        struct Recorded {
            var source: [UInt64: [UInt8]] = [:]
            var order: [UInt64] = []
            var rotations: Set<VideoRotation> = []
            var stopped = false
            var stopError: CaptureError?
        }
        let consumer: VP8EncodingConsumer
        let limit: Int
        let recorded = Locked(Recorded())

        init(consumer: VP8EncodingConsumer, limit: Int) {
            self.consumer = consumer
            self.limit = limit
        }

        func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
            let take = recorded.withLock { r -> Bool in
                guard r.order.count < limit else { return false }
                r.order.append(frame.timestampNs)
                r.source[frame.timestampNs] = frame.buffer.packedI420()
                r.rotations.insert(frame.rotation)
                return true
            }
            if take { consumer.capturer(capturer, didCapture: frame) }
        }

        func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
            recorded.withLock { r in
                r.stopped = true
                r.stopError = error
            }
        }

        var count: Int { recorded.withLock { $0.order.count } }
        var stopped: Bool { recorded.withLock { $0.stopped } }
    }

    enum Source: String, CaseIterable, CustomTestStringConvertible {
        case syntheticNV12, y4mNV12, y4mI420
        var testDescription: String { rawValue }
        var output: OutputPixelFormat { self == .y4mI420 ? .i420 : .nv12 }
    }

    /// Parses a 4:2:0 Y4M file into packed I420 frames.
    static func y4mFrames(_ url: URL, dimensions: Dimensions) throws -> [[UInt8]] {
        let data = [UInt8](try Data(contentsOf: url))
        let frameBytes = dimensions.area * 3 / 2
        var index = try #require(data.firstIndex(of: 0x0A)) + 1
        var frames: [[UInt8]] = []
        while index < data.count {
            let marker = try #require(data[index...].firstIndex(of: 0x0A))
            let start = marker + 1
            try #require(start + frameBytes <= data.count)
            frames.append(Array(data[start..<start + frameBytes]))
            index = start + frameBytes
        }
        return frames
    }

    @Test(
        "640x480 at 2 Mbit/s: same frames from our decoder, vpxdec and ffmpeg; PSNR ≥ 35 dB; timestamps and rotation",
        .enabled(if: TestMedia.haveDecoders, "vpxdec/ffmpeg missing"), arguments: Source.allCases)
    func loopback(source: Source) async throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("loopback.ivf")

        // The camera.
        let provider: CameraProvider
        var clip: [[UInt8]]?
        switch source {
        case .syntheticNV12:
            provider = .builtIn
        case .y4mNV12, .y4mI420:
            let y4m = dir.appendingPathComponent("clip.y4m")
            let made = try await TestMedia.run(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x480:rate=30", "-frames:v",
                    "\(Self.frameCount)", "-pix_fmt", "yuv420p", y4m.path,
                ])
            try #require(made.status == 0, "ffmpeg could not make the clip: \(made.stderr)")
            clip = try Self.y4mFrames(y4m, dimensions: Self.vga)
            provider = try CameraProvider.y4m([y4m.path], loop: false)
        }

        // Capture and encode.
        let encodedFrames = Locked<[EncodedFrame]>([])
        let consumer = try VP8EncodingConsumer(
            configuration: VP8EncoderConfiguration(targetBitrateKbps: 2000, framerate: 30), ivfPath: ivf.path
        ) { frame in encodedFrames.withLock { $0.append(frame) } }
        let recorder = Recorder(consumer: consumer, limit: Self.frameCount)
        let capturer = CameraVideoCapturer(delegate: recorder, provider: provider)
        capturer.outputPixelFormat = source.output
        capturer.deviceOrientation = .portrait
        let device = try #require(capturer.captureDevices().first)
        try await capturer.startCapture(device: device, target: Self.vga, fpsLimit: 30)
        let deadline = ContinuousClock.now + .seconds(30)
        while recorder.count < Self.frameCount && !recorder.stopped && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await capturer.stopCapture()
        let statistics = try consumer.finish()
        let recorded = recorder.recorded.withLock { $0 }
        let encoded = encodedFrames.withLock { $0 }
        #expect(recorded.stopError == nil)
        try #require(recorded.order.count == Self.frameCount, "the camera delivered \(recorded.order.count) frames")
        #expect(statistics.framesReceived == Self.frameCount && statistics.failures == 0)
        #expect(statistics.framesEncoded + statistics.framesDroppedByRateControl == Self.frameCount)
        #expect(encoded.count == statistics.framesEncoded && encoded.count >= Self.frameCount - 5)

        // The source really is the clip.
        if let clip {
            let same = recorded.order.map { recorded.source[$0] ?? [] } == Array(clip.prefix(Self.frameCount))
            #expect(same, "the frames the capturer delivered are not the clip's")
        }

        // Encoded frames: first a key frame, timestamps strictly increasing, rotation kept.
        #expect(encoded.first?.isKeyFrame == true)
        #expect(recorded.rotations == [.degrees90])
        #expect(encoded.allSatisfy { $0.rotation == .degrees90 && $0.dimensions == Self.vga })
        #expect(zip(encoded, encoded.dropFirst()).allSatisfy { $0.captureTimeNs < $1.captureTimeNs })
        #expect(
            zip(encoded, encoded.dropFirst()).allSatisfy { Int32(bitPattern: $1.rtpTimestamp &- $0.rtpTimestamp) > 0 })
        #expect(encoded.allSatisfy { $0.rtpTimestamp == EncodedFrame.rtpTimestamp(fromNanoseconds: $0.captureTimeNs) })

        // The IVF file holds the same frames, with increasing pts.
        let reader = try IVFReader(path: ivf.path)
        let stored = try reader.readAll()
        #expect(Int(reader.header.frameCount) == encoded.count && reader.header.dimensions == Self.vga)
        let storedSame = stored.map(\.bytes) == encoded.map(\.bytes)
        #expect(storedSame)
        #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.pts < $1.pts })

        // Three decoders.
        let decoder = try VP8Decoder()
        var ours = Data()
        var sourceBytes = Data()
        var decodedFrames: [[UInt8]] = [], sourceFrames: [[UInt8]] = []
        for frame in encoded {
            let picture = try #require(try decoder.decode(frame))
            #expect(picture.rotation == .degrees90 && picture.timestampNs == frame.captureTimeNs)
            let packed = picture.buffer.packedI420()
            let original = try #require(recorded.source[frame.captureTimeNs])
            ours.append(contentsOf: packed)
            sourceBytes.append(contentsOf: original)
            decodedFrames.append(packed)
            sourceFrames.append(original)
        }
        let external = try await TestMedia.externalDecodes(of: ivf, in: dir, maxFrames: encoded.count + 10)
        let frameBytes = Self.vga.area * 3 / 2
        #expect(external.vpxdec.count / frameBytes == encoded.count)
        #expect(external.ffmpeg.count / frameBytes == encoded.count)
        // Compare to Bools first: a failing #expect on megabytes would diff them element by element.
        let vpxdecSame = external.vpxdec == ours, ffmpegSame = external.ffmpeg == ours
        #expect(
            vpxdecSame,
            "vpxdec output differs from ours: \(TestMedia.firstDifference(external.vpxdec, ours, frameBytes))")
        #expect(
            ffmpegSame,
            "ffmpeg output differs from ours: \(TestMedia.firstDifference(external.ffmpeg, ours, frameBytes))")

        let psnr = TestMedia.meanPSNR(decodedFrames, sourceFrames, dimensions: Self.vga)
        let worst =
            zip(decodedFrames, sourceFrames).map { TestMedia.psnr($0, $1, lumaBytes: Self.vga.area).y }.min() ?? 0
        print(
            "loopback \(source.rawValue): \(encoded.count)/\(Self.frameCount) frames encoded, "
                + "\(statistics.keyFrames) key, \(statistics.encodedBytes) bytes; PSNR Y \(psnr.y) dB "
                + "(worst frame \(worst)), overall \(psnr.all) dB")
        #expect(psnr.y >= 35 && psnr.all >= 35)
    }

    @Test("loopback tools present (or skipped loudly)")
    func toolsNote() {
        TestMedia.noteIfDecodersMissing("VP8 loopback tests")
    }
}
