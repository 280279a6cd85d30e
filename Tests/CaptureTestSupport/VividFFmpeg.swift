import Foundation

/// Runs the host's `ffmpeg` as the independent reference converter for vivid guest frames.
package enum VividFFmpeg {
    /// A failed ffmpeg run, with its exit status and standard error.
    package struct Failure: Error, CustomStringConvertible {
        /// What went wrong, including ffmpeg's own message.
        package let description: String
    }

    /// The `ffmpeg` executable found on `PATH`, if any.
    package static var executable: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent("ffmpeg")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

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
    ) throws -> [UInt8] {
        guard let ffmpeg = executable else { throw Failure(description: "ffmpeg is not installed") }
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("vivid-ffmpeg-\(UUID().uuidString).\(outputFormat)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = ffmpeg
        process.arguments = [
            "-nostdin", "-loglevel", "error", "-y",
            "-f", "rawvideo", "-pix_fmt", inputFormat, "-s", "\(width)x\(height)", "-i", input.path,
            "-pix_fmt", outputFormat, "-f", "rawvideo", output.path,
        ]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "ffmpeg exited \(process.terminationStatus): \(String(decoding: message, as: UTF8.self))")
        }
        return [UInt8](try Data(contentsOf: output))
    }
}
