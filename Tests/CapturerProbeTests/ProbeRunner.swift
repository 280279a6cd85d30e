import CaptureTestSupport
import Foundation
import Testing

/// Runs the built `capturer-probe` executable, as swift-argument-parser's `AssertExecuteCommand` does.
enum Probe {
    /// The result of one run.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String

        /// Standard error without trailing whitespace, split into lines.
        var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }

        /// Standard output decoded as a JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(stdout)")
        }
    }

    /// The executable: next to the test bundle (`.build/<config>/`), else in the package's `.build/debug`.
    static let executable: URL? = {
        var candidates: [URL] = []
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("capturer-probe"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("capturer-probe"))
        if let argument = CommandLine.arguments.first {
            candidates.append(
                URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent("capturer-probe"))
        }
        candidates.append(Fixtures.packageRoot.appendingPathComponent(".build/debug/capturer-probe"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether the executable was found (tests are skipped loudly otherwise).
    static var isAvailable: Bool {
        if executable == nil { print("SKIPPED: capturer-probe executable not found next to the test bundle") }
        return executable != nil
    }

    /// Runs `capturer-probe arguments…` with `input` on standard input.
    static func run(_ arguments: [String], input: Data? = nil) throws -> Result {
        let executable = try #require(executable, "capturer-probe executable not found")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Standard error goes to a file, so that one pipe cannot fill up and block the child while we read the other.
        let errorFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("capturer-probe-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        let stdout = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = errorHandle
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errorHandle.close()
        let errorData = try Data(contentsOf: errorFile)
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// A fixture's path.
    static func fixture(_ name: String) -> String { Fixtures.url(name).path }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("capturer-probe-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The path of `tool` on `PATH`, or `nil`.
    static func tool(_ tool: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs an external tool, returning its exit status and standard output.
    static func external(_ path: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}
