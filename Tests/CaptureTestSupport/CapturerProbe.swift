import Foundation
import Testing

/// Runs the built `capturer-probe` executable, as swift-argument-parser's `AssertExecuteCommand` does.
package enum Probe {
    /// The result of one run.
    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String

        /// Standard error without trailing whitespace, split into lines.
        package var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }

        /// Standard output decoded as a JSON object.
        package func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(stdout)")
        }
    }

    /// The executable (see `BuiltTools.capturerProbe`).
    package static let executable: URL? = BuiltTools.capturerProbe

    /// Whether the executable was found (tests are skipped loudly otherwise).
    package static var isAvailable: Bool {
        if executable == nil { print("SKIPPED: capturer-probe executable not found next to the test bundle") }
        return executable != nil
    }

    /// Runs `capturer-probe arguments…` with `input` on standard input (off the cooperative pool).
    package static func run(_ arguments: [String], input: Data? = nil) async throws -> Result {
        let executable = try #require(executable, "capturer-probe executable not found")
        let result = try await ExternalProcess.run(executable.path, arguments, input: input)
        return Result(status: result.status, stdout: result.stdoutText, stderr: result.stderrText)
    }

    /// A fixture's path.
    package static func fixture(_ name: String) -> String { Fixtures.url(name).path }

    /// A fresh temporary directory.
    package static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("capturer-probe-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
