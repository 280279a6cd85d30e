import CaptureCore
import CaptureTestSupport
import CaptureVP8
import Foundation
import Testing

@Suite("VP8EncodingConsumer")
struct ConsumerTests {
    static let vga = Dimensions(width: 640, height: 480)

    @Test("closure, stream and IVF file get the same frames in order; statistics add up")
    func outputs() async throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("out.ivf")
        let received = Locked<[EncodedFrame]>([])
        let consumer = try VP8EncodingConsumer(ivfPath: ivf.path) { frame in received.withLock { $0.append(frame) } }
        let stream = consumer.encodedFrames(bufferingNewest: 100)
        for index in 0..<20 {
            if index == 10 { consumer.requestKeyFrame() }
            consumer.encode(
                TestMedia.frame(
                    .nv12, Self.vga, index: index, timestampNs: UInt64(index + 1) * 33_333_333, rotation: .degrees180))
        }
        let statistics = try consumer.finish()
        consumer.encode(TestMedia.frame(.nv12, Self.vga, index: 20, timestampNs: 21 * 33_333_333))
        var streamed: [EncodedFrame] = []
        for await frame in stream { streamed.append(frame) }
        let closure = received.withLock { $0 }

        #expect(statistics.framesReceived == 20 && statistics.framesEncoded == 20 && statistics.failures == 0)
        #expect(statistics.keyFrames == 2 && statistics.framesDroppedByRateControl == 0)
        #expect(statistics.encodedBytes == closure.map(\.bytes.count).reduce(0, +))
        #expect(consumer.statistics == statistics)
        let same = streamed == closure
        #expect(same && closure.count == 20)
        #expect(
            closure.map(\.isKeyFrame) == [true] + Array(repeating: false, count: 9) + [true]
                + Array(repeating: false, count: 9))
        #expect(closure.allSatisfy { $0.rotation == .degrees180 })
        let stored = try IVFReader(path: ivf.path)
        #expect(stored.header.frameCount == 20 && stored.header.timebaseRate == 30)
        let bytesSame = try stored.readAll().map(\.bytes) == closure.map(\.bytes)
        #expect(bytesSame)
        try consumer.finish()
    }

    @Test("rate-control drops are counted, not reported as failures")
    func drops() throws {
        let consumer = try VP8EncodingConsumer(configuration: VP8EncoderConfiguration(targetBitrateKbps: 50))
        for index in 0..<30 { consumer.encode(TestMedia.noiseFrame(Self.vga, index: index)) }
        let statistics = consumer.statistics
        print(
            "noise at 50 kbit/s: \(statistics.framesEncoded) encoded, \(statistics.framesDroppedByRateControl) dropped")
        #expect(statistics.framesDroppedByRateControl > 0)
        #expect(statistics.framesEncoded + statistics.framesDroppedByRateControl == 30)
        #expect(statistics.failures == 0 && consumer.lastError == nil)
    }

    @Test("an unwritable IVF path is counted as a failure with its error, and capture goes on")
    func writeFailure() throws {
        let consumer = try VP8EncodingConsumer(ivfPath: "/nonexistent-dir/out.ivf")
        for index in 0..<3 {
            consumer.encode(TestMedia.frame(.nv12, Self.vga, index: index, timestampNs: UInt64(index + 1)))
        }
        #expect(consumer.statistics.failures == 3)
        #expect(consumer.lastError?.code == .ioFailure)
        #expect { try consumer.setRates(bitrateKbps: 100, fps: 0) } throws: {
            ($0 as? CaptureError)?.code == .invalidArgument
        }
        try consumer.setRates(bitrateKbps: 100, fps: 15)
        #expect(consumer.configuration.targetBitrateKbps == 100)
    }

    @Test("frames from several threads are encoded one at a time")
    func concurrentDelivery() async throws {
        let consumer = try VP8EncodingConsumer()
        let small = Dimensions(width: 160, height: 120)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        let n = worker * 10 + index
                        consumer.encode(TestMedia.frame(.i420, small, index: n, timestampNs: UInt64(n + 1)))
                    }
                }
            }
        }
        let statistics = try consumer.finish()
        #expect(statistics.framesReceived == 40 && statistics.failures == 0)
        #expect(statistics.framesEncoded + statistics.framesDroppedByRateControl == 40)
    }
}
