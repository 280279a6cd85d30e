import CaptureCall
import CaptureCore
import CaptureVP8
import Testing

@testable import CapturePreview

/// The fan-out on a real simulcast `SendPipeline` (640x360: 320x180 and 640x360), frames handed straight to the
/// pipeline; the selectors' time is virtual (33 ms a frame), the encoder thread real (the test waits for each frame).
@Suite("ViewerFanout on a simulcast SendPipeline", .serialized)
struct ViewerFanoutPipelineTests {
    static let size = Dimensions(width: 640, height: 360)

    /// Two frames to alternate, with a moving gradient so that they are not trivial to encode.
    static let pictures: [VideoFrameBuffer] = (0..<2).map { index in
        let buffer = VideoFrameBuffer(format: .i420, width: size.width, height: size.height)
        for plane in 0..<3 {
            let layout = buffer.planes[plane]
            let base = buffer.mutablePlane(plane)
            for row in 0..<layout.rows {
                for column in 0..<layout.rowBytes {
                    base[row * layout.stride + column] =
                        plane == 0 ? UInt8(truncatingIfNeeded: row + column + 8 * index) : 128
                }
            }
        }
        return buffer
    }

    /// Feeds frame `index` and waits until the encoder thread has handled it (every layer).
    static func feed(_ pipeline: SendPipeline, _ index: Int, via capturer: CameraVideoCapturer) async throws {
        func handled() -> Int {
            let statistics = pipeline.statistics
            return statistics.framesEncoded + statistics.droppedByRateControl + statistics.encodeFailures
        }
        let before = handled()
        pipeline.capturer(
            capturer,
            didCapture: VideoFrame(
                buffer: pictures[index % 2], rotation: .degrees0, timestampNs: UInt64(index + 1) * 33_333_333,
                sequenceNumber: UInt64(index)))
        let deadline = ContinuousClock.now + .seconds(10)
        while handled() == before {
            try #require(ContinuousClock.now < deadline, "the encoder did not take frame \(index)")
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("two viewers: the narrow one stays on 320x180, the wide one moves to 640x360 at a key frame; both decode")
    func viewersOnARealPipeline() async throws {
        let clock = VirtualClock()
        let fanout = ViewerFanout<RecordingViewer>(
            selection: ViewerLayerSelector.Configuration(upHold: .milliseconds(300)), clock: { clock.instant })
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(
                encoder: VP8EncoderConfiguration(targetBitrateKbps: 900), overuse: OveruseConfiguration(enabled: false),
                simulcast: SimulcastConfiguration(maxLayers: 3, temporalLayers: 3)),
            sinks: [fanout])
        fanout.attach(pipeline)
        let wide = RecordingViewer()
        let narrow = RecordingViewer()
        // Before the first frame the layers are unknown: both start at layer 0.
        fanout.add(wide, id: "wide", estimateKbps: 900)
        fanout.add(narrow, id: "narrow", estimateKbps: 250)
        let capturer = CameraVideoCapturer()
        for index in 0..<30 {
            try await Self.feed(pipeline, index, via: capturer)
            clock.advance(.milliseconds(33))
        }
        // The narrow viewer's PLI: a key frame of 320x180 only.
        let keyFramesBefore = pipeline.statistics.layers.map(\.keyFrames)
        ViewerEncoderControl(fanout: fanout, viewerID: "narrow").requestKeyFrame(
            reason: .pictureLossIndication, simulcastIndex: 0)
        try await Self.feed(pipeline, 30, via: capturer)
        let statistics = pipeline.statistics
        await pipeline.stop()

        #expect(statistics.layers.map(\.dimensions.width) == [320, 640])
        #expect(statistics.currentTargetKbps == 850, "the wide viewer's 900, within the layout's 30…850")
        #expect(zip(statistics.layers.map(\.keyFrames), keyFramesBefore).map { $0 - $1 } == [1, 0])
        #expect(Set(narrow.widths) == [320])
        let frames = wide.received
        guard let switched = frames.firstIndex(where: { $0.dimensions.width == 640 }) else {
            Issue.record("the wide viewer never got 640x360: \(fanout.layerStates)")
            return
        }
        #expect(frames[switched].isKeyFrame)
        #expect(frames[..<switched].allSatisfy { $0.dimensions.width == 320 })
        #expect(frames[switched...].allSatisfy { $0.dimensions.width == 640 })
        #expect((frames + narrow.received).allSatisfy { $0.simulcastIndex == 0 })
        // Each viewer's frames are one decodable stream, across the switch.
        for viewer in [wide, narrow] {
            let decoder = try VP8Decoder()
            for frame in viewer.received {
                let picture = try decoder.decode(frame)
                #expect(picture?.dimensions == frame.dimensions)
            }
        }
        print(
            "fan-out on a real pipeline: wide got \(frames.count) frames (640x360 from #\(switched)), narrow "
                + "\(narrow.received.count) at 320x180; key frames per layer \(statistics.layers.map(\.keyFrames))")
    }
}
