import CaptureCall
import CaptureConversion
import CaptureCore
import CaptureVP8
import Foundation
import Testing

/// `SendPipeline` with simulcast, driven with synthetic frames handed straight to the pipeline (no camera, no timing
/// assertions).
@Suite("SendPipeline simulcast", .serialized)
struct SimulcastPipelineTests {
    static let noOveruse = OveruseConfiguration(enabled: false)
    static let hd = Dimensions(width: 1280, height: 720)

    /// Two frames of `size` to alternate (making a 1280x720 frame pixel by pixel is slow in a debug build).
    static func frames(_ size: Dimensions) -> [VideoFrame] {
        (0..<2).map { PipelineFixtures.markedFrame(size, index: $0) }
    }

    /// Frame `index`: one of `frames`, with its own capture time and sequence number.
    static func frame(_ frames: [VideoFrame], _ index: Int) -> VideoFrame {
        VideoFrame(
            buffer: frames[index % frames.count].buffer, rotation: .degrees0,
            timestampNs: UInt64(index + 1) * 33_333_333, sequenceNumber: UInt64(index))
    }

    static func pipeline(
        targetKbps: Int, sink: RecordingSink, overuse: OveruseConfiguration = noOveruse,
        simulcast: SimulcastConfiguration? = SimulcastConfiguration()
    ) throws -> SendPipeline {
        try SendPipeline(
            configuration: SendPipelineConfiguration(
                encoder: VP8EncoderConfiguration(targetBitrateKbps: targetKbps), overuse: overuse,
                simulcast: simulcast),
            sinks: [sink])
    }

    /// Feeds frames `range` and waits for each to be handled.
    static func feed(
        _ pipeline: SendPipeline, _ frames: [VideoFrame], _ range: Range<Int>, via capturer: CameraVideoCapturer
    ) async throws {
        for index in range { try await PipelineTests.feed(pipeline, frame(frames, index), via: capturer) }
    }

    static func events(_ pipeline: SendPipeline) async -> [SendPipelineEvent] {
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events { events.append(event) }
        return events
    }

