import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe monitor", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct MonitorCommandTests {
    @Test("--seconds stops it: exit 0, the header line in text; JSON lines, each an object with schemaVersion 1")
    func runsForSeconds() async throws {
        let started = Date()
        let text = try await Probe.run(["monitor", "--seconds", "0.3"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("watching /dev for cameras for 0.3 s"))
        // Only a guard against a monitor that never stops: in the parallel run under ASan, starting the child
        // alone took 55 s once, so no tighter bound is a fact about the monitor.
        #expect(Date().timeIntervalSince(started) < 120)
        let json = try await Probe.run(["monitor", "--seconds", "0.3", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        for line in json.stdout.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["schemaVersion"] as? Int == 1)
            #expect(["present", "added", "removed", "changed"].contains(object?["event"] as? String ?? ""))
        }
    }

    @Test("a bad --seconds is a usage error (64)", arguments: ["0", "nan", "abc"])
    func badSeconds(_ value: String) async throws {
        let result = try await Probe.run(["monitor", "--seconds", value])
        #expect(result.status == 64)
        #expect(result.stderr.contains("seconds"), "\(result.stderr)")
    }
}
