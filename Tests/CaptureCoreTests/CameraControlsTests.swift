import Foundation
import CaptureCore
import CaptureFileCameras
import CaptureTestSupport
import Testing

/// The controls facade on recorded real-webcam dumps (held in memory; writes update the values).
@Suite("Camera controls on recorded devices")
struct CameraControlsTests {
    /// The controls of a recorded device made from `Fixtures/devices/controls/<file>`.
    static func controls(_ file: String) throws -> CameraControls {
        let list = try RecordedDevice.loadControls(path: Fixtures.url("devices/controls/" + file).path)
        let recorded = RecordedDevice(name: file, controls: list)
        return try CameraProvider.recordedDevices([recorded]).controls(for: recorded.device)
    }

    @Test(
        "manual exposure switches the automatic mode off first",
        arguments: ["uvc-logitech-current.txt", "uvc-current-list-ctrls.txt"])
    func manualExposure(file: String) async throws {
        let controls = try Self.controls(file)
        #expect(try controls.exposureMode() == .aperturePriority)
        #expect(try controls.description(of: V4L2ControlID.exposureAbsolute).flags.contains(.inactive))
        let events = try controls.events()
        try controls.set(.exposureTime, to: 100)
        #expect(try controls.exposureMode() == .manual)
        #expect(try controls.value(of: .exposureTime) == 100)
        #expect(try !controls.description(of: V4L2ControlID.exposureAbsolute).flags.contains(.inactive))
        // The mode changed before the value: the events say so, in order.
        var seen: [String] = []
        for await event in events {
            seen.append("\(event.key):\(event.changes.rawValue)")
            if seen.count == 3 { break }
        }
        #expect(seen == ["auto_exposure:1", "exposure_time_absolute:2", "exposure_time_absolute:1"])
    }

