import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

/// Inputs the `y4m` fuzz target found (Fixtures/fuzz/regressions/).
@Suite("Y4M fuzz regressions")
struct Y4MFuzzRegressionTests {
    @Test("a 30-byte file whose header declares W16384 H16384 is malformed before any frame buffer is allocated")
    func headerDeclaringHugeFrame() throws {
        let path = Fixtures.url("fuzz/regressions/y4m-header-declares-402mb").path
        let error = try #require(throws: CaptureError.self) { _ = try Y4MReader(path: path) }
        #expect(error.code == .malformedFile)
        #expect(error.message.contains("16384x16384"), "\(error.message)")
    }

    @Test("a frame larger than the maximum is malformed even when the file is large enough to hold it")
    func frameAboveMaximum() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).y4m").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A sparse file: 512 MB long, holding only the header, so the size check alone would let it through.
        try Data("YUV4MPEG2 W16384 H16384 C420\n".utf8).write(to: URL(fileURLWithPath: path))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 512 << 20)
        try handle.close()
        let error = try #require(throws: CaptureError.self) { _ = try Y4MReader(path: path) }
        #expect(error.code == .malformedFile)
        #expect(error.message.contains("more than \(Y4MReader.maximumFrameBytes)"), "\(error.message)")
    }

    @Test("a file too short for one declared frame is malformed; one whole frame opens")
    func fileTooShort() throws {
        let short = try writeY4M(frames: 1, truncateLastBy: 1)
        defer { try? FileManager.default.removeItem(atPath: short) }
        let error = try #require(throws: CaptureError.self) { _ = try Y4MReader(path: short) }
        #expect(error.code == .malformedFile)
        #expect(error.message.contains("cannot hold one 64x48 frame"), "\(error.message)")
        let one = try writeY4M(frames: 1)
        defer { try? FileManager.default.removeItem(atPath: one) }
        let reader = try Y4MReader(path: one)
        #expect(try reader.readFrame())
        #expect(reader.frame.count == 64 * 48 * 3 / 2)
    }
}
