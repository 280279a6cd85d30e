import ArgumentParser
import Foundation
import CaptureCore
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `capturer-probe`: lists cameras, prints their formats as `v4l2-ctl` does, explains the capturer's format choice,
/// captures and encodes to VP8, and takes snapshots.
@main
struct CapturerProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capturer-probe",
        abstract: "Inspect cameras and the capturer: devices, formats, format selection, VP8 capture, snapshots.",
        discussion: """
            DEVICES (--device): a V4L2 node (/dev/video0), an id shown by 'list', 'synthetic' (or 'synthetic:back', \
            'synthetic:external'), or a .y4m file. --formats FILE uses a recorded 'v4l2-ctl --list-formats-ext' dump \
            instead ('-' reads standard input). Without either, the capturer's default device: the first real \
            camera, else the synthetic camera.

            OUTPUT: human-readable text on standard output; --json prints one JSON object (schemaVersion 1, sorted \
            keys). Errors are one line on standard error.

            EXIT STATUS:
            \(ExitStatus.table)
            """,
        version: "1.0.0",
        subcommands: [List.self, Formats.self, Select.self, Capture.self, Snapshot.self],
        defaultSubcommand: List.self)

    /// Parses the arguments, bootstraps logging, runs the command and turns every failure into one line on standard
    /// error and a distinct exit status (see ``ExitStatus``).
    nonisolated static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForParsingError(error)
        }
        if let probe = command as? any ProbeCommand {
            bootstrapLogging(verbose: probe.global.verbose)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let error as CaptureError {
            fail(ExitStatus(error.code), error.description, hint: ExitStatus.hint(for: error.code))
        } catch let error as ProbeFailure {
            fail(error.status, error.message, hint: error.hint)
        } catch {
            exitForParsingError(error)
        }
    }

    /// Help and version requests print as usual; argument errors print one line (not the usage block).
    private static func exitForParsingError(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success { exit(withError: error) }
        let message = CapturerProbe.message(for: error)
            .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        let status = code == .validationFailure ? ExitStatus.usage : ExitStatus(rawValue: code.rawValue)
        fail(status, message, hint: "see 'capturer-probe help'")
    }

    /// Writes `capturer-probe: error: <message> (<hint>)` to standard error and exits with `status`.
    static func fail(_ status: ExitStatus, _ message: String, hint: String?) -> Never {
        var line = "capturer-probe: error: \(message)"
        if let hint, !hint.isEmpty { line += " — \(hint)" }
        StandardError.write(line.replacingNewlines() + "\n")
        Glibc.exit(status.rawValue)
    }

    /// The only logging bootstrap of the package: standard error, `warning` by default, `debug` with `--verbose`.
    private static func bootstrapLogging(verbose: Bool) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .warning
            return handler
        }
    }
}

extension String {
    /// The text on one line: line breaks become `; `.
    func replacingNewlines() -> String {
        split(whereSeparator: \.isNewline).joined(separator: "; ")
    }
}
