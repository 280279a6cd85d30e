import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

/// What an SFU does to a temporally layered stream, checked by independent decoders: an L1T3 stream thinned to
/// layer 0, layers 0–1, and all of it, written to IVF, decodes in vpxdec and ffmpeg with no error and every frame
/// kept, and both decoders agree with ours picture for picture.
@Suite("VP8 temporal layers: thinned streams in vpxdec and ffmpeg")
struct TemporalLayerDecodeTests {
    static let size = Dimensions(width: 320, height: 240)

    @Test(
        "L1T3 thinned to layers 0, 0–1 and 0–2: vpxdec and ffmpeg decode every kept frame, identical to ours",
        .enabled(if: TestMedia.haveDecoders, "vpxdec/ffmpeg missing"), arguments: [0, 1, 2])
    func thinned(keep: Int) async throws {
        let frames = try await OffThePool.run { () throws -> [EncodedFrame] in
            var configuration = VP8EncoderConfiguration(targetBitrateKbps: 600)
            configuration.temporalLayers = 3
            configuration.frameDropThreshold = 0
            let encoder = try VP8Encoder(configuration: configuration)
            var out: [EncodedFrame] = []
            for index in 0..<64 {
                let frame = TestMedia.frame(
                    .i420, Self.size, index: index, timestampNs: 1_000_000_000 + UInt64(index) * 33_333_333)
                if let encoded = try encoder.encode(frame), (encoded.temporalLayer?.index ?? 0) <= keep {
                    out.append(encoded)
                }
            }
            return out
        }
        #expect(frames.count == [16, 32, 64][keep])
        let directory = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ivf = directory.appendingPathComponent("thinned.ivf")
        let writer = try IVFWriter(path: ivf.path, dimensions: Self.size)
        for frame in frames { try writer.write(frame) }
        try writer.close()
        let decoder = try VP8Decoder()
        var ours = Data()
        for frame in frames {
            let picture = try #require(try decoder.decode(frame))
            ours.append(contentsOf: picture.buffer.packedI420())
        }
        let external = try await TestMedia.externalDecodes(
            of: ivf, in: directory, maxFrames: frames.count, passthrough: true)
        let frameBytes = Self.size.width * Self.size.height * 3 / 2
        print(
            "L1T3 kept layers 0...\(keep): \(frames.count) frames; vpxdec \(external.vpxdec.count / frameBytes), "
                + "ffmpeg \(external.ffmpeg.count / frameBytes)")
        #expect(external.vpxdec.count / frameBytes == frames.count)
        #expect(external.ffmpeg.count / frameBytes == frames.count)
        #expect(external.vpxdec == ours, "\(TestMedia.firstDifference(external.vpxdec, ours, frameBytes))")
        #expect(external.ffmpeg == ours, "\(TestMedia.firstDifference(external.ffmpeg, ours, frameBytes))")
    }
}
