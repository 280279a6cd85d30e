import ArgumentParser
import Foundation
import CaptureCore

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object (schemaVersion 1, sorted keys) instead of text.")
    var json = false

    @Flag(name: .shortAndLong, help: "Log debug messages to standard error.")
    var verbose = false
}

/// Which camera to use.
struct DeviceOptions: ParsableArguments {
    @Option(
        name: [.customShort("d"), .long],
        help: ArgumentHelp(
            "A V4L2 node (/dev/video0), an id from 'list', 'synthetic[:front|back|external]', a .y4m file or "
                + "'replay:FILE:FORMAT:WxH[@FPS]' (raw YUYV/UYVY/NV12 frames or concatenated MJPEG).",
            valueName: "device"))
    var device: String?

    @Option(
        name: .customLong("formats"),
        help: ArgumentHelp(
            "A recorded 'v4l2-ctl --list-formats-ext' dump to use as the device ('-' reads standard input).",
            valueName: "file"))
    var formatsFile: String?

    @Option(help: "The camera position to pick when no device is given (front, back, external).")
    var position: CameraPosition?

    func validate() throws {
        if device != nil, formatsFile != nil {
            throw ValidationError("give either --device or --formats, not both")
        }
    }

    /// The device these options name, and a provider that serves it.
    func resolve() throws -> ResolvedDevice {
        if let formatsFile { return try DeviceResolver.recorded(formatsFile, position: position ?? .unspecified) }
        return try DeviceResolver.resolve(device, position: position)
    }
}

/// A size on the command line, `WxH`.
struct TargetSize: ExpressibleByArgument, Sendable {
    var dimensions: Dimensions

    init(_ dimensions: Dimensions) { self.dimensions = dimensions }

    init?(argument: String) {
        guard let dimensions = Dimensions(parsing: argument), dimensions.width <= 16384, dimensions.height <= 16384
        else { return nil }
        self.dimensions = dimensions
    }

    var defaultValueDescription: String { dimensions.description }
}

extension CameraPosition: ExpressibleByArgument {}
extension DeviceOrientation: ExpressibleByArgument {}

/// A comma-separated FourCC list (`NV12,YUYV,MJPG`).
struct PixelFormatList: ExpressibleByArgument, Sendable {
    var formats: [PixelFormat]

    init?(argument: String) {
        var formats: [PixelFormat] = []
        for item in argument.split(separator: ",") {
            guard let format = PixelFormat(fourCC: item.trimmingCharacters(in: .whitespaces)) else { return nil }
            formats.append(format)
        }
        guard !formats.isEmpty else { return nil }
        self.formats = formats
    }

    init(_ formats: [PixelFormat]) { self.formats = formats }

    var defaultValueDescription: String { formats.map(\.fourCC).joined(separator: ",") }
}

/// The commands of this tool: they all carry ``GlobalOptions``.
protocol ProbeCommand: Sendable {
    var global: GlobalOptions { get }
}
