import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Testing

/// VP8 temporal layers (L1T2, L1T3) with the real libvpx: the pattern on the frames, the layer-sync marks, a forced
/// key frame restarting the pattern, the rate split, and the property an SFU relies on: drop the upper layers and what
/// is left decodes without error.
@Suite("VP8 temporal layers")
struct TemporalLayerTests {
    static let size = Dimensions(width: 320, height: 240)

    /// Encodes `count` moving test frames with `layers` temporal layers off the cooperative pool (libvpx's work
    /// would hold one of its threads); `keyFrameAt` forces one key frame.
    static func encode(
        layers: Int, count: Int, kbps: Int = 600, keyFrameAt: Int? = nil
    ) async throws -> [(index: Int, frame: EncodedFrame)] {
        try await OffThePool.run { try encodeHere(layers: layers, count: count, kbps: kbps, keyFrameAt: keyFrameAt) }
    }

    static func encodeHere(
        layers: Int, count: Int, kbps: Int = 600, keyFrameAt: Int? = nil
    ) throws -> [(index: Int, frame: EncodedFrame)] {
        var configuration = VP8EncoderConfiguration(targetBitrateKbps: kbps)
        configuration.temporalLayers = layers
        // Frame dropping off: the pattern is judged on every frame.
        configuration.frameDropThreshold = 0
        let encoder = try VP8Encoder(configuration: configuration)
        var out: [(index: Int, frame: EncodedFrame)] = []
        for index in 0..<count {
            let frame = TestMedia.frame(
                .i420, size, index: index, timestampNs: 1_000_000_000 + UInt64(index) * 33_333_333)
            if index == keyFrameAt { encoder.requestKeyFrame() }
            if let encoded = try encoder.encode(frame) { out.append((index: index, frame: encoded)) }
        }
        return out
    }

    @Test("Patterns, decimators and cumulative rates follow libwebrtc (0 2 1 2; 4 2 1; 40/60/100 %)")
    func patterns() {
        #expect(VP8TemporalPattern(layers: 1).layerIDs == [0])
        #expect(VP8TemporalPattern(layers: 2).layerIDs == [0, 1])
        #expect(VP8TemporalPattern(layers: 3).layerIDs == [0, 2, 1, 2])
        #expect(VP8TemporalPattern(layers: 3).rateDecimators == [4, 2, 1])
        #expect(VP8TemporalPattern(layers: 3).cumulativeTargetsKbps(totalKbps: 1_000) == [400, 600, 1_000])
        #expect(VP8TemporalPattern(layers: 2).cumulativeTargetsKbps(totalKbps: 1_000) == [600, 1_000])
        #expect(VP8TemporalPattern(layers: 9).layers == 3)
        let three = VP8TemporalPattern(layers: 3)
        #expect(three.frame(at: 0) == .init(layer: 0, referencesGolden: false, updatesLast: true, updatesGolden: false))
        #expect(three.frame(at: 2) == .init(layer: 1, referencesGolden: false, updatesLast: false, updatesGolden: true))
        #expect(three.frame(at: 3) == .init(layer: 2, referencesGolden: true, updatesLast: false, updatesGolden: false))
        #expect(throws: CaptureError.self) {
            var bad = VP8EncoderConfiguration()
            bad.temporalLayers = 4
            try bad.validate()
        }
    }

    @Test("L1T3 frames carry 0 2 1 2 from the key frame; layer 1 is always a sync, layer 2 only before it")
    func threeLayerMarks() async throws {
        let frames = try await Self.encode(layers: 3, count: 16)
        #expect(frames.count == 16)
        #expect(frames[0].frame.isKeyFrame && frames.dropFirst().allSatisfy { !$0.frame.isKeyFrame })
        let layers = frames.map { $0.frame.temporalLayer?.index ?? -1 }
        #expect(layers == [0, 2, 1, 2, 0, 2, 1, 2, 0, 2, 1, 2, 0, 2, 1, 2])
        let syncs = frames.map { $0.frame.temporalLayer?.isLayerSync ?? false }
        // The first layer-2 frame predicts from the key frame in golden; later ones from a layer-1 frame.
        #expect(
            syncs == [
                false, true, true, false, false, false, true, false, false, false, true, false,
                false, false, true, false,
            ])
        // Layer-2 frames update nothing: libvpx marks them droppable.
        #expect(frames.filter { $0.frame.temporalLayer?.index == 2 }.allSatisfy { $0.frame.isDroppable })
    }

    @Test("A key frame asked for mid-pattern is layer 0 and restarts the pattern")
    func keyFrameRestarts() async throws {
        let frames = try await Self.encode(layers: 3, count: 12, keyFrameAt: 5)
        let layers = frames.map { $0.frame.temporalLayer?.index ?? -1 }
        #expect(layers == [0, 2, 1, 2, 0, 0, 2, 1, 2, 0, 2, 1])
        #expect(frames[5].frame.isKeyFrame)
    }

    @Test(
        "Dropping the upper layers leaves a stream that decodes without error at 1/4, 1/2 and all of the frames",
        arguments: [0, 1, 2])
    func thinnedStreamsDecode(keep: Int) async throws {
        let frames = try await Self.encode(layers: 3, count: 64)
        let decoder = try VP8Decoder()
        var decoded = 0
        for (_, frame) in frames where (frame.temporalLayer?.index ?? 0) <= keep {
            if try decoder.decode(frame) != nil { decoded += 1 }
        }
        let expected = [16, 32, 64][keep]
        #expect(decoded == expected, "kept layers 0...\(keep): decoded \(decoded) of \(expected)")
    }

    @Test("L1T2: 0 1 0 1, every layer-1 frame a droppable sync; the base alone decodes")
    func twoLayers() async throws {
        let frames = try await Self.encode(layers: 2, count: 8)
        #expect(frames.map { $0.frame.temporalLayer?.index ?? -1 } == [0, 1, 0, 1, 0, 1, 0, 1])
        #expect(
            frames.filter { $0.frame.temporalLayer?.index == 1 }.allSatisfy {
                $0.frame.isDroppable && $0.frame.temporalLayer?.isLayerSync == true
            })
        let decoder = try VP8Decoder()
        for (_, frame) in frames where frame.temporalLayer?.index == 0 { #expect(try decoder.decode(frame) != nil) }
    }

    @Test("The bytes split roughly as the layer targets ask (40/20/40 % of 600 kbit/s over 3 s)")
    func rateSplit() async throws {
        let frames = try await Self.encode(layers: 3, count: 90)
        var bytes = [0, 0, 0]
        for (_, frame) in frames.dropFirst(8) { bytes[frame.temporalLayer?.index ?? 0] += frame.bytes.count }
        let total = Double(bytes.reduce(0, +))
        let shares = bytes.map { Double($0) / total }
        print("L1T3 at 600 kbit/s: byte shares by layer \(shares.map { Int(($0 * 100).rounded()) }) %")
        // libvpx's per-layer rate control aims at 40/20/40; content and the base layer's larger frames move it.
        #expect(shares[0] > 0.3 && shares[0] < 0.65)
        #expect(shares[1] > 0.08 && shares[1] < 0.35)
        #expect(shares[2] > 0.15 && shares[2] < 0.5)
    }

    @Test("Without temporal layers nothing changes: no layer marks")
    func oneLayer() async throws {
        let frames = try await Self.encode(layers: 1, count: 4)
        #expect(frames.allSatisfy { $0.frame.temporalLayer == nil })
    }
}
