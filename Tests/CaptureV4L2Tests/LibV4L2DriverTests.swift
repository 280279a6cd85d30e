import CaptureCore
import CaptureV4L2
import Foundation
import Testing

/// The real libv4l2 driver on nodes that are not cameras: no device needed.
@Suite("libv4l2 driver on things that are not video devices")
struct LibV4L2DriverTests {
    @Test("/dev/null, a regular file and a directory are notACaptureDevice, naming the node and open")
    func notVideoNodes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("v4l2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("video0")
        try Data("not a camera".utf8).write(to: file)
        for node in ["/dev/null", file.path, directory.path] {
            do {
                _ = try V4L2Backend.describe(node: node)
                Issue.record("\(node) was accepted")
            } catch {
                #expect(error.code == .notACaptureDevice, "\(node): \(error)")
                #expect(error.device == node)
                #expect(error.call == "open")
            }
        }
    }

    @Test("a missing node is deviceNotFound")
    func missing() {
        #expect(throws: CaptureError.self) { try V4L2Backend.describe(node: "/dev/video-does-not-exist") }
        do {
            _ = try V4L2Backend.describe(node: "/dev/video-does-not-exist")
        } catch {
            #expect(error.code == .deviceNotFound)
        }
    }
}
