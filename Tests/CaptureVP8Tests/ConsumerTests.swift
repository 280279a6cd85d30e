import CaptureCore
import CaptureVP8
import Foundation
import Synchronization
import Testing

@Suite("VP8EncodingConsumer")
struct ConsumerTests {
    static let vga = Dimensions(width: 640, height: 480)

    /// A frame of deterministic noise: hard to compress, so a tiny bit rate makes libvpx drop frames.
    static func noiseFrame(index: Int) -> VideoFrame {
        let buffer = VideoFrameBuffer(format: .i420, width: vga.width, height: vga.height)
        var state = UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ 1)
        for plane in 0..<3 {
            let layout = buffer.planes[plane]
            let base = buffer.mutablePlane(plane)
            for row in 0..<layout.rows {
                for col in 0..<layout.rowBytes {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    base[row * layout.stride + col] = UInt8(truncatingIfNeeded: state >> 24)
                }
            }
        }
        return VideoFrame(buffer: buffer, rotation: .degrees270, timestampNs: UInt64(index + 1) * 33_333_333)
    }

    @Test("closure, stream and IVF file get the same frames in order; statistics add up")
    func outputs() async throws {
        let dir = try TestMedia.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ivf = dir.appendingPathComponent("out.ivf")
        let received = Mutex<[EncodedFrame]>([])
        let consumer = try VP8EncodingConsumer(ivfPath: ivf.path) { frame in received.withLock { $0.append(frame) } }
        let stream = consumer.encodedFrames(bufferingNewest: 100)
        for index in 0..<20 {
            if index == 10 { consumer.requestKeyFrame() }
            consumer.encode(TestMedia.frame(.nv12, Self.vga, index: index, timestampNs: UInt64(index + 1) * 33_333_333, rotation: .degrees180))
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
        #expect(closure.map(\.isKeyFrame) == [true] + Array(repeating: false, count: 9) + [true] + Array(repeating: false, count: 9))
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
        for index in 0..<30 { consumer.encode(Self.noiseFrame(index: index)) }
        let statistics = consumer.statistics
        print("noise at 50 kbit/s: \(statistics.framesEncoded) encoded, \(statistics.framesDroppedByRateControl) dropped")
        #expect(statistics.framesDroppedByRateControl > 0)
        #expect(statistics.framesEncoded + statistics.framesDroppedByRateControl == 30)
        #expect(statistics.failures == 0 && consumer.lastError == nil)
    }

    @Test("an unwritable IVF path is counted as a failure with its error, and capture goes on")
    func writeFailure() throws {
        let consumer = try VP8EncodingConsumer(ivfPath: "/nonexistent-dir/out.ivf")
        for index in 0..<3 { consumer.encode(TestMedia.frame(.nv12, Self.vga, index: index, timestampNs: UInt64(index + 1))) }
        #expect(consumer.statistics.failures == 3)
        #expect(consumer.lastError?.code == .ioFailure)
        #expect { try consumer.setRates(bitrateKbps: 100, fps: 0) } throws: { ($0 as? CaptureError)?.code == .invalidArgument }
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
