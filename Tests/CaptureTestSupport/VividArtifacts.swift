import Foundation

/// The files `Scripts/test-vivid` brings back from the vivid guest's `/out` into `.build/vivid-out/`.
package enum VividArtifacts {
    /// The package root, derived from this file's path (`<root>/Tests/CaptureTestSupport/VividArtifacts.swift`).
    package static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `.build/vivid-out` under the package root.
    package static let directory: URL = packageRoot.appendingPathComponent(".build/vivid-out", isDirectory: true)

    /// One raw YUYV 640x480 frame captured by `v4l2-ctl` in the guest (vivid's OSD text off).
    package static let referenceYUYV = "v4l2ctl-640x480.yuyv"
    /// Our backend's frame of the same scene, tightly packed NV12 640x480 (Y plane, then interleaved UV).
    package static let oursNV12 = "ours-640x480.nv12"
    /// `v4l2-ctl --list-formats-ext` of the guest's `/dev/video0`.
    package static let referenceFormats = "v4l2ctl-formats.txt"
    /// `capturer-probe formats` of the guest's `/dev/video0`.
    package static let probeFormats = "probe-formats.txt"

    /// The URL of artifact `name`.
    package static func url(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    /// Whether every named artifact exists; when one is missing, prints a loud note naming `test` and the reason.
    package static func available(_ names: [String], for test: String) -> Bool {
        guard FileManager.default.fileExists(atPath: directory.path) else {
            print("SKIPPED (\(test)): no \(directory.path): run Scripts/test-vivid first")
            return false
        }
        for name in names where !FileManager.default.fileExists(atPath: url(name).path) {
            print("SKIPPED (\(test)): the vivid guest did not produce \(name) in \(directory.path)")
            return false
        }
        return true
    }

    /// The bytes of artifact `name`.
    package static func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(name)))
    }
}
