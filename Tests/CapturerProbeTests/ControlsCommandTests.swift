import CaptureCore
import CaptureTestSupport
import Foundation
import Testing

@Suite("capturer-probe controls", .enabled(if: Probe.isAvailable, "the built capturer-probe executable"))
struct ControlsCommandTests {
    static let dumps = (try? Fixtures.files(in: "devices/controls").filter { $0.hasSuffix(".txt") }) ?? []

    @Test("controls --controls reproduces every recorded dump byte for byte", arguments: dumps)
    func listing(file: String) async throws {
        let path = Probe.fixture("devices/controls/" + file)
        let result = try await Probe.run(["controls", "--controls", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (try Fixtures.text("devices/controls/" + file)))
    }

    @Test("--get prints values as v4l2-ctl --get-ctrl does")
    func get() async throws {
        let vivid = Probe.fixture("devices/controls/vivid.txt")
        let result = try await Probe.run(["controls", "--controls", vivid, "--get", "menu,integer_menu,bitmask,string"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "menu: 3 (Menu Item 3)\ninteger_menu: 4 (5 0x5)\nbitmask: -2147475456\nstring: '  '\n")
        // Plain user-class controls alone are read with G_CTRL by v4l2-ctl: bare numbers, menus too.
        let uvc = Probe.fixture("devices/controls/uvc-logitech-with-ids.txt")
        let plain = try await Probe.run(["controls", "--controls", uvc, "--get", "brightness,power_line_frequency"])
        #expect(plain.stdout == "brightness: 140\npower_line_frequency: 2\n")
    }

    @Test("--set several at once, by menu item name, then --get; JSON")
    func setAndGet() async throws {
        let uvc = Probe.fixture("devices/controls/uvc-logitech-with-ids.txt")
        let result = try await Probe.run([
            "controls", "--controls", uvc, "--set", "exposure_auto=Manual Mode,exposure_absolute=100",
            "--get", "exposure_auto,exposure_absolute", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["schemaVersion"] as? Int == 1)
        #expect(json["set"] as? [String] == ["exposure_auto", "exposure_absolute"])
        let values = try #require(json["values"] as? [[String: Any]])
        #expect(values.map { $0["valueText"] as? String } == ["1 (Manual Mode)", "100"])
    }

    @Test(
        "bad names, bad values and refused controls have their own exit statuses",
        arguments: [
            (["--set", "shininess=1"], Int32(15), "no control named 'shininess'"),
            (["--get", "shininess"], 15, "no control named"),
            (["--set", "brightness=300"], 16, "out of range (0...255); the nearest valid value is 255"),
            (["--set", "pan_absolute=1000"], 16, "not on the step"),
            (["--set", "power_line_frequency=75 Hz"], 16, "not a menu item"),
            (["--set", "brightness=bright"], 16, "not a number"),
            (["--set", "focus_absolute=30"], 17, "inactive"),
            (["--set", "brightness"], 64, "not name=value"),
        ])
    func failures(arguments: [String], status: Int32, message: String) async throws {
        let uvc = Probe.fixture("devices/controls/uvc-logitech-with-ids.txt")
        let result = try await Probe.run(["controls", "--controls", uvc] + arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("read-only and write-only controls (vivid) exit 17")
    func notWritable() async throws {
        let vivid = Probe.fixture("devices/controls/vivid.txt")
        let readOnly = try await Probe.run(["controls", "--controls", vivid, "--set", "read_only_integer_32_bits=1"])
        #expect(readOnly.status == 17)
        #expect(readOnly.stderr.contains("read-only"))
        let writeOnly = try await Probe.run(["controls", "--controls", vivid, "--get", "button"])
        #expect(writeOnly.status == 17)
        #expect(writeOnly.stderr.contains("write-only"))
    }

    @Test("--save writes a profile, --load applies it and reports what it skipped")
    func profiles() async throws {
        let directory = try Probe.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("c920.json").path
        let uvc = Probe.fixture("devices/controls/uvc-logitech-with-ids.txt")
        let saved = try await Probe.run(["controls", "--controls", uvc, "--save", profile])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.hasPrefix("saved "))
        let decoded = try JSONDecoder().decode(
            ControlProfile.self, from: Data(contentsOf: URL(fileURLWithPath: profile)))
        #expect(decoded.version == 1)
        #expect(decoded.controls.contains { $0.key == "brightness" && $0.value == .integer(140) })

        let lifecam = Probe.fixture("devices/controls/uvc-lifecam-without-ids.txt")
        let loaded = try await Probe.run(["controls", "--controls", lifecam, "--load", profile])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        #expect(loaded.stdout.contains("applied: "))
        #expect(loaded.stdout.contains("skipped: focus_absolute: no control named"))
        // The LifeCam's brightness starts at 30: 140 is within its range, so it applies.
        #expect(loaded.stdout.split(separator: "\n").first?.contains("brightness") == true)

        let json = try await Probe.run(["controls", "--controls", lifecam, "--load", profile, "--json"]).json()
        let report = try #require(json["loaded"] as? [String: Any])
        #expect((report["skipped"] as? [[String: Any]])?.isEmpty == false)

        let missing = try await Probe.run(["controls", "--controls", uvc, "--load", directory.path + "/none.json"])
        #expect(missing.status == 3)
    }

    @Test("--watch --seconds ends by itself; a device without controls says so")
    func watchAndMissing() async throws {
        let uvc = Probe.fixture("devices/controls/uvc-logitech-with-ids.txt")
        let watched = try await Probe.run(["controls", "--controls", uvc, "--watch", "--seconds", "0.2"])
        #expect(watched.status == 0, "\(watched.stderr)")
        let synthetic = try await Probe.run(["controls", "--device", "synthetic"])
        #expect(synthetic.status == 1)
        #expect(synthetic.stderr.contains("has no controls"))
        let malformed = try await Probe.run(["controls", "--controls", Probe.fixture("devices/vivid.txt")])
        #expect(malformed.status == 7)
        let neither = try await Probe.run(["controls"])
        #expect(neither.status == 64)
        let both = try await Probe.run(["controls", "--device", "synthetic", "--controls", uvc])
        #expect(both.status == 64)
    }
}