    @Test("exposure time as a duration: whole 100 µs units, anything else refused as off the step")
    func exposureDuration() throws {
        let controls = try Self.controls("uvc-logitech-with-ids.txt")
        try controls.setExposureDuration(.milliseconds(10))
        #expect(try controls.value(of: .exposureTime) == 100)
        #expect(try controls.exposureDuration() == .milliseconds(10))
        #expect(
            throws: ControlError.offStep(
                control: "exposure_absolute", value: 2, range: ControlRange(minimum: 3, maximum: 2047, step: 1),
                nearest: 3)
        ) {
            try controls.setExposureDuration(.microseconds(150))
        }
    }

    @Test("focus and white balance: a manual value turns the automatic mode off")
    func focusAndWhiteBalance() throws {
        let controls = try Self.controls("uvc-logitech-with-ids.txt")
        #expect(try controls.isAutoFocusEnabled())
        try controls.set(.focus, to: 125)
        #expect(try !controls.isAutoFocusEnabled())
        #expect(try controls.value(of: .focus) == 125)
        #expect(try controls.isAutoWhiteBalanceEnabled())
        try controls.set(.whiteBalanceTemperature, to: 5000)
        #expect(try !controls.isAutoWhiteBalanceEnabled())
        #expect(try controls.value(of: .whiteBalanceTemperature) == 5000)
        try controls.setAutoFocus(true)
        #expect(try controls.description(of: V4L2ControlID.focusAbsolute).flags.contains(.inactive))
    }

    @Test(
        "power-line frequency is set by name", arguments: ["uvc-logitech-with-ids.txt", "uvc-lifecam-without-ids.txt"])
    func powerLine(file: String) throws {
        let controls = try Self.controls(file)
        #expect(try controls.powerLineFrequency() == .hz60)
        try controls.setPowerLineFrequency(.hz50)
        #expect(try controls.powerLineFrequency() == .hz50)
        #expect(try controls.value("power_line_frequency") == .menu(1))
        // These webcams list no "auto" (index 3): refused with the range, nothing written.
        #expect(
            throws: ControlError.outOfRange(
                control: "power_line_frequency", value: 3, range: ControlRange(minimum: 0, maximum: 2, step: 0),
                nearest: 2)
        ) {
            try controls.setPowerLineFrequency(.auto)
        }
        #expect(try controls.powerLineFrequency() == .hz50)
        // By the menu item's name, where the dump lists the items (the Lifecam dump, from `--all`, does not).
        if file.contains("logitech") {
            try controls.set(parsing: [("power_line_frequency", "60 hz")])
            #expect(try controls.powerLineFrequency() == .hz60)
        }
    }

    @Test("out-of-range and off-step values are refused with the range and the nearest valid value")
    func outOfRange() throws {
        let controls = try Self.controls("uvc-logitech-with-ids.txt")
        let range = ControlRange(minimum: 0, maximum: 255, step: 1)
        #expect(throws: ControlError.outOfRange(control: "brightness", value: 300, range: range, nearest: 255)) {
            try controls.set(.brightness, to: 300)
        }
        #expect(throws: ControlError.outOfRange(control: "brightness", value: -1, range: range, nearest: 0)) {
            try controls.set("brightness", to: .integer(-1))
        }
        #expect(try controls.value(of: .brightness) == 140)
        let pan = ControlRange(minimum: -36000, maximum: 36000, step: 3600)
        #expect(throws: ControlError.offStep(control: "pan_absolute", value: 2000, range: pan, nearest: 3600)) {
            try controls.set(.pan, to: 2000)
        }
        try controls.set(.pan, to: -7200)
        #expect(try controls.value(of: .pan) == -7200)
        // One refused value in a set of several: nothing is written.
        #expect(throws: ControlError.self) {
            try controls.set([("contrast", .integer(10)), ("zoom_absolute", .integer(99))])
        }
        #expect(try controls.value(of: .contrast) == 128)
        try controls.set([("contrast", .integer(10)), ("zoom_absolute", .integer(200))])
        #expect(try controls.values(["contrast", "zoom_absolute"]).map(\.value) == [.integer(10), .integer(200)])
        // An out-of-range manual value leaves the automatic mode alone.
        #expect(throws: ControlError.self) { try controls.set(.focus, to: 1000) }
        #expect(try controls.isAutoFocusEnabled())
    }

    @Test("read-only, write-only, inactive and unknown controls give their errors (vivid)")
    func refusals() throws {
        let controls = try Self.controls("vivid.txt")
        #expect(throws: ControlError.readOnly("read_only_integer_32_bits")) {
            try controls.set("read_only_integer_32_bits", to: .integer(1))
        }
        #expect(throws: ControlError.writeOnly("button")) { try controls.value("button") }
        #expect(throws: ControlError.inactive("gain")) { try controls.set("gain", to: .integer(50)) }
        #expect(throws: ControlError.noSuchControl("shininess")) { try controls.value("shininess") }
        #expect(throws: ControlError.self) { try controls.set("menu", to: .menu(2)) }  // index 2 is not listed
        #expect(throws: ControlError.self) { try controls.set("bitmask", to: .bitmask(0x1)) }
        #expect(throws: ControlError.self) { try controls.set("string", to: .string("toolong")) }
        // The facade turns automatic gain off first, after which gain is writable.
        try controls.set(.gain, to: 50)
        #expect(try controls.value("gain_automatic") == .boolean(false))
        #expect(try controls.value(of: .gain) == 50)
        try controls.set("button", to: .integer(0))
        try controls.set(parsing: [("integer_64_bits", "-5"), ("string", "abcd"), ("bitmask", "0x10")])
        #expect(
            try controls.values(["integer_64_bits", "string", "bitmask"]).map(\.value) == [
                .integer64(-5), .string("abcd"), .bitmask(0x10),
            ])
    }

    @Test("a profile restores the writable controls and says what it skipped")
    func profiles() throws {
        let controls = try Self.controls("uvc-logitech-with-ids.txt")
        try controls.set(.focus, to: 100)
        try controls.set(.brightness, to: 90)
        let profile = try controls.saveProfile()
        #expect(profile.controls.contains { $0.key == "focus_absolute" && $0.value == .integer(100) })
        let json = try JSONEncoder().encode(profile)
        let decoded = try JSONDecoder().decode(ControlProfile.self, from: json)
        #expect(decoded == profile)

        // A fresh device (as after a replug: defaults back) gets the values again; focus_absolute only once
        // autofocus is off, which the profile also carries.
        let fresh = try Self.controls("uvc-logitech-with-ids.txt")
        let report = try fresh.apply(decoded)
        // Automatic white balance stayed on, so its manual temperature cannot apply: skipped, and said why.
        #expect(report.skipped.map(\.key) == ["white_balance_temperature"])
        #expect(report.skipped.first?.reason.contains("inactive") == true)
        #expect(try fresh.value(of: .focus) == 100)
        #expect(try fresh.value(of: .brightness) == 90)
        #expect(try !fresh.isAutoFocusEnabled())

        // Another camera: what it lacks or cannot take is skipped, with the reason.
        let other = try Self.controls("uvc-lifecam-without-ids.txt")
        let partial = try other.apply(decoded)
        let skipped = Dictionary(uniqueKeysWithValues: partial.skipped.map { ($0.key, $0.reason) })
        #expect(skipped["focus_absolute"]?.contains("no control") == true)
        #expect(skipped["brightness"] == nil)
        #expect(skipped["gain"]?.contains("no control") == true)
        #expect(partial.applied.contains("brightness"))
        #expect(skipped["pan_absolute"] == nil)
    }

    @Test("a recorded device without a controls dump, and the synthetic camera, say they have none")
    func noControls() throws {
        let device = SyntheticCamera.device()
        #expect(throws: ControlError.self) { try CameraProvider.synthetic(position: .front).controls(for: device) }
        let recorded = try Fixtures.device("uvc-c920.txt")
        #expect(throws: ControlError.self) { try CameraProvider.recorded([recorded]).controls(for: recorded) }
    }

    @Test("the capturer gives the controls of its provider's devices, shared: a write through one is seen by another")
    func throughCapturer() throws {
        let list = try RecordedDevice.loadControls(path: Fixtures.url("devices/controls/uvc-logitech-current.txt").path)
        let webcam = try RecordedDevice.load(path: Fixtures.url("devices/uvc-c920.txt").path).addingControls(list)
        let capturer = CameraVideoCapturer(provider: .recordedDevices([webcam]))
        let first = try capturer.controls(for: webcam.device)
        let second = try capturer.controls(for: webcam.device)
        try first.setPowerLineFrequency(.hz50)
        #expect(try second.powerLineFrequency() == .hz50)
        #expect(try second.listing().render().contains("value=1 (50 Hz)\n"))
        #expect(!webcam.device.formats.isEmpty)
    }

    @Test("values parse from text as v4l2-ctl reads them, plus menu names")
    func parsing() throws {
        let list = try V4L2ControlList.parse(Fixtures.text("devices/controls/vivid.txt"))
        let menu = try #require(list.control("menu")).description
        #expect(try menu.value(parsing: "menu item 3") == .menu(3))
        #expect(try menu.value(parsing: "4") == .menu(4))
        #expect(throws: ControlError.self) { try menu.value(parsing: "Menu Item 9") }
        let boolean = try #require(list.control("boolean")).description
        #expect(try boolean.value(parsing: "true") == .boolean(true))
        #expect(throws: ControlError.self) { try boolean.value(parsing: "maybe") }
        let int = try #require(list.control("brightness")).description
        #expect(try int.value(parsing: "0x20") == .integer(32))
        #expect(throws: ControlError.self) { try int.value(parsing: "bright") }
    }

    @Test("the nearest valid value rounds to the step and clamps to the range")
    func nearest() {
        let range = ControlRange(minimum: 0, maximum: 250, step: 5)
        #expect(range.nearestValid(12) == 10)
        #expect(range.nearestValid(13) == 15)
        #expect(range.nearestValid(251) == 250)
        #expect(range.nearestValid(-3) == 0)
        #expect(ControlRange(minimum: 0, maximum: 7, step: 5).nearestValid(7) == 5)
    }
}
