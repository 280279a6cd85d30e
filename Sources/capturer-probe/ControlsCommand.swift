import ArgumentParser
import CaptureCore
import CaptureFileCameras
import CaptureV4L2
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CapturerProbe {
    /// `capturer-probe controls`: a device's controls as `v4l2-ctl --list-ctrls-menus` prints them; get, set,
    /// save, load and watch them.
    struct Controls: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, get, set, save, load and watch a device's controls ('v4l2-ctl -L' layout).",
            discussion: """
                Without an action, prints the controls byte-identical to 'v4l2-ctl -d DEV --list-ctrls-menus'. \
                Actions run in this order: --load, --set, --get, --save, then --watch. Names are v4l2-ctl's \
                (brightness, exposure_time_absolute) or ids (0x00980900); menu values may be given by item name. \
                Values outside a control's range or off its step are refused (exit 16) with the valid range and \
                the nearest valid value; nothing is written then. --controls FILE uses a recorded \
                'v4l2-ctl --list-ctrls-menus' dump as the device (writes change it in memory only).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(
            name: [.customShort("d"), .long],
            help: ArgumentHelp("A V4L2 node (/dev/video0) or an id from 'list'.", valueName: "device"))
        var device: String?

        @Option(
            name: .customLong("controls"),
            help: ArgumentHelp(
                "A recorded 'v4l2-ctl --list-ctrls-menus' dump to use as the device ('-' reads standard input).",
                valueName: "file"))
        var controlsFile: String?

        @Option(help: ArgumentHelp("Print these controls' values (name,name,…).", valueName: "names"))
        var get: String?

        @Option(
            help: ArgumentHelp(
                "Set these controls together, in one request (name=value,…).", valueName: "assignments"))
        var set: String?

        @Option(help: ArgumentHelp("Save the writable controls to a JSON profile.", valueName: "file"))
        var save: String?

        @Option(help: ArgumentHelp("Apply a JSON profile, reporting what was skipped.", valueName: "file"))
        var load: String?

        @Flag(help: "Print control changes made by others until interrupted (or --seconds).")
        var watch = false

        @Option(help: ArgumentHelp("With --watch: stop after this many seconds.", valueName: "seconds"))
        var seconds: Double?

        func validate() throws {
            if device != nil, controlsFile != nil {
                throw ValidationError("give either --device or --controls, not both")
            }
            if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
            if seconds != nil, !watch { throw ValidationError("--seconds goes with --watch") }
        }

        mutating func run() async throws {
            let controls = try openControls()
            var document = ControlsDocument(device: controls.deviceName)
            let listOnly = get == nil && set == nil && save == nil && load == nil && !watch
            do {
                if let load {
                    let report = try controls.apply(try ProfileFile.read(load))
                    document.loaded = report
                    if !global.json {
                        print("applied: " + (report.applied.isEmpty ? "none" : report.applied.joined(separator: ", ")))
                        for skipped in report.skipped { print("skipped: \(skipped.key): \(skipped.reason)") }
                    }
                }
                if let set {
                    let assignments = try Self.assignments(set)
                    try controls.set(parsing: assignments)
                    document.set = assignments.map(\.key)
                }
                if let get {
                    let keys = get.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                    let values = try controls.values(keys)
                    document.values = values.map { ControlJSON($0.control, value: $0.value) }
                    if !global.json { print(Self.getText(values), terminator: "") }
                }
                if let save {
                    let profile = try controls.saveProfile()
                    try ProfileFile.write(profile, to: save)
                    document.saved = profile.controls.count
                    if !global.json { print("saved \(profile.controls.count) controls to \(save)") }
                }
                if listOnly {
                    let listing = try controls.listing()
                    if global.json {
                        document.controls = listing.controls.map { ControlJSON($0.description, value: $0.value) }
                    } else {
                        print(listing.render(), terminator: "")
                    }
                }
                if global.json && !(watch && listOnly) { try printJSON(document) }
                if watch { try await Self.watch(controls, seconds: seconds, json: global.json) }
            } catch let error as ControlError {
                throw ProbeFailure(error)
            }
        }

        /// The controls of `--device` or `--controls`.
        private func openControls() throws -> CameraControls {
            do {
                if let controlsFile {
                    let list: V4L2ControlList
                    if controlsFile == "-" {
                        let data = FileHandle.standardInput.readDataToEndOfFile()
                        list = try V4L2ControlList.parse(String(decoding: data, as: UTF8.self))
                    } else {
                        list = try RecordedDevice.loadControls(path: controlsFile)
                    }
                    let recorded = RecordedDevice(name: "controls", controls: list, node: controlsFile)
                    return try CameraProvider.recordedDevices([recorded]).controls(for: recorded.device)
                }
                guard let device else {
                    throw ProbeFailure(
                        status: .usage, message: "give --device or --controls",
                        hint: "see 'capturer-probe help controls'")
                }
                var info = stat()
                if stat(device, &info) == 0, info.st_mode & S_IFMT == S_IFCHR {
                    return try V4L2Backend.controls(node: device)
                }
                let resolved = try DeviceResolver.resolve(device, position: nil)
                return try resolved.provider.controls(for: resolved.device)
            } catch let error as ControlError {
                throw ProbeFailure(error)
            }
        }

        /// `name=value,name=value` as pairs.
        static func assignments(_ text: String) throws -> [(key: String, text: String)] {
            try text.split(separator: ",").map { item in
                guard let equals = item.firstIndex(of: "=") else {
                    throw ProbeFailure(
                        status: .usage, message: "'\(item)' is not name=value", hint: "for example --set brightness=140"
                    )
                }
                return (
                    String(item[..<equals]).trimmingCharacters(in: .whitespaces),
                    String(item[item.index(after: equals)...])
                )
            }
        }

        /// The values as `v4l2-ctl --get-ctrl` prints them: `name: value` per control. Like `v4l2-ctl`, plain
        /// user-class controls print their bare number (`VIDIOC_G_CTRL`) unless one of the requested controls needs
        /// the extended call (64-bit, payload, update or driver-private), after which values print as in the
        /// listing (menus with their item names).
        static func getText(_ values: [(control: ControlDescription, value: ControlValue)]) -> String {
            let extended = values.contains { control, _ in
                control.type == .integer64 || control.flags.contains(.update) || control.flags.contains(.hasPayload)
                    || control.id & 0xffff >= 0x1000
            }
            var text = ""
            for (control, value) in values {
                let userClass = control.controlClass == 0x0098_0000 || control.controlClass == 0x0800_0000
                let shown =
                    !extended && userClass
                    ? String(value.integerValue.map { Int32(truncatingIfNeeded: $0) } ?? 0)
                    : V4L2ControlList.valueText(V4L2ControlList.Entry(control, value: value))
                text += "\(control.key): \(shown)\n"
            }
            return text
        }

        /// Prints events until SIGINT or `seconds`.
        static func watch(_ controls: CameraControls, seconds: Double?, json: Bool) async throws {
            let events = try controls.events()
            let stop = Task {
                if let seconds {
                    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                } else {
                    await Interrupt.wait()
                }
            }
            let printer = Task {
                for await event in events {
                    if json {
                        try? printJSONLine(EventJSON(event))
                    } else {
                        print(event.description)
                    }
                    fflush(nil)
                }
            }
            await stop.value
            printer.cancel()
        }
    }
}

/// Waits for SIGINT (Ctrl-C) once.
enum Interrupt {
    static func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            signal(SIGINT, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            let resumed = ResumeOnce(continuation)
            source.setEventHandler {
                resumed.resume()
                source.cancel()
            }
            source.resume()
        }
    }

    /// Resumes a continuation at most once.
    private final class ResumeOnce: Sendable {
        private let continuation: Locked<CheckedContinuation<Void, Never>?>
        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = Locked(continuation) }
        func resume() {
            let taken = continuation.withLock { value in
                defer { value = nil }
                return value
            }
            taken?.resume()
        }
    }
}

/// Reads and writes JSON profiles.
enum ProfileFile {
    static func read(_ path: String) throws -> ControlProfile {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CaptureError(.deviceNotFound, "cannot read the profile", device: path)
        }
        do {
            return try JSONDecoder().decode(ControlProfile.self, from: data)
        } catch {
            throw CaptureError(.malformedFile, "not a controls profile: \(error)", device: path)
        }
    }

    static func write(_ profile: ControlProfile, to path: String) throws {
        do {
            try (try jsonData(profile, pretty: true) + Data("\n".utf8)).write(to: URL(fileURLWithPath: path))
        } catch {
            throw ProbeFailure(status: .outputNotWritable, message: "\(path): cannot write the profile", hint: nil)
        }
    }
}

/// The JSON form of `controls`.
struct ControlsDocument: Codable {
    var schemaVersion = jsonSchemaVersion
    var device: String
    var controls: [ControlJSON]?
    var values: [ControlJSON]?
    var set: [String]?
    var saved: Int?
    var loaded: ControlProfileReport?
}

/// One control in JSON.
struct ControlJSON: Codable {
    struct MenuItem: Codable {
        var index: Int64
        var name: String?
        var value: Int64?
    }

    var id: String
    var key: String
    var name: String
    var type: String
    var minimum: Int64
    var maximum: Int64
    var step: UInt64
    var defaultValue: Int64
    var flags: [String]
    var dimensions: [UInt32]?
    var menu: [MenuItem]?
    var value: ControlValue?
    /// The value as `v4l2-ctl` prints it.
    var valueText: String?

    init(_ control: ControlDescription, value: ControlValue?) {
        id = "0x" + String(format: "%08x", control.id)
        key = control.key
        name = control.name
        type = control.type.description
        minimum = control.minimum
        maximum = control.maximum
        step = control.step
        defaultValue = control.defaultValue
        flags = control.flags.names
        dimensions = control.dimensions.isEmpty ? nil : control.dimensions
        menu =
            control.type.isMenu
            ? control.menuItems.map { MenuItem(index: $0.index, name: $0.name, value: $0.value) } : nil
        self.value = value
        valueText = value.map { V4L2ControlList.valueText(V4L2ControlList.Entry(control, value: $0)) }
    }
}

/// One event as a JSON line.
struct EventJSON: Codable {
    var id: String
    var key: String
    var changes: [String]
    var value: ControlValue?
    var flags: [String]

    init(_ event: ControlEvent) {
        id = "0x" + String(format: "%08x", event.id)
        key = event.key
        var changes: [String] = []
        if event.changes.contains(.value) { changes.append("value") }
        if event.changes.contains(.flags) { changes.append("flags") }
        if event.changes.contains(.range) { changes.append("range") }
        if event.changes.contains(.dimensions) { changes.append("dimensions") }
        self.changes = changes
        value = event.value
        flags = event.flags.names
    }
}

extension ProbeFailure {
    /// The failure a control error means, with its exit status.
    init(_ error: ControlError) {
        switch error {
        case .noSuchControl:
            self.init(
                status: .unknownControl, message: error.description,
                hint: "run 'capturer-probe controls --device DEV' to see the controls")
        case .outOfRange, .offStep, .invalidValue:
            self.init(status: .invalidControlValue, message: error.description, hint: nil)
        case .readOnly, .writeOnly, .inactive, .grabbed:
            self.init(status: .controlNotWritable, message: error.description, hint: nil)
        case .device(let capture):
            self.init(
                status: ExitStatus(capture.code), message: capture.description, hint: ExitStatus.hint(for: capture.code)
            )
        case .notSupported, .failed:
            self.init(status: .failure, message: error.description, hint: nil)
        }
    }
}
