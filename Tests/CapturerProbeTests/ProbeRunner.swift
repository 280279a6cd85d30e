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

    /// The executable: next to the test bundle (`.build/<config>/`), else in the package's `.build/debug`, else (in the
    /// vivid guest) `/usr/local/bin`.
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
        // Where Scripts/test-vivid installs it in the vivid guest.
        candidates.append(URL(fileURLWithPath: "/usr/local/bin/capturer-probe"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether the executable was found (tests are skipped loudly otherwise).
    static var isAvailable: Bool {
        if executable == nil { print("SKIPPED: capturer-probe executable not found next to the test bundle") }
        return executable != nil
    }

    /// Runs `capturer-probe arguments…` with `input` on standard input (off the cooperative pool).
    static func run(_ arguments: [String], input: Data? = nil) async throws -> Result {
        let executable = try #require(executable, "capturer-probe executable not found")
        let result = try await ExternalProcess.run(executable.path, arguments, input: input)
        return Result(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
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
}
