import Foundation

/// Runs external programs (ffmpeg, vpxdec, cjpeg, the built `capturer-probe`) for tests.
///
/// The blocking work (starting the process, reading its output, waiting for its exit) happens on a dedicated `Thread`,
/// never on the Swift cooperative pool: on a 2-core machine that pool has 2 threads, and a test blocking them in
/// `readDataToEndOfFile`/`waitUntilExit` stalls every other test.
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

    /// Runs `executable` (a path, or a name looked up on `PATH`) with `arguments`, `input` on standard input (none when
    /// `nil`), and returns its status and both outputs once it has exited.
    package static func run(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let thread = Thread {
                continuation.resume(with: Swift.Result { try runBlocking(executable, arguments, input: input) })
            }
            thread.name = "ExternalProcess \(executable)"
            thread.start()
        }
    }

    /// The blocking run, on the calling thread. Standard input and standard error go through temporary files and only
    /// standard output through a pipe, so that no pipe can fill up and block the child while this thread waits on
    /// another.
    private static func runBlocking(_ executable: String, _ arguments: [String], input: Data?) throws -> Result {
        let process = Process()
        let path = executable.contains("/") ? executable : (which(executable) ?? executable)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments

        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("external-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let errorFile = scratch.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        defer { try? errorHandle.close() }
        process.standardError = errorHandle

        var inputHandle: FileHandle?
        if let input {
            let inputFile = scratch.appendingPathComponent("stdin")
            try input.write(to: inputFile)
            inputHandle = try FileHandle(forReadingFrom: inputFile)
            process.standardInput = inputHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { try? inputHandle?.close() }

        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        // blocking: on the thread `run` made for this process.
        process.waitUntilExit()
        // Read through the handle rather than `Data(contentsOf:)`, whose read of an empty file leaks its 4 KB buffer
        // (LeakSanitizer: one 4096-byte direct leak per run from FoundationEssentials.readBytesFromFile).
        let stderr = try FileHandle(forReadingFrom: errorFile).readToEnd() ?? Data()
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}
