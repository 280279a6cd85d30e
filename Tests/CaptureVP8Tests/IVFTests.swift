import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

@Suite("IVF writer and reader")
struct IVFTests {
    static let vga = Dimensions(width: 640, height: 480)

    /// Encodes `count` frames with jittered capture times (as a real camera delivers) into an IVF file.
    static func writeClip(to url: URL, count: Int, timebase: IVFTimebase) throws -> [EncodedFrame] {
        let encoder = try VP8Encoder(configuration: VP8EncoderConfiguration(targetBitrateKbps: 2000))
        let writer = try IVFWriter(path: url.path, dimensions: vga, timebase: timebase)
        var frames: [EncodedFrame] = []
        var ts: UInt64 = 5_000_000_000
        for index in 0..<count {
            ts += 33_333_333 + UInt64((index * 7919) % 9) * 1_000_000 - 4_000_000
            if let out = try encoder.encode(TestMedia.frame(.nv12, vga, index: index, timestampNs: ts)) {
                try writer.write(out)
                frames.append(out)
            }
        }
        try writer.close()
        return frames
    }

    @Test("header bytes are DKIF v0, 32 bytes, VP80, size, time base, patched frame count")
    func headerLayout() throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("clip.ivf")
        let frames = try Self.writeClip(to: url, count: 10, timebase: .clock90kHz)
        let data = [UInt8](try Data(contentsOf: url))
        #expect(Array(data[0..<4]) == Array("DKIF".utf8))
        #expect(data[4] == 0 && data[5] == 0 && data[6] == 32 && data[7] == 0)
        #expect(Array(data[8..<12]) == Array("VP80".utf8))
        #expect(data[12] == 0x80 && data[13] == 0x02 && data[14] == 0xE0 && data[15] == 0x01)
        #expect(Array(data[16..<24]) == [0x90, 0x5F, 0x01, 0x00, 1, 0, 0, 0])
        #expect(Int(data[24]) == frames.count && data[25] == 0)
        #expect(data.count == 32 + frames.map { 12 + $0.bytes.count }.reduce(0, +))
    }

    @Test(
        "reader returns what the writer wrote, with increasing 90 kHz pts from 0",
        arguments: [IVFTimebase.clock90kHz, .frameIndex(fps: 30)])
    func roundTrip(timebase: IVFTimebase) throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("clip.ivf")
        let written = try Self.writeClip(to: url, count: 20, timebase: timebase)
        let reader = try IVFReader(path: url.path)
        #expect(reader.header.dimensions == Self.vga && reader.header.fourCC == "VP80")
        #expect(Int(reader.header.frameCount) == written.count)
        let frames = try reader.readAll()
        let same = frames.map(\.bytes) == written.map(\.bytes)
        #expect(same)
        #expect(frames.first?.pts == 0)
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.pts < $1.pts })
        switch timebase {
        case .clock90kHz:
            let expected = written.map { ($0.captureTimeNs - written[0].captureTimeNs) * 9 / 100_000 }
            #expect(frames.map(\.pts) == expected)
        case .frameIndex:
            #expect(frames.map(\.pts) == (0..<UInt64(written.count)).map { $0 })
        }
    }

    @Test(
        "vpxdec and ffmpeg decode our IVF files to the same frames as our decoder",
        .enabled(if: TestMedia.haveDecoders, "vpxdec/ffmpeg missing"),
        arguments: [IVFTimebase.clock90kHz, .frameIndex(fps: 30)])
    func externalDecoders(timebase: IVFTimebase) async throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("clip.ivf")
        let written = try Self.writeClip(to: url, count: 45, timebase: timebase)
        let decoder = try VP8Decoder()
        var ours = Data()
        for frame in try IVFReader(path: url.path).readAll() {
            let buffer = try #require(try decoder.decode(frame.bytes))
            ours.append(contentsOf: buffer.packedI420())
        }
        // With real capture timing, ffmpeg's raw output needs passthrough to keep one frame per frame.
        let external = try await TestMedia.externalDecodes(
            of: url, in: dir, maxFrames: written.count + 10, passthrough: timebase == .clock90kHz)
        #expect(ours.count == written.count * Self.vga.area * 3 / 2)
        let vpxdecSame = external.vpxdec == ours, ffmpegSame = external.ffmpeg == ours
        #expect(vpxdecSame, "vpxdec: \(TestMedia.firstDifference(external.vpxdec, ours, Self.vga.area * 3 / 2))")
        #expect(ffmpegSame, "ffmpeg: \(TestMedia.firstDifference(external.ffmpeg, ours, Self.vga.area * 3 / 2))")
    }

    @Test("external decoders present (or skipped loudly)")
    func externalDecodersNote() {
        TestMedia.noteIfDecodersMissing("IVF external-decoder tests")
    }

    @Test("bad and truncated files are malformedFile errors")
    func malformed() throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("clip.ivf")
        _ = try Self.writeClip(to: url, count: 5, timebase: .clock90kHz)
        let good = [UInt8](try Data(contentsOf: url))

        func expectMalformed(_ bytes: [UInt8], _ name: String, atOpen: Bool) throws {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect {
                let reader = try IVFReader(path: path)
                if !atOpen { _ = try reader.readAll() }
            } throws: { ($0 as? CaptureError)?.code == .malformedFile }
        }
        try expectMalformed(Array(good.prefix(20)), "short-header.ivf", atOpen: true)
        var badSignature = good
        badSignature[0] = UInt8(ascii: "X")
        try expectMalformed(badSignature, "signature.ivf", atOpen: true)
        var badVersion = good
        badVersion[4] = 7
        try expectMalformed(badVersion, "version.ivf", atOpen: true)
        try expectMalformed(Array(good.prefix(32 + 6)), "frame-header.ivf", atOpen: false)
        try expectMalformed(Array(good.dropLast(10)), "frame-body.ivf", atOpen: false)
        var huge = good
        huge[32 + 3] = 0xFF
        try expectMalformed(huge, "huge.ivf", atOpen: false)

        #expect { _ = try IVFReader(path: dir.appendingPathComponent("absent.ivf").path) } throws: {
            ($0 as? CaptureError)?.code == .deviceNotFound
        }
        #expect(try IVFReader(path: url.path).readAll().count == 5)
    }

    @Test("writing after close and bad frames are errors")
    func writerMisuse() throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try IVFWriter(path: dir.appendingPathComponent("w.ivf").path, dimensions: Self.vga)
        #expect { try writer.write([], pts: 0) } throws: { ($0 as? CaptureError)?.code == .invalidArgument }
        try writer.close()
        try writer.close()
        #expect { try writer.write([1, 2, 3], pts: 0) } throws: { ($0 as? CaptureError)?.code == .invalidState }
        #expect { _ = try IVFWriter(path: "/nonexistent-dir/x.ivf", dimensions: Self.vga) } throws: {
            ($0 as? CaptureError)?.code == .ioFailure
        }
    }
}
