import Foundation
import Subprocess
import SystemPackage

/// Runs external programs (ffmpeg, vpxdec, cjpeg, the built `capturer-probe`) for tests, through swift-subprocess.
///
/// swift-subprocess waits for the child and reads its outputs asynchronously (its own I/O thread and `epoll`), never
/// blocking the Swift cooperative pool: on a 2-core machine that pool has 2 threads, and a test blocking them in a
/// read or a wait would stall every other test. Both outputs are read concurrently, so neither pipe can fill up.
package enum ExternalProcess {
    /// The outcome of one run.
    package struct Result: Sendable {
        /// The exit status (or the terminating signal's number).
        package var status: Int32
        /// Everything the process wrote to standard output.
        package var stdout: Data
        /// Everything the process wrote to standard error.
        package var stderr: Data

        /// Standard output decoded as UTF-8.
        package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error decoded as UTF-8.
        package var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The path of `tool` on `PATH`, or `nil`.
    package static func which(_ tool: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The most either output may hold; a run that writes more fails with swift-subprocess's `outputLimitExceeded`.
    package static let outputLimit = 256 << 20

    /// Runs `executable` (a path, or a name looked up on `PATH`) with `arguments`, `input` on standard input
    /// (`/dev/null` when `nil`), and returns its status and both outputs once it has exited.
    package static func run(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> Result {
        let path = FilePath(executable.contains("/") ? executable : (which(executable) ?? executable))
        let status: TerminationStatus
        let stdout: Data
        let stderr: Data
        if let input {
            let result = try await Subprocess.run(
                .path(path), arguments: Arguments(arguments), input: .data(input),
                output: .data(limit: outputLimit), error: .data(limit: outputLimit))
            (status, stdout, stderr) = (result.terminationStatus, result.standardOutput, result.standardError)
        } else {
            let result = try await Subprocess.run(
                .path(path), arguments: Arguments(arguments), output: .data(limit: outputLimit),
                error: .data(limit: outputLimit))
            (status, stdout, stderr) = (result.terminationStatus, result.standardOutput, result.standardError)
        }
        switch status {
        case .exited(let code): return Result(status: code, stdout: stdout, stderr: stderr)
        case .signaled(let signal): return Result(status: signal, stdout: stdout, stderr: stderr)
        }
    }
}