    @Test("1280x720: three layers 320x180/640x360/1280x720, each its own decodable stream of the right size")
    func threeLayers() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 3_000, sink: sink)
        let capturer = CameraVideoCapturer()
        let frames = Self.frames(Self.hd)
        try await Self.feed(pipeline, frames, 0..<4, via: capturer)
        await pipeline.stop()
        let sizes = [Dimensions(width: 320, height: 180), Dimensions(width: 640, height: 360), Self.hd]
        let encoded = sink.frames
        #expect(encoded.count == 12, "\(encoded.map { ($0.simulcastIndex, $0.dimensions) })")
        // Lowest layer first within each frame.
        #expect(encoded.map(\.simulcastIndex) == Array(repeating: [0, 1, 2], count: 4).flatMap { $0 })
        for index in 0..<3 {
            let layer = encoded.filter { $0.simulcastIndex == index }
            #expect(layer.allSatisfy { $0.dimensions == sizes[index] })
            #expect(layer.map(\.isKeyFrame) == [true, false, false, false])
            // Three temporal layers by default: 0 2 1 2.
            #expect(layer.map { $0.temporalLayer?.index } == [0, 2, 1, 2])
            let decoder = try VP8Decoder()
            for frame in layer {
                let picture = try #require(try decoder.decode(frame))
                #expect(picture.buffer.dimensions == sizes[index])
            }
        }
        let statistics = pipeline.statistics
        #expect(statistics.layers.map(\.dimensions) == sizes)
        #expect(statistics.layers.map(\.isActive) == [true, true, true])
        // 3000 kbit/s: 150 + 500 + 2350.
        #expect(statistics.layers.map(\.targetKbps) == [150, 500, 2350])
        #expect(
            statistics.layers.map(\.framesEncoded) == [4, 4, 4] && statistics.layers.map(\.keyFrames) == [1, 1, 1])
        #expect(
            statistics.layers.map(\.bytesEncoded)
                == sizes.indices.map { index in
                    encoded.filter { $0.simulcastIndex == index }.reduce(0) { $0 + $1.bytes.count }
                })
        #expect(statistics.framesEncoded == 12 && statistics.keyFrames == 3 && statistics.encodeFailures == 0)
        #expect(statistics.currentOutputSize == Self.hd)
        #expect(pipeline.bitrateRange == 30...3150 && statistics.currentTargetKbps == 3_000)
        let events = await Self.events(pipeline)
        #expect(
            events.contains(
                .simulcastLayoutChanged(
                    streams: SimulcastLayout(
                        input: Self.hd, maxLayers: 3, temporalLayers: 3
                    ).streams)))
        #expect(events.contains(.simulcastLayerChanged(index: 2, active: true, kbps: 2350)))
    }

    @Test("640x480: two layers 320x240/640x480")
    func twoLayers() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 1_000, sink: sink)
        let capturer = CameraVideoCapturer()
        let vga = Dimensions(width: 640, height: 480)
        try await Self.feed(pipeline, Self.frames(vga), 0..<2, via: capturer)
        await pipeline.stop()
        let encoded = sink.frames
        #expect(encoded.map(\.simulcastIndex) == [0, 1, 0, 1])
        #expect(
            encoded.map(\.dimensions) == [
                Dimensions(width: 320, height: 240), vga, Dimensions(width: 320, height: 240), vga,
            ])
        for index in 0..<2 {
            let decoder = try VP8Decoder()
            for frame in encoded where frame.simulcastIndex == index {
                #expect(try decoder.decode(frame)?.buffer.dimensions == frame.dimensions)
            }
        }
        // 203 + 833.
        #expect(pipeline.bitrateRange == 62...1036)
        #expect(pipeline.statistics.layers.count == 2)
    }

    @Test("the top layer stops below its min and comes back, with a key frame, only above 1.2 × its min")
    func topLayerOffAndOn() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 2_000, sink: sink)
        let capturer = CameraVideoCapturer()
        let frames = Self.frames(Self.hd)
        func layers(since start: Int) -> [[Int]] {
            // The layers of each input frame handed over since `start` encoded frames.
            var result: [[Int]] = []
            var lastCapture: UInt64?
            for frame in sink.frames.dropFirst(start) {
                if frame.captureTimeNs != lastCapture { result.append([]) }
                lastCapture = frame.captureTimeNs
                result[result.count - 1].append(frame.simulcastIndex)
            }
            return result
        }
        try await Self.feed(pipeline, frames, 0..<3, via: capturer)
        #expect(layers(since: 0) == [[0, 1, 2], [0, 1, 2], [0, 1, 2]])
        // 1000 < 150 + 500 + 600: the top layer is off.
        #expect(pipeline.setTargetBitrate(kbps: 1_000, reason: .senderEstimate) == 1_000)
        var mark = sink.count
        try await Self.feed(pipeline, frames, 3..<6, via: capturer)
        #expect(layers(since: mark) == [[0, 1], [0, 1], [0, 1]])
        #expect(pipeline.statistics.layers.map(\.isActive) == [true, true, false])
        #expect(pipeline.statistics.qualityLimitationReason == .bandwidth)
        // 1300 ≥ 1250 but < 150 + 500 + 720: still off.
        pipeline.setTargetBitrate(kbps: 1_300, reason: .senderEstimate)
        mark = sink.count
        try await Self.feed(pipeline, frames, 6..<9, via: capturer)
        #expect(layers(since: mark) == [[0, 1], [0, 1], [0, 1]])
        // 1400: 750 left ≥ 720, back on, starting with a key frame on that layer only.
        pipeline.setTargetBitrate(kbps: 1_400, reason: .senderEstimate)
        mark = sink.count
        try await Self.feed(pipeline, frames, 9..<12, via: capturer)
        #expect(layers(since: mark) == [[0, 1, 2], [0, 1, 2], [0, 1, 2]])
        let back = sink.frames.dropFirst(mark)
        #expect(back.filter { $0.simulcastIndex == 2 }.map(\.isKeyFrame) == [true, false, false])
        #expect(back.filter { $0.simulcastIndex < 2 }.allSatisfy { !$0.isKeyFrame })
        await pipeline.stop()
        let statistics = pipeline.statistics
        #expect(statistics.layers[2].deactivations == 1 && statistics.layers[2].activations == 1)
        #expect(statistics.layers.map(\.targetKbps) == [150, 500, 750])
        #expect(statistics.qualityLimitationReason == QualityLimitationReason.none)
        // The layer-2 stream decodes across the gap: it restarted with a key frame.
        let decoder = try VP8Decoder()
        for frame in sink.frames where frame.simulcastIndex == 2 {
            #expect(try decoder.decode(frame)?.buffer.dimensions == Self.hd)
        }
        let switches = await Self.events(pipeline).filter {
            if case .simulcastLayerChanged(index: 2, _, _) = $0 { return true }
            return false
        }
        #expect(
            switches == [
                .simulcastLayerChanged(index: 2, active: true, kbps: 1_350),
                .simulcastLayerChanged(index: 2, active: false, kbps: 0),
                .simulcastLayerChanged(index: 2, active: true, kbps: 750),
            ])
    }

    @Test("a key-frame request for layer 1 makes a key frame on layer 1 only; nil on every layer")
    func keyFrameOnOneLayer() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 3_000, sink: sink)
        let capturer = CameraVideoCapturer()
        let frames = Self.frames(Self.hd)
        try await Self.feed(pipeline, frames, 0..<2, via: capturer)
        pipeline.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: 1)
        var mark = sink.count
        try await Self.feed(pipeline, frames, 2..<4, via: capturer)
        let afterLayer = sink.frames.dropFirst(mark).map { [$0.simulcastIndex, $0.isKeyFrame ? 1 : 0] }
        #expect(afterLayer == [[0, 0], [1, 1], [2, 0], [0, 0], [1, 0], [2, 0]])
        pipeline.requestKeyFrame(reason: .fullIntraRequest)
        mark = sink.count
        try await Self.feed(pipeline, frames, 4..<5, via: capturer)
        #expect(sink.frames.dropFirst(mark).map(\.isKeyFrame) == [true, true, true])
        // A layer the layout does not have: counted, no key frame.
        pipeline.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: 5)
        pipeline.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: -1)
        mark = sink.count
        try await Self.feed(pipeline, frames, 5..<6, via: capturer)
        #expect(sink.frames.dropFirst(mark).map(\.isKeyFrame) == [false, false, false])
        await pipeline.stop()
        let statistics = pipeline.statistics
        #expect(statistics.keyFramesRequested == [.pictureLossIndication: 3, .fullIntraRequest: 1])
        #expect(statistics.layers.map(\.keyFrames) == [2, 3, 2])
    }

    @Test("setTargetBitrate clamps to the layout's range: the lowest min … lower targets + the top's max")
    func bitrateRange() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 1_000, sink: sink)
        let capturer = CameraVideoCapturer()
        // Before the first frame: the configured range (no output request).
        #expect(pipeline.bitrateRange == 50...2_500)
        #expect(pipeline.paddingTargetKbps == 0, "no layout yet")
        try await Self.feed(pipeline, Self.frames(Self.hd), 0..<1, via: capturer)
        #expect(pipeline.bitrateRange == 30...3_150)
        #expect(pipeline.paddingTargetKbps == 1_370, "the layout's: 150 + 500 + 1.2 × 600")
        #expect(pipeline.setTargetBitrate(kbps: 10_000, reason: .receiverEstimate) == 3_150)
        #expect(pipeline.setTargetBitrate(kbps: 10, reason: .receiverEstimate) == 30)
        try await Self.feed(pipeline, Self.frames(Self.hd), 1..<2, via: capturer)
        #expect(pipeline.statistics.layers.map(\.targetKbps) == [30, 0, 0])
        await pipeline.stop()
        // With an output request, its layout's range from the start.
        let requested = try SendPipeline(
            configuration: SendPipelineConfiguration(
                outputRequest: VideoAdapter.OutputFormatRequest(width: 640, height: 360, fps: 30),
                simulcast: SimulcastConfiguration()),
            sinks: [])
        #expect(requested.bitrateRange == 30...850)
        #expect(requested.paddingTargetKbps == 150 + 180)
        await requested.stop()
        #expect(throws: CaptureError.self) {
            try SendPipeline(
                configuration: SendPipelineConfiguration(simulcast: SimulcastConfiguration(maxLayers: 4)), sinks: [])
        }
        #expect(throws: CaptureError.self) {
            try SendPipeline(
                configuration: SendPipelineConfiguration(simulcast: SimulcastConfiguration(temporalLayers: 0)),
                sinks: [])
        }
    }

    @Test("CPU overuse still scales the input; the layers are laid out again (1280x720 → 960x540 → 640x360)")
    func overuseRelayout() async throws {
        let sink = RecordingSink()
        let overuse = OveruseConfiguration(windowFrames: 3, overuseWindows: 1, underuseWindows: 100)
        let pipeline = try Self.pipeline(targetKbps: 3_000, sink: sink, overuse: overuse)
        // 60 ms of a 33 ms interval: overuse; then 20 ms, neither over- nor underuse.
        let overusing = Locked(true)
        pipeline.injectEncodeDurationsForTesting { _ in
            overusing.withLock { $0 } ? .milliseconds(60) : .milliseconds(20)
        }
        let capturer = CameraVideoCapturer()
        let frames = Self.frames(Self.hd)
        var index = 0
        while pipeline.statistics.resolutionStepsDown < 2, index < 40 {
            try await Self.feed(pipeline, frames, index..<(index + 1), via: capturer)
            index += 1
        }
        overusing.withLock { $0 = false }
        try await Self.feed(pipeline, frames, index..<(index + 2), via: capturer)
        await pipeline.stop()
        let layouts = await Self.events(pipeline).compactMap { event -> [Dimensions]? in
            if case .simulcastLayoutChanged(let streams) = event { return streams.map(\.dimensions) }
            return nil
        }
        func size(_ width: Int, _ height: Int) -> Dimensions { Dimensions(width: width, height: height) }
        #expect(
            layouts == [
                [size(320, 180), size(640, 360), size(1280, 720)],
                [size(240, 135), size(480, 270), size(960, 540)],
                [size(320, 180), size(640, 360)],
            ])
        let statistics = pipeline.statistics
        #expect(statistics.layers.map(\.dimensions) == [size(320, 180), size(640, 360)])
        #expect(statistics.qualityLimitationReason == .cpu)
        // 640x360's range: 150 + 700; the 3000 kbit/s asked for is clamped to it.
        #expect(pipeline.bitrateRange == 30...850 && statistics.currentTargetKbps == 850)
        #expect(statistics.encodeFailures == 0)
        // The last frames have two layers each.
        #expect(sink.frames.suffix(2).map(\.simulcastIndex) == [0, 1])
    }

    @Test("NV12 input, a size the layout rounds (1278x718 → 1276x716), rotated pixels: every layer decodes")
    func otherInputs() async throws {
        func size(_ width: Int, _ height: Int) -> Dimensions { Dimensions(width: width, height: height) }
        let cases: [(input: Dimensions, nv12: Bool, rotation: VideoRotation, layers: [Dimensions])] = [
            (Self.hd, true, .degrees0, [size(320, 180), size(640, 360), Self.hd]),
            // 1278 and 718 rounded down to multiples of 4; the top layer is a centred crop, then odd halves.
            (size(1278, 718), false, .degrees0, [size(319, 179), size(638, 358), size(1276, 716)]),
            // Turned upright first: the layout is made for 720x1280.
            (Self.hd, false, .degrees90, [size(180, 320), size(360, 640), size(720, 1280)]),
        ]
        for test in cases {
            let sink = RecordingSink()
            let pipeline = try SendPipeline(
                configuration: SendPipelineConfiguration(
                    encoder: VP8EncoderConfiguration(targetBitrateKbps: 3_000), rotatePixels: true,
                    overuse: Self.noOveruse, simulcast: SimulcastConfiguration()),
                sinks: [sink])
            let capturer = CameraVideoCapturer()
            let frames = try Self.frames(test.input).map { frame in
                var buffer = frame.buffer
                if test.nv12 {
                    buffer = VideoFrameBuffer(format: .nv12, width: frame.buffer.width, height: frame.buffer.height)
                    try FrameTransformer.copy(frame.buffer, into: buffer)
                }
                return VideoFrame(
                    buffer: buffer, rotation: test.rotation, timestampNs: frame.timestampNs,
                    sequenceNumber: frame.sequenceNumber)
            }
            for index in 0..<3 {
                let source = frames[index % frames.count]
                let frame = VideoFrame(
                    buffer: source.buffer, rotation: source.rotation, timestampNs: UInt64(index + 1) * 33_333_333,
                    sequenceNumber: UInt64(index))
                try await PipelineTests.feed(pipeline, frame, via: capturer)
            }
            await pipeline.stop()
            #expect(pipeline.statistics.encodeFailures == 0, "\(test.input) \(test.rotation)")
            #expect(pipeline.statistics.layers.map(\.dimensions) == test.layers)
            for index in test.layers.indices {
                let layer = sink.frames.filter { $0.simulcastIndex == index }
                #expect(layer.count == 3 && layer.allSatisfy { $0.rotation == .degrees0 })
                let decoder = try VP8Decoder()
                for frame in layer {
                    #expect(try decoder.decode(frame)?.buffer.dimensions == test.layers[index])
                }
            }
            // The bright block stays top-left (top-right once turned) in the lowest layer: scaled, not garbled.
            let lowest = try #require(sink.frames.first { $0.simulcastIndex == 0 })
            let picture = try #require(try VP8Decoder().decode(lowest))
            let means = PipelineFixtures.quadrantMeans(picture.buffer)
            let bright = test.rotation == .degrees90 ? 1 : 0
            #expect(
                means[bright] > 150 && means.indices.filter { $0 != bright }.allSatisfy { means[$0] < 80 }, "\(means)")
        }
    }

    @Test("without simulcast: one stream, index 0, no layer statistics, byte-identical to a bare VP8Encoder")
    func singleStreamUnchanged() async throws {
        let sink = RecordingSink()
        let pipeline = try Self.pipeline(targetKbps: 1_000, sink: sink, simulcast: nil)
        let capturer = CameraVideoCapturer()
        let frames = Self.frames(PipelineFixtures.qvga)
        try await Self.feed(pipeline, frames, 0..<3, via: capturer)
        pipeline.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: 1)
        try await Self.feed(pipeline, frames, 3..<4, via: capturer)
        pipeline.requestKeyFrame(reason: .pictureLossIndication, simulcastIndex: 0)
        try await Self.feed(pipeline, frames, 4..<6, via: capturer)
        await pipeline.stop()
        let encoded = sink.frames
        #expect(encoded.map(\.isKeyFrame) == [true, false, false, false, true, false])
        #expect(encoded.allSatisfy { $0.simulcastIndex == 0 && $0.temporalLayer == nil })
        #expect(pipeline.statistics.layers.isEmpty && pipeline.bitrateRange == 50...2_500)
        let reference = try VP8Encoder(configuration: VP8EncoderConfiguration(targetBitrateKbps: 1_000))
        for index in 0..<6 {
            let bytes = try reference.encode(Self.frame(frames, index), forceKeyFrame: index == 4)?.bytes
            #expect(bytes == encoded[index].bytes, "frame \(index)")
        }
    }
}
