import Foundation

/// External programs some tests compare against; a missing one skips those tests with a printed note.
package enum ExternalTools {
    /// `ffmpeg`, to make test JPEGs and decode them independently.
    package static let ffmpeg = find("ffmpeg", purpose: "MJPEG tests against FFmpeg's decoder")
    /// `cjpeg` (libjpeg-turbo-progs), to make 4:2:2 JPEGs with UVC's Y 2x1 / chroma 1x1 sampling.
    package static let cjpeg = find(
        "cjpeg", purpose: "the UVC-style 4:2:2 JPEG test (apt-get install libjpeg-turbo-progs)")
    /// `djpeg` (libjpeg-turbo-progs), libjpeg's own RGB decoding of 4:4:0 and 4:1:1 JPEGs.
    package static let djpeg = find("djpeg", purpose: "the MJPEG sampling tests (apt-get install libjpeg-turbo-progs)")

    private static func find(_ name: String, purpose: String) -> URL? {
        if let path = ExternalProcess.which(name) { return URL(fileURLWithPath: path) }
        FileHandle.standardError.write(Data("NOTE: \(name) not found on PATH: skipping \(purpose)\n".utf8))
        return nil
    }

    /// Runs `tool` with `arguments` (off the cooperative pool), standard output to `output` if given; throws when it
    /// fails.
    package static func run(_ tool: URL, _ arguments: [String], output: URL? = nil) async throws {
        let result = try await ExternalProcess.run(tool.path, arguments)
        guard result.status == 0 else {
            throw ToolFailure(
                description: "\(tool.lastPathComponent) \(arguments.joined(separator: " ")) exited \(result.status): "
                    + result.stderrText)
        }
        if let output { try result.stdout.write(to: output) }
    }

    package struct ToolFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// A fresh temporary directory for one test.
    package static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
