import CaptureCore
import CaptureVP8
import Foundation
import Testing

@Suite("VP8EncoderConfiguration")
struct ConfigurationTests {
    @Test("defaults are WebRTC's real-time camera settings")
    func webRTCDefaults() {
        let c = VP8EncoderConfiguration()
        #expect(c.minQuantizer == 2 && c.maxQuantizer == 56)
        #expect(c.undershootPercent == 100 && c.overshootPercent == 15)
        #expect(c.bufferInitialMs == 500 && c.bufferOptimalMs == 600 && c.bufferSizeMs == 1000)
        #expect(c.noiseSensitivity == 4 && c.staticThreshold == 1 && c.tokenPartitions == 1)
        #expect(c.frameDropThreshold == 30 && !c.resizeAllowed && !c.errorResilient)
        #expect(c.keyFrameInterval == 3000)
        #expect(VP8EncoderConfiguration.clockRate == 90_000)
        #expect(c.frameDuration == 3000)
        #expect(c.resolvedMaxIntraBitratePercent == 900)
    }

    @Test(
        "max intra bit rate follows max(300, 0.5*600*fps/10)",
        arguments: [(10.0, 300), (15.0, 450), (30.0, 900), (60.0, 1800)])
    func maxIntra(fps: Double, expected: Int) {
        #expect(VP8EncoderConfiguration(framerate: fps).resolvedMaxIntraBitratePercent == expected)
        #expect(
            VP8EncoderConfiguration(framerate: fps, maxIntraBitratePercent: 123).resolvedMaxIntraBitratePercent == 123)
    }

    @Test("cpu-used is -6, or -4 below the area of 352x288")
    func cpuUsed() {
        let c = VP8EncoderConfiguration()
        #expect(c.resolvedCpuUsed(for: Dimensions(width: 640, height: 480)) == -6)
        #expect(c.resolvedCpuUsed(for: Dimensions(width: 352, height: 288)) == -6)
        #expect(c.resolvedCpuUsed(for: Dimensions(width: 320, height: 240)) == -4)
        #expect(VP8EncoderConfiguration(cpuUsed: -12).resolvedCpuUsed(for: Dimensions(width: 320, height: 240)) == -12)
    }

    @Test("threads follow WebRTC's rule and stay 1 on two cores")
    func threads() {
        let c = VP8EncoderConfiguration()
        let vga = Dimensions(width: 640, height: 480), hd = Dimensions(width: 1280, height: 720)
        let fhd = Dimensions(width: 1920, height: 1080)
        for size in [vga, hd, fhd] { #expect(c.resolvedThreads(for: size, cores: 2) == 1) }
        #expect(c.resolvedThreads(for: vga, cores: 16) == 1)
        #expect(c.resolvedThreads(for: hd, cores: 4) == 2)
        #expect(c.resolvedThreads(for: hd, cores: 6) == 3)
        #expect(c.resolvedThreads(for: fhd, cores: 6) == 3)
        #expect(c.resolvedThreads(for: fhd, cores: 12) == 8)
        #expect(VP8EncoderConfiguration(threads: 2).resolvedThreads(for: vga, cores: 2) == 2)
    }

    @Test("round-trips through JSON")
    func codable() throws {
        let c = VP8EncoderConfiguration(targetBitrateKbps: 2000, framerate: 25, cpuUsed: -8, threads: 1)
        let decoded = try JSONDecoder().decode(VP8EncoderConfiguration.self, from: JSONEncoder().encode(c))
        #expect(decoded == c)
    }

    @Test("out-of-range values are invalidArgument errors")
    func validation() {
        let bad = [
            VP8EncoderConfiguration(targetBitrateKbps: 0), VP8EncoderConfiguration(framerate: 0.5),
            VP8EncoderConfiguration(framerate: .nan), VP8EncoderConfiguration(minQuantizer: 40, maxQuantizer: 20),
            VP8EncoderConfiguration(maxQuantizer: 64), VP8EncoderConfiguration(cpuUsed: 17),
            VP8EncoderConfiguration(tokenPartitions: 3), VP8EncoderConfiguration(frameDropThreshold: 101),
            VP8EncoderConfiguration(threads: 0),
        ]
        for c in bad {
            #expect(throws: CaptureError.self) { try c.validate() }
            #expect { _ = try VP8Encoder(configuration: c) } throws: { ($0 as? CaptureError)?.code == .invalidArgument }
        }
    }
}
