import CaptureConversion
import CaptureCore
import Testing

@Suite("VideoAdapter")
struct VideoAdapterTests {
    private static let frameInterval30: UInt64 = 33_333_333

    @Test("crops to the requested aspect ratio and scales to fit, in either orientation, never up")
    func resolution() {
        let adapter = VideoAdapter()
        #expect(
            adapter.adaptation(for: Dimensions(width: 1280, height: 720)).isIdentity(
                for: Dimensions(width: 1280, height: 720)))
        adapter.adaptOutputFormat(width: 640, height: 480, fps: 0)
        let cases: [(Dimensions, CropRect, Dimensions)] = [
            (
                Dimensions(width: 1280, height: 720), CropRect(x: 160, y: 0, width: 960, height: 720),
                Dimensions(width: 640, height: 480)
            ),
            (
                Dimensions(width: 720, height: 1280), CropRect(x: 0, y: 160, width: 720, height: 960),
                Dimensions(width: 480, height: 640)
            ),
            (
                Dimensions(width: 640, height: 480), CropRect(x: 0, y: 0, width: 640, height: 480),
                Dimensions(width: 640, height: 480)
            ),
            (
                Dimensions(width: 320, height: 240), CropRect(x: 0, y: 0, width: 320, height: 240),
                Dimensions(width: 320, height: 240)
            ),
            (
                Dimensions(width: 1920, height: 1080), CropRect(x: 240, y: 0, width: 1440, height: 1080),
                Dimensions(width: 640, height: 480)
            ),
        ]
        for (input, crop, output) in cases {
            let adaptation = adapter.adaptation(for: input)
            #expect(adaptation.crop == crop, "\(input)")
            #expect(adaptation.output == output, "\(input)")
        }
        adapter.adaptOutputFormat(width: 1920, height: 1080, fps: 0)
        let small = adapter.adaptation(for: Dimensions(width: 640, height: 480))
        #expect(small.crop == CropRect(x: 0, y: 60, width: 640, height: 360))
        #expect(small.output == Dimensions(width: 640, height: 360))
        adapter.adaptOutputFormat(width: 1280, height: 720, fps: 30)
        #expect(
            adapter.adaptation(for: Dimensions(width: 1920, height: 1080)).output
                == Dimensions(width: 1280, height: 720))
        adapter.resetOutputFormat()
        #expect(adapter.request == nil)
    }

    /// Feeds `count` frames at 30 fps (with optional jitter) and returns how many were kept.
    private func keptFrames(
        _ adapter: VideoAdapter, count: Int, jitterNs: Int = 0, startNs: UInt64 = 1_000_000_000
    ) -> Int {
        let jitter = pseudoRandomBytes(count, seed: 5)
        var kept = 0
        for index in 0..<count {
            let offset = jitterNs == 0 ? 0 : (Int(jitter[index]) - 128) * jitterNs / 128
            let timestamp = UInt64(Int(startNs) + index * Int(Self.frameInterval30) + offset)
            if adapter.shouldKeepFrame(timestampNs: timestamp) { kept += 1 }
        }
        return kept
    }

    @Test("30 fps in, 15 fps requested: half the frames are kept, the rest counted as rate adaptation")
    func halfRate() {
        let adapter = VideoAdapter()
        adapter.adaptOutputFormat(width: 0, height: 0, fps: 15)
        let kept = keptFrames(adapter, count: 300)
        #expect((149...151).contains(kept), "kept \(kept)")
        #expect(adapter.droppedFrames[.rateAdaptation] == 300 - kept)

        let jittery = VideoAdapter()
        jittery.adaptOutputFormat(width: 0, height: 0, fps: 15)
        let keptWithJitter = keptFrames(jittery, count: 300, jitterNs: 4_000_000)
        #expect((147...153).contains(keptWithJitter), "kept \(keptWithJitter) with ±4 ms jitter")
    }

    @Test("other rates: 30 → 30 keeps every frame even with jitter, 30 → 10 keeps a third, no limit keeps all")
    func otherRates() {
        let same = VideoAdapter()
        same.adaptOutputFormat(width: 0, height: 0, fps: 30)
        #expect(keptFrames(same, count: 300, jitterNs: 4_000_000) == 300)
        let third = VideoAdapter()
        third.adaptOutputFormat(width: 0, height: 0, fps: 10)
        #expect((99...101).contains(keptFrames(third, count: 300)))
        #expect(keptFrames(VideoAdapter(), count: 50) == 50)
    }

    @Test("extreme requests and timestamps are clamped, not traps")
    func extremes() {
        let adapter = VideoAdapter()
        adapter.adaptOutputFormat(width: .max, height: .max, fps: 1e-300)
        #expect(adapter.request == VideoAdapter.OutputFormatRequest(width: 1 << 16, height: 1 << 16, fps: 0.001))
        // A square request crops to a square; nothing is scaled up.
        #expect(
            adapter.adaptation(for: Dimensions(width: 640, height: 480)).output == Dimensions(width: 480, height: 480))
        for timestamp in [UInt64.max, 0, UInt64.max / 2, UInt64(Int64.max) + 1] {
            _ = adapter.shouldKeepFrame(timestampNs: timestamp)
        }
        adapter.adaptOutputFormat(width: -5, height: 3, fps: .infinity)
        #expect(adapter.request == VideoAdapter.OutputFormatRequest(width: 0, height: 3, fps: 0))
        #expect(adapter.shouldKeepFrame(timestampNs: 1) && adapter.shouldKeepFrame(timestampNs: 1))
        #expect(
            FrameTransformer.centeredCrop(
                of: Dimensions(width: 64, height: 48), aspectRatio: Dimensions(width: .max, height: 1))
                == CropRect(x: 0, y: 22, width: 64, height: 1))
    }

    @Test("a pause restarts the schedule: the first frame after it is kept")
    func pause() {
        let adapter = VideoAdapter()
        adapter.adaptOutputFormat(width: 0, height: 0, fps: 15)
        _ = keptFrames(adapter, count: 31)
        #expect(adapter.shouldKeepFrame(timestampNs: 60_000_000_000))
    }

    @Test("adapt passes matching frames through, scales others into a pool, and drops when the pool is exhausted")
    func adaptFrames() throws {
        let adapter = VideoAdapter(poolCapacity: 2)
        let (input, _) = try randomBuffer(.nv12, Dimensions(width: 1280, height: 720), seed: 4)
        guard case .frame(let same) = try adapter.adapt(input, timestampNs: 1) else {
            Issue.record("frame dropped without a request")
            return
        }
        #expect(same === input)

        adapter.adaptOutputFormat(width: 640, height: 480, fps: 0)
        var held: [VideoFrameBuffer] = []
        for index in 0..<2 {
            guard case .frame(let output) = try adapter.adapt(input, timestampNs: UInt64(index)) else {
                Issue.record("frame \(index) dropped")
                return
            }
            #expect(output.dimensions == Dimensions(width: 640, height: 480))
            #expect(output.format == .nv12)
            held.append(output)
        }
        guard case .dropped(let reason) = try adapter.adapt(input, timestampNs: 3) else {
            Issue.record("a third frame was delivered while both pooled buffers are held")
            return
        }
        #expect(reason == .poolExhausted)
        #expect(adapter.droppedFrames[.poolExhausted] == 1)
        held.removeAll()
        guard case .frame = try adapter.adapt(input, timestampNs: 4) else {
            Issue.record("no frame after the pool's buffers were released")
            return
        }
    }
}
