import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Testing

@Suite("VP8Encoder and VP8Decoder")
struct EncoderTests {
    static let vga = Dimensions(width: 640, height: 480)

    /// Encodes `count` pattern frames and decodes them with our decoder; returns encoded frames, decoded packed I420
    /// frames and source packed I420 frames.
    static func roundTrip(
        _ format: OutputPixelFormat, count: Int, dimensions: Dimensions = vga, kbps: Int = 2000
    ) throws -> (encoded: [EncodedFrame], decoded: [[UInt8]], source: [[UInt8]]) {
        let encoder = try VP8Encoder(configuration: VP8EncoderConfiguration(targetBitrateKbps: kbps))
        let decoder = try VP8Decoder()
        var encoded: [EncodedFrame] = [], decoded: [[UInt8]] = [], source: [[UInt8]] = []
        for index in 0..<count {
            let frame = TestMedia.frame(
                format, dimensions, index: index, timestampNs: 1_000_000_000 + UInt64(index) * 33_333_333)
            guard let out = try encoder.encode(frame) else { continue }
            encoded.append(out)
            source.append(frame.buffer.packedI420())
            let picture = try #require(try decoder.decode(out))
            decoded.append(picture.buffer.packedI420())
        }
        return (encoded, decoded, source)
    }

    @Test(
        "NV12 and I420 input encode the same picture, first frame a key frame, PSNR above 35 dB",
        arguments: OutputPixelFormat.allCases)
    func encodeDecode(format: OutputPixelFormat) throws {
        let (encoded, decoded, source) = try Self.roundTrip(format, count: 30)
        #expect(encoded.count >= 25)
        #expect(encoded.first?.isKeyFrame == true)
        #expect(encoded.dropFirst().allSatisfy { !$0.isKeyFrame })
        #expect(encoded.allSatisfy { $0.dimensions == Self.vga && (0...127).contains($0.qp) })
        let psnr = TestMedia.meanPSNR(decoded, source, dimensions: Self.vga)
        print("VP8 \(format) 640x480 2000 kbps: mean PSNR Y \(psnr.y) dB, all \(psnr.all) dB")
        #expect(psnr.y >= 35 && psnr.all >= 35)
    }

    @Test("NV12 and I420 inputs of the same content give the same bitstream")
    func layoutsAgree() throws {
        let nv12 = try Self.roundTrip(.nv12, count: 10)
        let i420 = try Self.roundTrip(.i420, count: 10)
        let same = nv12.encoded.map(\.bytes) == i420.encoded.map(\.bytes)
        #expect(same)
    }

