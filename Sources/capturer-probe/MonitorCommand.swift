import ArgumentParser
import CaptureCore
import CaptureV4L2
import Foundation

extension CapturerProbe {
    /// `capturer-probe monitor`: cameras plugged in, unplugged and changed, as they happen.
    struct Monitor: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print cameras as they are plugged in, unplugged or changed, until interrupted.",
            discussion: """
                Watches /dev with inotify (no udev daemon needed). The cameras present at the start are printed \
                first as 'present'. A new camera is printed once its node can be opened. Text: one line per event \
                (seconds since the start, event, id, node, name, and for 'added' how long the node took to become \
                usable). --json: one JSON object per line (schemaVersion 1).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "Stop after this many seconds (default: run until interrupted).")
        var seconds: Double?

        struct Line: Codable {
            var schemaVersion = jsonSchemaVersion
            /// present, added, removed or changed.
            var event: String
            var elapsedSeconds: Double
            /// For added and changed: milliseconds from the file-system event to the node being usable.
            var settleMilliseconds: Double?
            var device: DeviceSummary
        }

        func validate() throws {
            if let seconds, !(seconds > 0 && seconds.isFinite) {
                throw ValidationError("--seconds must be a positive number, not \(seconds)")
            }
        }

        mutating func run() async throws {
            let monitor = DeviceMonitor()
            let startNs = MonotonicClock.nowNs()
            let events = try monitor.events()
            let json = global.json
            for device in monitor.devices() {
                try Self.emit(Line(event: "present", elapsedSeconds: 0, device: DeviceSummary(device)), json: json)
            }
            if !json {
                let limit = seconds.map { "for " + String(format: "%g", $0) + " s" } ?? "until interrupted"
                print("watching /dev for cameras \(limit)")
                fflush(nil)
            }
            let watch = Task {
                for await event in events {
                    let line = Line(
                        event: event.kind.rawValue, elapsedSeconds: Double(event.observedNs &- startNs) / 1e9,
                        settleMilliseconds: event.kind == .removed
                            ? nil : Double(event.reportedNs &- event.observedNs) / 1e6,
                        device: DeviceSummary(event.device))
                    try? Self.emit(line, json: json)
                }
            }
            if let seconds {
                try? await Task.sleep(for: .seconds(seconds))
                watch.cancel()
            }
            await watch.value
        }

        private static func emit(_ line: Line, json: Bool) throws {
            if json {
                try printJSONLine(line)
            } else {
                let event = line.event.padding(toLength: 8, withPad: " ", startingAt: 0)
                var text = String(format: "%9.3f s  ", line.elapsedSeconds) + event + " "
                text += [line.device.id, line.device.node ?? "-", line.device.name].joined(separator: "  ")
                if let settle = line.settleMilliseconds { text += String(format: "  (usable after %.1f ms)", settle) }
                print(text)
            }
            fflush(nil)
        }
    }
}
