import CaptureConversion
import CaptureCore
import CaptureFileCameras
import CaptureV4L2
import Foundation

/// A device named on the command line and the provider whose backend serves it.
struct ResolvedDevice {
    var device: CaptureDevice
    var provider: CameraProvider
    /// The format list as read from a dump (keeps its `Type:` line); `nil` for other devices.
    var recordedList: V4L2FormatList?

    /// The device's formats as `v4l2-ctl --list-formats-ext` lays them out.
    var formatList: V4L2FormatList { recordedList ?? V4L2FormatList(device) }

    /// Whether the capturer could deliver frames in `pixelFormat` from this device. A recorded device stands for a
    /// real V4L2 camera, so it is judged by what the V4L2 path converts.
    func canConvert(_ pixelFormat: PixelFormat) -> Bool {
        device.kind == .recorded
            ? FrameConverter.canConvert(pixelFormat) : provider.canConvert(pixelFormat, on: device)
    }
}

/// Turns `--device` / `--formats` into a device.
enum DeviceResolver {
    /// The system's provider with the synthetic camera at `position` as the fallback.
    static func systemProvider(position: CameraPosition) -> CameraProvider {
        CameraProvider(backends: [V4L2Backend(), SyntheticBackend(position: position)], syntheticOnlyAsFallback: true)
    }

    /// Resolves `spec` (see `--device`); `nil` is the capturer's default device at `position` (default front).
    static func resolve(_ spec: String?, position: CameraPosition?) throws -> ResolvedDevice {
        guard let spec else {
            let provider = systemProvider(position: position ?? .front)
            guard let device = CameraVideoCapturer(provider: provider).selectDevice(position: position ?? .front) else {
                throw CaptureError(.deviceNotFound, "no camera with a usable format was found")
            }
            return ResolvedDevice(device: device, provider: provider)
        }
        if spec == "synthetic" || spec.hasPrefix("synthetic:") {
            let name = spec.dropFirst("synthetic".count).drop { $0 == ":" }
            guard let parsed = name.isEmpty ? position ?? .front : CameraPosition(rawValue: String(name)) else {
                throw CaptureError(.deviceNotFound, "unknown synthetic camera '\(spec)'", device: spec)
            }
            return ResolvedDevice(
                device: SyntheticCamera.device(position: parsed), provider: .synthetic(position: parsed))
        }
        if spec.hasPrefix("y4m:") { return try y4m(String(spec.dropFirst(4))) }
        if spec.hasPrefix("replay:") {
            // replay:FILE:FORMAT:WxH[@FPS]: a raw-frame file carries no header, so its format and size are spelled out.
            let source = try ReplaySource(parsing: String(spec.dropFirst("replay:".count)))
            // The provider describes the file once (indexing every frame); its one device is that description.
            let provider = try CameraProvider.replay(source, loop: true)
            guard let device = provider.devices().first else {
                throw CaptureError(.deviceNotFound, "the replay file yields no camera", device: spec)
            }
            return ResolvedDevice(device: device, provider: provider)
        }
        if spec.hasPrefix("/") || spec.hasPrefix(".") || FileManager.default.fileExists(atPath: spec) {
            return try path(spec)
        }
        let v4l2 = V4L2Backend()
        if let device = v4l2.devices().first(where: { $0.id == spec || $0.node == spec }) {
            return ResolvedDevice(device: device, provider: CameraProvider(backends: [v4l2]))
        }
        throw CaptureError(.deviceNotFound, "no camera has the id '\(spec)'", device: spec)
    }

    /// A file-system path: a V4L2 node, a Y4M file, or an error saying what it is.
    private static func path(_ path: String) throws -> ResolvedDevice {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES {
                throw CaptureError(.permissionDenied, "cannot access the device", device: path, call: "stat")
            }
            throw CaptureError(.deviceNotFound, "no such device or file", device: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFCHR:
            // The backend refuses character devices that are not video4linux nodes (/dev/null, a tty) before libv4l2
            // sees them: notACaptureDevice.
            let v4l2 = V4L2Backend()
            return ResolvedDevice(
                device: try V4L2Backend.describe(node: path), provider: CameraProvider(backends: [v4l2]))
        case S_IFREG where path.lowercased().hasSuffix(".y4m"):
            if access(path, R_OK) != 0, errno == EACCES {
                throw CaptureError(.permissionDenied, "cannot read the Y4M file", device: path, call: "access")
            }
            return try y4m(path)
        case S_IFREG:
            throw CaptureError(
                .notACaptureDevice,
                "is a regular file, not a capture device (a .y4m file or a v4l2-ctl dump via --formats can be used)",
                device: path)
        case S_IFDIR:
            throw CaptureError(.notACaptureDevice, "is a directory, not a capture device", device: path)
        default:
            throw CaptureError(.notACaptureDevice, "is not a character device", device: path)
        }
    }

    private static func y4m(_ path: String) throws -> ResolvedDevice {
        ResolvedDevice(device: try Y4MCamera.device(path: path), provider: try .y4m([path], loop: true))
    }

    /// A recorded `v4l2-ctl --list-formats-ext` dump; `-` reads standard input.
    static func recorded(_ file: String, position: CameraPosition) throws -> ResolvedDevice {
        let recorded: RecordedDevice
        if file == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            recorded = try RecordedDevice(
                name: "stdin", text: String(decoding: data, as: UTF8.self), position: position, node: "-")
        } else {
            var info = stat()
            if stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                throw CaptureError(.malformedFormatList, "is a directory, not a format list", device: file)
            }
            recorded = try RecordedDevice.load(path: file, position: position)
        }
        return ResolvedDevice(
            device: recorded.device, provider: .recorded([recorded.device]), recordedList: recorded.formatList)
    }
}