    @Test("metadata travels: rotation, capture time, 90 kHz RTP timestamp")
    func metadata() throws {
        let encoder = try VP8Encoder()
        let ts: UInt64 = 123_456_789_012_345
        let frame = TestMedia.frame(.nv12, Self.vga, index: 0, timestampNs: ts, rotation: .degrees90)
        let out = try #require(try encoder.encode(frame))
        #expect(out.rotation == .degrees90)
        #expect(out.captureTimeNs == ts)
        #expect(out.rtpTimestamp == UInt32(truncatingIfNeeded: ts * 9 / 100_000))
        #expect(
            EncodedFrame.rtpTimestamp(fromNanoseconds: UInt64.max)
                == UInt32(truncatingIfNeeded: (UInt64.max / 100_000) * 9 + (UInt64.max % 100_000) * 9 / 100_000))
        let decoded = try #require(try VP8Decoder().decode(out))
        #expect(decoded.rotation == .degrees90 && decoded.timestampNs == ts)
    }

    @Test("requestKeyFrame makes the next frame a key frame")
    func keyFrameOnRequest() throws {
        let encoder = try VP8Encoder()
        var keys: [Bool] = []
        for index in 0..<12 {
            if index == 6 { encoder.requestKeyFrame() }
            let frame = TestMedia.frame(.i420, Self.vga, index: index, timestampNs: UInt64(index) * 33_000_000)
            keys.append(try #require(try encoder.encode(frame)).isKeyFrame)
        }
        #expect(keys == [true] + Array(repeating: false, count: 5) + [true] + Array(repeating: false, count: 5))
    }

    @Test("a size or layout change reinitialises the encoder and starts with a key frame")
    func reinitialise() throws {
        let encoder = try VP8Encoder()
        let small = Dimensions(width: 320, height: 240)
        let inputs: [(OutputPixelFormat, Dimensions)] = [
            (.nv12, Self.vga), (.nv12, Self.vga), (.nv12, small), (.i420, small), (.i420, small),
        ]
        var results: [EncodedFrame] = []
        for (index, (format, size)) in inputs.enumerated() {
            let frame = TestMedia.frame(format, size, index: index, timestampNs: UInt64(index) * 33_000_000)
            results.append(try #require(try encoder.encode(frame)))
        }
        #expect(encoder.initializationCount == 3)
        #expect(encoder.currentDimensions == small && encoder.currentFormat == .i420)
        #expect(results.map(\.isKeyFrame) == [true, false, true, true, false])
        #expect(results.map(\.dimensions) == [Self.vga, Self.vga, small, small, small])
        let decoder = try VP8Decoder()
        for result in results { #expect(try decoder.decode(result)?.dimensions == result.dimensions) }
    }

    @Test("setRates rejects a frame rate below 1 and a zero bit rate, and takes valid rates")
    func setRates() throws {
        let encoder = try VP8Encoder()
        #expect { try encoder.setRates(bitrateKbps: 500, fps: 0.5) } throws: {
            ($0 as? CaptureError)?.code == .invalidArgument
        }
        #expect { try encoder.setRates(bitrateKbps: 0, fps: 30) } throws: {
            ($0 as? CaptureError)?.code == .invalidArgument
        }
        _ = try encoder.encode(TestMedia.frame(.nv12, Self.vga, index: 0, timestampNs: 0))
        try encoder.setRates(bitrateKbps: 300, fps: 15)
        #expect(encoder.configuration.targetBitrateKbps == 300 && encoder.configuration.framerate == 15)
        #expect(encoder.configuration.frameDuration == 6000)
        #expect(try encoder.encode(TestMedia.frame(.nv12, Self.vga, index: 1, timestampNs: 66_000_000)) != nil)
    }

    @Test("frame dropping never leaves more than 2 s without output (WebRTC's max frame-drop interval)")
    func maxFrameDropInterval() throws {
        let size = Dimensions(width: 320, height: 240)
        func gaps(_ configuration: VP8EncoderConfiguration) throws -> (outputs: Int, longestGapMs: UInt64) {
            let encoder = try VP8Encoder(configuration: configuration)
            var times: [UInt64] = []
            var lastFrame: UInt64 = 0
            for index in 0..<120 {
                let frame = TestMedia.noiseFrame(size, index: index)
                lastFrame = frame.timestampNs
                if try encoder.encode(frame) != nil { times.append(frame.timestampNs) }
            }
            // The longest stretch without output, up to the last frame.
            let marks = times + [lastFrame]
            let longest = zip(marks, marks.dropFirst()).map { $1 - $0 }.max() ?? 0
            return (times.count, longest / 1_000_000)
        }
        let limited = try gaps(VP8EncoderConfiguration(targetBitrateKbps: 20))
        let unlimited = try gaps(VP8EncoderConfiguration(targetBitrateKbps: 20, maxFrameDropIntervalMs: nil))
        print("noise 320x240 at 20 kbit/s over 4 s: with the 2 s limit \(limited), without \(unlimited)")
        #expect(limited.outputs >= 2 && limited.longestGapMs <= 2_034)
        #expect(unlimited.longestGapMs > 2_034)
    }

    @Test("a lower bit rate gives smaller frames")
    func bitrateMatters() throws {
        let high = try Self.roundTrip(.nv12, count: 20, kbps: 2000).encoded.dropFirst().map(\.bytes.count).reduce(0, +)
        let low = try Self.roundTrip(.nv12, count: 20, kbps: 200).encoded.dropFirst().map(\.bytes.count).reduce(0, +)
        #expect(low < high)
    }

    @Test("the decoder rejects empty and corrupt frames with typed errors")
    func corruptInput() throws {
        let decoder = try VP8Decoder()
        #expect { _ = try decoder.decode([UInt8]()) } throws: { ($0 as? CaptureError)?.code == .malformedFile }
        #expect { _ = try decoder.decode([UInt8](repeating: 0xA5, count: 100)) } throws: {
            ($0 as? CaptureError)?.code == .malformedFile
        }
        // A truncated key frame: libvpx either rejects it or conceals; it must not crash.
        let key = try #require(try VP8Encoder().encode(TestMedia.frame(.nv12, Self.vga, index: 0, timestampNs: 0)))
        _ = try? decoder.decode(Array(key.bytes.prefix(20)))
    }

    @Test("the decoder reports an exhausted pool instead of growing")
    func poolExhaustion() throws {
        let encoder = try VP8Encoder()
        let decoder = try VP8Decoder(poolCapacity: 2)
        var held: [VideoFrameBuffer] = []
        for index in 0..<2 {
            let out = try #require(
                try encoder.encode(TestMedia.frame(.nv12, Self.vga, index: index, timestampNs: UInt64(index))))
            held.append(try #require(try decoder.decode(out.bytes)))
        }
        let third = try #require(try encoder.encode(TestMedia.frame(.nv12, Self.vga, index: 2, timestampNs: 2)))
        #expect { _ = try decoder.decode(third.bytes) } throws: { ($0 as? CaptureError)?.code == .invalidState }
        held.removeAll()
        #expect(try decoder.decode(third.bytes) != nil)
    }
}
