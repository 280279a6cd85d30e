import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureV4L2

/// Mean luma of the frames a vivid session delivers.
final class LumaRecorder: Sendable {
    struct State {
        var frames = 0
        var lastMean: Double?
    }
    let state = Locked(State())

    var events: CaptureSessionEvents {
        CaptureSessionEvents(
            frame: { [self] buffer, _ in
                let luma = buffer.packedBytes(plane: 0)
                let mean = luma.isEmpty ? 0 : Double(luma.reduce(0) { $0 + Int($1) }) / Double(luma.count)
                state.withLock {
                    $0.frames += 1
                    $0.lastMean = mean
                }
            }, dropped: { _ in }, ended: { _ in })
    }

    /// The mean luma once the frames reflect a change made before this call: waits `settle` frames (the driver's
    /// queue holds frames generated earlier), then until two frames `settle` apart agree. Under the guest's emulated
    /// CPU the session runs at a few frames per second, so each wait allows 20 s.
    func meanAfter(settle: Int = 6) async throws -> Double {
        func waitFrames(_ count: Int) async throws -> Double {
            let start = state.withLock { $0.frames }
            let deadline = Date().addingTimeInterval(20)
            while state.withLock({ $0.frames }) < start + count && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let (frames, mean) = state.withLock { ($0.frames, $0.lastMean) }
            try #require(frames >= start + count, "no frames arrived")
            return try #require(mean)
        }
        var previous = try await waitFrames(settle)
        for _ in 0..<3 {
            let current = try await waitFrames(settle)
            if abs(current - previous) < 0.5 { return current }
            previous = current
        }
        return previous
    }
}

/// Controls against the real vivid driver (inside the vivid QEMU guest). Every test restores what it changes: the
/// backend suite that runs later compares frames with a reference taken at the default controls.
@Suite(
    "Vivid controls", .tags(.lab, .vividGuest), .selectedByTags, .serialized,
    .enabled(
        if: VividGuest.enabled,
        "needs the vivid V4L2 driver: runs only inside the vivid QEMU guest (CAPTURE_VIVID_GUEST=1)"))
struct VividControlsTests {
    static func controls() throws -> CameraControls { try V4L2Backend.controls(node: VividGuest.node) }

