import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

/// Writes a small Y4M file whose frame `i` has luma value `i * 10` everywhere.
func writeY4M(
    frames: Int, width: Int = 64, height: Int = 48, header: String? = nil, truncateLastBy: Int = 0
) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("clip-\(UUID().uuidString).y4m").path
    var data = Data((header ?? "YUV4MPEG2 W\(width) H\(height) F30:1 Ip A1:1 C420jpeg\n").utf8)
    let chroma = ((width + 1) / 2) * ((height + 1) / 2)
    for i in 0..<frames {
        data.append(contentsOf: Array("FRAME\n".utf8))
        data.append(contentsOf: [UInt8](repeating: UInt8(i * 10 % 256), count: width * height))
        data.append(contentsOf: [UInt8](repeating: 100, count: chroma))
        data.append(contentsOf: [UInt8](repeating: 200, count: chroma))
    }
    data.removeLast(truncateLastBy)
    try data.write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("Y4M file camera", .serialized)
struct Y4MCameraTests {
    @Test("header: size, rate and colour space parsed")
    func header() throws {
        let header = try Y4MHeader.parse(
            Array("YUV4MPEG2 W640 H480 F30000:1001 It A1:1 C420mpeg2 XYSCSS=420MPEG2\n".utf8))
        #expect(header.dimensions == Dimensions(width: 640, height: 480))
        #expect(abs(header.fps - 29.97) < 0.01)
        #expect(header.frameBytes == 640 * 480 * 3 / 2)
    }

    @Test(
        "malformed headers are clear errors",
        arguments: [
            ("YUV4MPEG W64 H48\n", "YUV4MPEG2"),
            ("YUV4MPEG2 H48 F30:1\n", "width"),
            ("YUV4MPEG2 W64 H48 F30:0\n", "frame rate"),
            ("YUV4MPEG2 Wx H48\n", "width"),
            ("YUV4MPEG2 W64 H48 Q9\n", "unknown tag"),
        ])
    func malformed(header: String, mentions: String) throws {
        do {
            _ = try Y4MHeader.parse(Array(header.utf8), path: "bad.y4m")
            Issue.record("expected an error for \(header)")
        } catch {
            #expect(error.code == .malformedFile)
            #expect(error.description.contains(mentions), "\(error)")
        }
    }

    @Test("4:4:4 is rejected as unsupported")
    func colourSpace() throws {
        #expect(throws: CaptureError.self) { try Y4MHeader.parse(Array("YUV4MPEG2 W64 H48 C444\n".utf8)) }
    }

    @Test("a missing file is deviceNotFound")
    func missing() throws {
        do {
            _ = try Y4MCamera.device(path: "/nonexistent/clip.y4m")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .deviceNotFound)
        }
    }

    @Test("plays every frame in order and ends at the end of the file when not looping")
    func endsAtEnd() async throws {
        let path = try writeY4M(frames: 5)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: try .y4m([path], loop: false))
        capturer.isPaced = false
        let device = try #require(capturer.captureDevices().first)
        #expect(device.formats.first?.size == .discrete(Dimensions(width: 64, height: 48)))
        try await capturer.startCapture(device: device, target: Dimensions(width: 64, height: 48))
        for _ in 0..<100 where delegate.stops.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(delegate.frames.withLock { $0.map(\.firstLuma) } == [0, 10, 20, 30, 40])
        #expect(delegate.stops.withLock { $0.count == 1 && $0[0] == nil })
        #expect(capturer.captureState == .idle)
        await capturer.stopCapture()
    }

    @Test("loops back to the first frame")
    func loops() async throws {
        let path = try writeY4M(frames: 3)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: try .y4m([path]))
        capturer.isPaced = false
        try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        for _ in 0..<100 where delegate.count < 7 { try await Task.sleep(for: .milliseconds(10)) }
        await capturer.stopCapture()
        let lumas = delegate.frames.withLock { $0.prefix(7).map(\.firstLuma) }
        #expect(lumas == [0, 10, 20, 0, 10, 20, 0])
    }

    @Test("a truncated frame fails the capture with a clear error, after the good frames")
    func truncated() async throws {
        let path = try writeY4M(frames: 3, truncateLastBy: 100)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        let capturer = CameraVideoCapturer(delegate: delegate, provider: try .y4m([path], loop: false))
        capturer.isPaced = false
        try await capturer.startCapture(target: Dimensions(width: 64, height: 48))
        for _ in 0..<100 where delegate.stops.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(delegate.count == 2)
        let error = try #require(delegate.stops.withLock { $0.first ?? nil })
        #expect(error.code == .malformedFile)
        #expect(error.message.contains("truncated"))
        guard case .failed = capturer.captureState else {
            Issue.record("expected failed, got \(capturer.captureState)")
            return
        }
        await capturer.stopCapture()
        #expect(capturer.captureState == .idle)
    }
}
