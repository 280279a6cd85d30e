import Foundation

/// The process's own memory figures, from `/proc/self/status` (for the package's tools: capturer-probe's reports
/// and capture-bench).
package enum ProcessMemory {
    /// The peak resident set size (`VmHWM`) in KiB, or `nil` when `/proc` is not there or does not say.
    package static func peakResidentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}