    @Test("1. the listing is byte-identical to v4l2-ctl --list-ctrls-menus")
    func listing() throws {
        let controls = try Self.controls()
        // vivid's gain is volatile (it follows the clock's seconds): retry if the two reads straddle a change.
        var ours = ""
        var theirs = ""
        for _ in 0..<3 {
            ours = try controls.listing().render()
            theirs = try VividGuest.v4l2ctl(["-d", VividGuest.node, "--list-ctrls-menus"])
            if ours == theirs { break }
        }
        #expect(ours == theirs)
        let oursLines = ours.split(separator: "\n", omittingEmptySubsequences: false)
        let theirLines = theirs.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (mine, reference)) in zip(oursLines, theirLines).enumerated() where mine != reference {
            Issue.record("line \(index + 1): ours \"\(mine)\" vs v4l2-ctl \"\(reference)\"")
            break
        }
        print("vivid controls: \(try controls.descriptions().count) controls, \(oursLines.count) lines, identical")
        try FileManager.default.createDirectory(atPath: VividGuest.out, withIntermediateDirectories: true)
        try Data(ours.utf8).write(to: URL(fileURLWithPath: VividGuest.out + "/ours-list-ctrls-menus.txt"))
        // The same text parses back to what we queried.
        let parsed = try V4L2ControlList.parse(theirs)
        #expect(parsed.render() == theirs)
        #expect(parsed.controls.map(\.description.id) == (try controls.listing().controls.map(\.description.id)))
    }

    @Test("2. brightness set through the API raises the captured frames' mean luma monotonically")
    func brightnessLuma() async throws {
        try VividGuest.setMenuControl("OSD Text Mode", to: "None")
        let controls = try Self.controls()
        let original = try controls.value(of: .brightness)
        defer { try? controls.set(.brightness, to: original) }
        let device = try V4L2Backend.describe(node: VividGuest.node)
        let recorder = LumaRecorder()
        let (session, _) = try VividGuest.session(device, events: recorder.events)
        try await session.start()
        do {
            var means: [(Int64, Double)] = []
            for value: Int64 in [32, 96, 160, 224] {
                try controls.set(.brightness, to: value)
                means.append((value, try await recorder.meanAfter()))
            }
            print(
                "brightness -> mean luma: "
                    + means.map { "\($0.0): \(String(format: "%.1f", $0.1))" }.joined(separator: ", "))
            #expect(zip(means.dropFirst(), means).allSatisfy { $0.1 > $1.1 + 1 }, "\(means)")
        } catch {
            await session.stop()
            throw error
        }
        await session.stop()
    }

    @Test("3. int64, string, bitmask, menu and integer-menu controls read and write as v4l2-ctl shows them")
    func types() throws {
        let controls = try Self.controls()
        let keys = ["integer_64_bits", "string", "bitmask", "menu", "integer_menu"]
        let saved = try controls.values(keys).map { ($0.control.key, $0.value) }
        defer { try? controls.set(saved.map { (key: $0.0, value: $0.1) }) }

        func v4l2ctlGet() throws -> String {
            try VividGuest.v4l2ctl(["-d", VividGuest.node, "--get-ctrl", keys.joined(separator: ",")])
        }
        func oursGet() throws -> String {
            try controls.values(keys).map {
                "\($0.control.key): " + V4L2ControlList.valueText(.init($0.control, value: $0.value)) + "\n"
            }
            .joined()
        }
        // Written by us, read by v4l2-ctl.
        try controls.set([
            ("integer_64_bits", .integer64(-9_000_000_000)), ("string", .string("abcd")),
            ("bitmask", .bitmask(0x8000_0010)), ("menu", .menu(4)), ("integer_menu", .menu(6)),
        ])
        let written = try v4l2ctlGet()
        #expect(written == (try oursGet()))
        #expect(
            written
                == "integer_64_bits: -9000000000\nstring: 'abcd'\nbitmask: -2147483632\nmenu: 4 (Menu Item 4)\n"
                + "integer_menu: 6 (13 0xd)\n")
        // Written by v4l2-ctl, read by us.
        _ = try VividGuest.v4l2ctl([
            "-d", VividGuest.node, "--set-ctrl", "integer_64_bits=42,string=xy,bitmask=0x2000,menu=1,integer_menu=2",
        ])
        #expect(
            try controls.values(keys).map(\.value) == [
                .integer64(42), .string("xy"), .bitmask(0x2000), .menu(1), .menu(2),
            ])
        #expect(try v4l2ctlGet() == (try oursGet()))
        // Arrays and compound controls are read too.
        let matrix = try controls.value("u16_8x16_matrix")
        guard case .payload(let bytes) = matrix else { Issue.record("not a payload: \(matrix)"); return }
        #expect(bytes.count == 8 * 16 * 2)
        #expect(bytes[0] == 24 && bytes[1] == 0)  // every element starts at the default, 24
        let area = try controls.value("area")
        #expect(area == .payload([0xe8, 0x03, 0, 0, 0xd0, 0x07, 0, 0]))  // 1000x2000
    }

    @Test(
        "4. read-only, write-only (button) and inactive controls give their typed errors; values are refused, not clamped"
    )
    func refusals() throws {
        let controls = try Self.controls()
        #expect(throws: ControlError.readOnly("read_only_integer_32_bits")) {
            try controls.set("read_only_integer_32_bits", to: .integer(1))
        }
        #expect(throws: ControlError.writeOnly("button")) { try controls.value("button") }
        #expect(try controls.description(of: "gain").flags.contains(.inactive))
        #expect(throws: ControlError.inactive("gain")) { try controls.set("gain", to: .integer(10)) }
        let range = ControlRange(minimum: 0, maximum: 255, step: 1)
        #expect(throws: ControlError.outOfRange(control: "brightness", value: 256, range: range, nearest: 255)) {
            try controls.set(.brightness, to: 256)
        }
        try controls.set("button", to: .integer(1))
        // The driver's own refusal names the control: S_EXT_CTRLS refuses the whole request (error_idx == count),
        // TRY_EXT_CTRLS then says which one.
        let handle = try V4L2Handle.open(VividGuest.node, driver: LibV4L2Driver())
        defer { handle.close() }
        let all = try handle.extendedControls()
        let brightness = try #require(all.first { $0.key == "brightness" })
        let readOnly = try #require(all.first { $0.key == "read_only_integer_32_bits" })
        #expect {
            try handle.setExtendedControls([
                ControlAssignment(brightness, .integer(128)), ControlAssignment(readOnly, .integer(1)),
            ])
        } throws: { error in
            (error as? ExtendedControlsFailure)?.index == 1
        }
        #expect(try controls.value(of: .brightness) == 128)
    }

    @Test("5. a value set by v4l2-ctl --set-ctrl during a capture arrives as an event")
    func events() async throws {
        let controls = try Self.controls()
        let original = try controls.value(of: .contrast)
        defer { try? controls.set(.contrast, to: original) }
        let device = try V4L2Backend.describe(node: VividGuest.node)
        let recorder = LumaRecorder()
        let (session, _) = try VividGuest.session(device, events: recorder.events)
        try await session.start()
        do {
            _ = try await recorder.meanAfter(settle: 2)
            let events = try controls.events()
            let started = Date()
            let received = await withTaskGroup(of: ControlEvent?.self) { group in
                group.addTask {
                    for await event in events where event.key == "contrast" && event.value == .integer(100) {
                        return event
                    }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(200))
                    _ = try? VividGuest.v4l2ctl(["-d", VividGuest.node, "--set-ctrl", "contrast=100"])
                    try? await Task.sleep(for: .seconds(10))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            let event = try #require(received, "no contrast event within 5 s")
            #expect(event.changes.contains(.value))
            #expect(event.range == ControlRange(minimum: 0, maximum: 255, step: 1))
            print(
                String(
                    format: "contrast event after %.0f ms: %@", Date().timeIntervalSince(started) * 1000,
                    event.description)
            )
            #expect(recorder.state.withLock { $0.frames } > 0)
        } catch {
            await session.stop()
            throw error
        }
        await session.stop()
    }
}
