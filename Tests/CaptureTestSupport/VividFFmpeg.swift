import Foundation

/// Runs the host's `ffmpeg` as the independent reference converter for vivid guest frames.
package enum VividFFmpeg {
    /// A failed ffmpeg run, with its exit status and standard error.
    package struct Failure: Error, CustomStringConvertible {
        /// What went wrong, including ffmpeg's own message.
        package let description: String
    }

    /// The `ffmpeg` executable found on `PATH`, if any.
    package static var executable: URL? { ExternalProcess.which("ffmpeg").map { URL(fileURLWithPath: $0) } }

    /// Whether ffmpeg exists; prints a loud note naming `test` when it does not.
    package static func available(for test: String) -> Bool {
        guard executable != nil else {
            print("SKIPPED (\(test)): ffmpeg is not installed (Scripts/install-deps --test)")
            return false
        }
        return true
    }

    /// Converts a raw frame with ffmpeg: `ffmpeg -f rawvideo -pix_fmt FROM -s WxH -i input -pix_fmt TO -f rawvideo`.
    package static func convertRaw(
        _ input: URL, from inputFormat: String, width: Int, height: Int, to outputFormat: String
    ) async throws -> [UInt8] {
        guard let ffmpeg = executable else { throw Failure(description: "ffmpeg is not installed") }
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("vivid-ffmpeg-\(UUID().uuidString).\(outputFormat)")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try await ExternalProcess.run(
            ffmpeg.path,
            [
                "-nostdin", "-loglevel", "error", "-y",
                "-f", "rawvideo", "-pix_fmt", inputFormat, "-s", "\(width)x\(height)", "-i", input.path,
                "-pix_fmt", outputFormat, "-f", "rawvideo", output.path,
            ])
        guard result.status == 0 else {
            throw Failure(description: "ffmpeg exited \(result.status): \(result.stderrText)")
        }
        return [UInt8](try Data(contentsOf: output))
    }
}
