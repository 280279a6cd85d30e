import CaptureCall
import CaptureConversion
import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

@Suite("SendPipeline", .serialized)
struct PipelineTests {
    static let noOveruse = OveruseConfiguration(enabled: false)

    /// Hands `frame` to the pipeline as the capturer would and waits until the encoder has dealt with it.
    static func feed(_ pipeline: SendPipeline, _ frame: VideoFrame, via capturer: CameraVideoCapturer) async throws {
        let before = handled(pipeline.statistics)
        pipeline.capturer(capturer, didCapture: frame)
        let done = try await PipelineFixtures.wait { handled(pipeline.statistics) > before }
        try #require(done, "the encoder did not take frame \(frame.sequenceNumber)")
    }

    static func handled(_ statistics: SendPipelineStatistics) -> Int {
        statistics.framesEncoded + statistics.droppedByRateControl + statistics.encodeFailures
    }

    @Test("a slow encoder never holds the camera: frames keep coming, the capturer drops none, the mailbox drops")
    func slowEncoder() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: Self.noOveruse), sinks: [sink])
        pipeline.encodeDelayForTesting = .milliseconds(100)
        let tee = CountingTee(pipeline)
        let capturer = CameraVideoCapturer(delegate: tee)
        let start = ContinuousClock.now
        let configuration = try await capturer.startCapture(target: PipelineFixtures.qvga, fpsLimit: 30)
        let reached = try await PipelineFixtures.wait { tee.count >= 60 }
        await capturer.stopCapture()
        let elapsed = ContinuousClock.now - start
        await pipeline.stop()
        let statistics = pipeline.statistics
        let capture = capturer.statistics
        print(
            "slow encoder (100 ms/frame) at \(configuration.granted.fps) fps: \(tee.count) frames delivered in \(elapsed), "
                + "\(statistics.framesEncoded) encoded, \(statistics.droppedAtEncoderQueue) dropped at the mailbox")
        withExtendedLifetime(tee) {}
        #expect(reached, "only \(tee.count) frames reached the delegate")
        #expect(capture.framesDropped == 0, "the capturer dropped frames: \(capture)")
        #expect(statistics.framesReceived == tee.count)
        // Drops at the mailbox are what prove the camera was not held: a hand-off that waited for the encoder would
        // never drop. (How many more frames the camera delivered than the encoder took depends on the machine's
        // load: a sanitized parallel run slowed the synthetic camera to 9.7 fps, near the encoder's 10.)
        #expect(statistics.droppedAtEncoderQueue > 0)
        #expect(statistics.framesEncoded < statistics.framesReceived)
        let accounted =
            statistics.droppedByAdapter + statistics.droppedAtEncoderQueue + statistics.framesEncoded
            + statistics.droppedByRateControl + statistics.encodeFailures
        #expect((0...1).contains(statistics.framesReceived - accounted), "\(statistics)")
        #expect(sink.count == statistics.framesEncoded)
        #expect(statistics.meanEncodeTime >= .milliseconds(100))
    }

    @Test("requestKeyFrame: the next encoded frame is a key frame; counted by reason and reported")
    func keyFrameRequest() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: Self.noOveruse), sinks: [sink])
        let capturer = CameraVideoCapturer()
        for index in 0..<5 {
            try await Self.feed(
                pipeline, PipelineFixtures.markedFrame(PipelineFixtures.qvga, index: index), via: capturer)
        }
        pipeline.requestKeyFrame(reason: .pictureLossIndication)
        for index in 5..<8 {
            try await Self.feed(
                pipeline, PipelineFixtures.markedFrame(PipelineFixtures.qvga, index: index), via: capturer)
        }
        await pipeline.stop()
        #expect(sink.frames.map(\.isKeyFrame) == [true, false, false, false, false, true, false, false])
        let statistics = pipeline.statistics
        #expect(statistics.keyFrames == 2 && statistics.keyFramesRequested == [.pictureLossIndication: 1])
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events { events.append(event) }
        #expect(events == [.keyFrameRequested(.pictureLossIndication)])
    }

    @Test("setTargetBitrate clamps to the configured range and is applied by the encoder")
    func bitrateClamp() async throws {
        #expect(throws: CaptureError.self) {
            try SendPipeline(
                configuration: SendPipelineConfiguration(minBitrateKbps: 500, maxBitrateKbps: 100), sinks: [])
        }
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(
                minBitrateKbps: 100, maxBitrateKbps: 1000, overuse: Self.noOveruse),
            sinks: [])
        let capturer = CameraVideoCapturer()
        try await Self.feed(pipeline, PipelineFixtures.markedFrame(PipelineFixtures.qvga, index: 0), via: capturer)
        #expect(pipeline.setTargetBitrate(kbps: 20, reason: .receiverEstimate) == 100)
        #expect(pipeline.setTargetBitrate(kbps: 50_000, reason: .temporaryMaximum) == 1000)
        #expect(pipeline.setTargetBitrate(kbps: 400, reason: .application) == 400)
        #expect(pipeline.setTargetBitrate(kbps: 400, reason: .application) == 400)
        try await Self.feed(pipeline, PipelineFixtures.markedFrame(PipelineFixtures.qvga, index: 1), via: capturer)
        await pipeline.stop()
        let statistics = pipeline.statistics
        #expect(statistics.currentTargetKbps == 400 && statistics.bitrateChanges == 3)
        #expect(statistics.encodeFailures == 0)
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events { events.append(event) }
        #expect(
            events == [
                .bitrateChanged(requestedKbps: 20, appliedKbps: 100, reason: .receiverEstimate),
                .bitrateChanged(requestedKbps: 50_000, appliedKbps: 1000, reason: .temporaryMaximum),
                .bitrateChanged(requestedKbps: 400, appliedKbps: 400, reason: .application),
            ])
    }

    @Test("CPU overuse steps the resolution down, underuse steps it back up (injected encode times)")
    func overuseEndToEnd() async throws {
        let sink = RecordingSink()
        let overuse = OveruseConfiguration(
            windowFrames: 5, overuseWindows: 2, underuseWindows: 2, minimumPixels: 480 * 360)
        let pipeline = try SendPipeline(configuration: SendPipelineConfiguration(overuse: overuse), sinks: [sink])
        let overusing = Locked(true)
        pipeline.injectEncodeDurationsForTesting { _ in overusing.withLock { $0 } ? .milliseconds(60) : .milliseconds(1)
        }
        let capturer = CameraVideoCapturer(delegate: pipeline)
        try await capturer.startCapture(target: Dimensions(width: 640, height: 480), fpsLimit: 30)
        let full = try #require(
            try await PipelineFixtures.wait { sink.count > 0 } ? sink.frames.first?.dimensions : nil)
        let down = try await PipelineFixtures.wait { pipeline.statistics.resolutionStepsDown >= 1 }
        overusing.withLock { $0 = false }
        let up = try await PipelineFixtures.wait { pipeline.statistics.resolutionStepsUp >= 1 }
        let settled = sink.count
        _ = try await PipelineFixtures.wait { sink.count >= settled + 3 }
        await capturer.stopCapture()
        await pipeline.stop()
        #expect(down && up)
        let statistics = pipeline.statistics
        #expect(statistics.resolutionStepsDown == 1 && statistics.resolutionStepsUp == 1, "\(statistics)")
        let reduced = Dimensions(width: full.width * 3 / 4, height: full.height * 3 / 4)
        var sizes: [Dimensions] = []
        for size in sink.frames.map(\.dimensions) where sizes.last != size { sizes.append(size) }
        #expect(sizes == [full, reduced, full])
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events {
            if case .resolutionChanged = event { events.append(event) }
        }
        #expect(
            events == [
                .resolutionChanged(level: 1, maximum: reduced, stepUp: false),
                .resolutionChanged(level: 0, maximum: full, stepUp: true),
            ])
    }

    @Test("rotatePixels: a 90° frame is encoded upright with rotation 0; without it the rotation stays a tag")
    func rotatePixels() async throws {
        let capturer = CameraVideoCapturer()
        let size = PipelineFixtures.qvga
        for rotate in [true, false] {
            let sink = RecordingSink()
            let pipeline = try SendPipeline(
                configuration: SendPipelineConfiguration(rotatePixels: rotate, overuse: Self.noOveruse), sinks: [sink])
            try await Self.feed(
                pipeline, PipelineFixtures.markedFrame(size, index: 0, rotation: .degrees90), via: capturer)
            await pipeline.stop()
            let encoded = try #require(sink.frames.first)
            let decoded = try #require(try VP8Decoder().decode(encoded))
            let means = PipelineFixtures.quadrantMeans(decoded.buffer)
            if rotate {
                #expect(encoded.rotation == .degrees0 && encoded.dimensions == Dimensions(width: 240, height: 320))
                // Turned clockwise, the bright top-left block is now top-right.
                #expect(means[1] > 150 && means[0] < 80 && means[2] < 80 && means[3] < 80, "\(means)")
            } else {
                #expect(encoded.rotation == .degrees90 && encoded.dimensions == size)
                #expect(means[0] > 150 && means[1] < 80, "\(means)")
            }
        }
    }

    @Test("rotatePixels with a portrait device: rotated dimensions, rotation 0, decodable")
    func rotatePixelsPortraitCamera() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(rotatePixels: true, overuse: Self.noOveruse), sinks: [sink])
        let capturer = CameraVideoCapturer(delegate: pipeline)
        capturer.deviceOrientation = .portrait
        let configuration = try await capturer.startCapture(target: PipelineFixtures.qvga, fpsLimit: 30)
        _ = try await PipelineFixtures.wait { sink.count >= 5 }
        await capturer.stopCapture()
        await pipeline.stop()
        let frames = sink.frames
        try #require(frames.count >= 5)
        let rotated = configuration.granted.dimensions.applying(capturer.rotation)
        #expect(capturer.rotation == .degrees90 || capturer.rotation == .degrees270)
        #expect(frames.allSatisfy { $0.rotation == .degrees0 && $0.dimensions == rotated })
        let decoder = try VP8Decoder()
        for frame in frames {
            let decoded = try #require(try decoder.decode(frame))
            #expect(decoded.buffer.dimensions == rotated)
        }
    }

    @Test(
        "IVFFileSink output decodes with vpxdec",
        .enabled(if: ExternalProcess.which("vpxdec") != nil, "vpxdec not installed (Scripts/install-deps): skipping"))
    func ivfSinkDecodes() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("out.ivf")
        let ivfSink = IVFFileSink(path: ivf.path)
        let badSink = IVFFileSink(path: "/nonexistent-dir/out.ivf")
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: Self.noOveruse), sinks: [badSink, ivfSink])
        let capturer = CameraVideoCapturer()
        for index in 0..<10 {
            try await Self.feed(
                pipeline, PipelineFixtures.markedFrame(PipelineFixtures.qvga, index: index), via: capturer)
        }
        await pipeline.stop()
        #expect(ivfSink.statistics.framesWritten == 10 && ivfSink.statistics.failures == 0)
        #expect(badSink.statistics.failures == 10 && badSink.lastError?.code == .ioFailure)
        let yuv = dir.appendingPathComponent("out.yuv")
        let result = try await ExternalProcess.run("vpxdec", ["--i420", "-o", yuv.path, ivf.path])
        #expect(result.status == 0, "vpxdec: \(result.stderrText)")
        let decoded = try Data(contentsOf: yuv)
        let expectedBytes: Int = 10 * PipelineFixtures.qvga.width * PipelineFixtures.qvga.height * 3 / 2
        #expect(decoded.count == expectedBytes)
    }

    @Test("vpxdec present (or the IVF test is skipped loudly)")
    func vpxdecNote() {
        if ExternalProcess.which("vpxdec") == nil {
            print("SKIPPED SendPipeline IVFFileSink decode test: vpxdec not installed (Scripts/install-deps)")
        }
    }

    @Test("stop() is idempotent, joins the encoder, finishes sinks once; nothing reaches them afterwards")
    func stopIsFinal() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: Self.noOveruse), sinks: [sink])
        pipeline.encodeDelayForTesting = .milliseconds(20)
        let capturer = CameraVideoCapturer(delegate: pipeline)
        try await capturer.startCapture(target: PipelineFixtures.qvga, fpsLimit: 30)
        _ = try await PipelineFixtures.wait { sink.count >= 3 }
        // Stop while the camera still delivers, from two threads at once.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 { group.addTask { await pipeline.stop() } }
        }
        let afterStop = (sink.count, pipeline.statistics)
        try await Task.sleep(for: .milliseconds(200))
        await pipeline.stop()
        await capturer.stopCapture()
        let recorded = sink.recorded.withLock { $0 }
        #expect(recorded.finishCount == 1 && recorded.framesAfterFinish == 0)
        #expect(sink.count == afterStop.0)
        #expect(pipeline.statistics.framesReceived == afterStop.1.framesReceived)
        #expect(pipeline.statistics.framesEncoded == afterStop.1.framesEncoded)
        pipeline.requestKeyFrame(reason: .application)
        #expect(pipeline.statistics.keyFramesRequested.isEmpty)
    }

    @Test("measure: capture → encoded-frame hand-off latency at 640x480 and 1280x720 (printed, not asserted)")
    func handOffLatency() async throws {
        for target in [Dimensions(width: 640, height: 480), Dimensions(width: 1280, height: 720)] {
            let sink = RecordingSink()
            let pipeline = try SendPipeline(
                configuration: SendPipelineConfiguration(overuse: Self.noOveruse), sinks: [sink])
            let capturer = CameraVideoCapturer(delegate: pipeline)
            let configuration = try await capturer.startCapture(target: target, fpsLimit: 30)
            _ = try await PipelineFixtures.wait(timeout: .seconds(30)) { sink.count >= 150 }
            await capturer.stopCapture()
            await pipeline.stop()
            let latencies = Array(sink.recorded.withLock { $0.latenciesNs }.dropFirst(10))
            let statistics = pipeline.statistics
            func ms(_ ns: UInt64) -> String { "\(Double(ns / 10_000) / 100) ms" }
            func ms(_ time: Duration) -> String { "\((time.inMilliseconds * 100).rounded() / 100) ms" }
            print(
                "MEASURE hand-off \(configuration.granted.dimensions) \(configuration.output): \(latencies.count) frames, "
                    + "p50 \(ms(PipelineFixtures.percentile(latencies, 0.5))), "
                    + "p99 \(ms(PipelineFixtures.percentile(latencies, 0.99))), "
                    + "encode mean \(ms(statistics.meanEncodeTime)) max \(ms(statistics.maxEncodeTime)), "
                    + "mailbox drops \(statistics.droppedAtEncoderQueue)")
            #expect(statistics.encodeFailures == 0)
        }
    }
}
