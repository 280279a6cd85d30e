import CaptureCore
import Foundation

/// Runs external programs (ffmpeg, vpxdec, cjpeg, the built `capturer-probe`) for tests.
///
/// The blocking work (starting the process, reading its output, waiting for its exit) happens on a dedicated `Thread`,
/// never on the Swift cooperative pool: on a 2-core machine that pool has 2 threads, and a test blocking them in
/// `readDataToEndOfFile`/`waitUntilExit` stalls every other test.
package enum ExternalProcess {
    /// The outcome of one run.
    package struct Result: Sendable {
        /// The exit status, or 128 plus the number of the signal that ended it (as a shell reports it).
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
    ///
    /// Cancelling the calling task kills the process (SIGKILL), so a server that never exits by itself cannot hold
    /// its caller forever.
    package static func run(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> Result {
        let child = Locked(Child())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                let thread = Thread {
                    continuation.resume(
                        with: Swift.Result { try runBlocking(executable, arguments, input: input, child: child) })
                }
                thread.name = "ExternalProcess \(executable)"
                thread.start()
            }
        } onCancel: {
            let pid = child.withLock { child -> pid_t? in
                child.cancelled = true
                return child.pid
            }
            if let pid { kill(pid, SIGKILL) }
        }
    }

    /// The running child's pid, and whether the caller was cancelled before it started.
    private struct Child {
        var pid: pid_t?
        var cancelled = false
    }

    /// The blocking run, on the calling thread. Standard input, output and error all go through temporary files: no
    /// pipe can fill up and block the child, and none can be held open by another child. The child is started with
    /// `posix_spawn` (``SpawnedProcess``), which gives it none of this process's other descriptors: Foundation's
    /// `Process` let every child inherit every socket and pipe open at the time (a WHIP test server spawned by one
    /// test kept the preview server's freed port bound in another, and held pipes open in the WHIP suites' hang).
    private static func runBlocking(
        _ executable: String, _ arguments: [String], input: Data?, child: Locked<Child>
    ) throws -> Result {
        let path = executable.contains("/") ? executable : (which(executable) ?? executable)
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("external-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let outputFile = try makeOutputFile("stdout", in: scratch)
        let errorFile = try makeOutputFile("stderr", in: scratch)
        var inputStream = SpawnedProcess.Stream.null
        if let input {
            let inputFile = scratch.appendingPathComponent("stdin")
            try input.write(to: inputFile)
            inputStream = .file(inputFile.path)
        }
        let pid = try SpawnedProcess.start(
            [executable] + arguments, executable: path, input: inputStream, output: .file(outputFile.path),
            error: .file(errorFile.path))
        let cancelled = child.withLock { child -> Bool in
            child.pid = pid
            return child.cancelled
        }
        if cancelled { kill(pid, SIGKILL) }
        // blocking: on the thread `run` made for this process.
        let status = SpawnedProcess.waitForExit(pid)
        child.withLock { $0.pid = nil }
        // Read through the handle rather than `Data(contentsOf:)`, whose read of an empty file leaks its 4 KB buffer
        // (LeakSanitizer: one 4096-byte direct leak per run from FoundationEssentials.readBytesFromFile).
        let stdout = try FileHandle(forReadingFrom: outputFile).readToEnd() ?? Data()
        let stderr = try FileHandle(forReadingFrom: errorFile).readToEnd() ?? Data()
        return Result(status: status, stdout: stdout, stderr: stderr)
    }

    /// An empty file `name` in `directory`, for a child's output.
    private static func makeOutputFile(_ name: String, in directory: URL) throws -> URL {
        let file = directory.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        return file
    }
}
