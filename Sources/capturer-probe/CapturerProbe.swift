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
        subcommands: [
            List.self, Formats.self, Controls.self, Select.self, Capture.self, Snapshot.self, Send.self, Receive.self,
            Publish.self, Preview.self, Monitor.self,
        ],
        defaultSubcommand: List.self)

    /// Parses the arguments, bootstraps logging, runs the command and turns every failure into one line on standard
    /// error and a distinct exit status (see ``ExitStatus``).
    ///
    /// The process exits only here, after ``runReportingFailures()`` has returned: by then the parsed command, its
    /// error and every other allocation of the run have been released. Calling `exit` from inside the run (as
    /// `exit(withError:)` does) would leave them referenced only from the suspended async frames, which
    /// LeakSanitizer reports as leaks and answers with its own exit status.
    nonisolated static func main() async {
        let status = await runReportingFailures()
        Glibc.exit(status.rawValue)
    }

    /// Runs the command line and returns the exit status; writes help, version and error text itself.
    private static func runReportingFailures() async -> ExitStatus {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            return reportParsingError(error)
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
            return .success
        } catch let error as CaptureError {
            return report(ExitStatus(error.code), error.description, hint: ExitStatus.hint(for: error))
        } catch let error as ProbeFailure {
            return report(error.status, error.message, hint: error.hint)
        } catch {
            return reportParsingError(error)
        }
    }

    /// Help and version requests print as usual (on standard output); argument errors print one line (not the usage
    /// block). Returns the exit status.
    private static func reportParsingError(_ error: any Error) -> ExitStatus {
        let code = exitCode(for: error)
        if code == .success {
            print(fullMessage(for: error))
            return .success
        }
        let message = CapturerProbe.message(for: error)
            .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        let status = code == .validationFailure ? ExitStatus.usage : ExitStatus(rawValue: code.rawValue)
        return report(status, message, hint: "see 'capturer-probe help'")
    }

    /// Writes `capturer-probe: error: <message> (<hint>)` to standard error and returns `status`.
    static func report(_ status: ExitStatus, _ message: String, hint: String?) -> ExitStatus {
        var line = "capturer-probe: error: \(message)"
        if let hint, !hint.isEmpty { line += " — \(hint)" }
        StandardError.write(line.replacingNewlines() + "\n")
        return status
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
