import CaptureCore
import SystemPackage

/// A camera recorded as the text of `v4l2-ctl --list-formats-ext`: it lists exactly the formats of the real device
/// and streams synthetic frames in the selected size and rate (see `CameraProvider.recorded(_:)`).
///
/// ```swift
/// let webcam = try RecordedDevice.load(path: "Fixtures/devices/uvc-c920.txt")
/// let capturer = CameraVideoCapturer(provider: .recorded([webcam.device]))
/// ```
public struct RecordedDevice: Sendable, Hashable {
    /// The largest dump ``load(path:name:position:)`` reads (vivid's 83-format list is about 150 kB).
    public static let maximumFileSize = 16 << 20

    /// The parsed format list.
    public let formatList: V4L2FormatList
    /// The device description: kind `CaptureDevice.Kind.recorded`, id `recorded:<name>`, the list's pixel formats
    /// and formats.
    public let device: CaptureDevice
    /// The device's controls as a `v4l2-ctl --list-ctrls-menus` dump shows them, if one was added.
    public private(set) var controlList: V4L2ControlList?

    /// A recorded device from the text of a dump. Its id is `recorded:<name>`.
    ///
    /// - Throws: `CaptureError.Code.malformedFormatList` naming the offending line.
    public init(
        name: String, text: String, position: CameraPosition = .unspecified, node: String? = nil
    ) throws(CaptureError) {
        let list: V4L2FormatList
        do {
            list = try V4L2FormatList.parse(text)
        } catch {
            var located = error
            located.device = node ?? "recorded:\(name)"
            throw located
        }
        self.formatList = list
        var device = list.device(id: "recorded:\(name)", name: name, kind: .recorded, position: position, node: node)
        device.driver = "recorded"
        self.device = device
    }

    /// Reads a dump from a file. The id is `recorded:<file name>`, the name defaults to the file name without its
    /// extension, and the node is `path`.
    ///
    /// - Throws: `CaptureError.Code.deviceNotFound` when the file does not exist, `CaptureError.Code.ioFailure`
    ///   when it cannot be read, `CaptureError.Code.malformedFormatList` when it is not a format list.
    public static func load(
        path: String, name: String? = nil, position: CameraPosition = .unspecified
    ) throws(CaptureError) -> RecordedDevice {
        let fileName = FilePath(path).lastComponent?.string ?? path
        let text = try readText(path)
        var recorded = try RecordedDevice(name: fileName, text: text, position: position, node: path)
        if let name = name ?? FilePath(path).stem {
            var device = recorded.device
            device.name = name
            recorded = RecordedDevice(formatList: recorded.formatList, device: device)
        }
        return recorded
    }

    private init(formatList: V4L2FormatList, device: CaptureDevice) {
        self.formatList = formatList
        self.device = device
    }

    /// A recorded device with no formats, only controls: for inspecting and testing controls of a camera whose
    /// format list was not recorded. Its id is `recorded:<name>`.
    public init(name: String, controls: V4L2ControlList, node: String? = nil) {
        var device = CaptureDevice(id: "recorded:\(name)", name: name, kind: .recorded, node: node, formats: [])
        device.driver = "recorded"
        self.formatList = V4L2FormatList(entries: [])
        self.device = device
        self.controlList = controls
    }

    /// This device with `controls` (for example from ``loadControls(path:)``) as its controls.
    public func addingControls(_ controls: V4L2ControlList) -> RecordedDevice {
        var copy = self
        copy.controlList = controls
        return copy
    }

    /// Reads and parses a `v4l2-ctl --list-ctrls-menus` dump.
    ///
    /// - Throws: `CaptureError.Code.deviceNotFound` when the file does not exist, `CaptureError.Code.ioFailure`
    ///   when it cannot be read, `CaptureError.Code.malformedControlList` when it is not a control listing.
    public static func loadControls(path: String) throws(CaptureError) -> V4L2ControlList {
        do {
            return try V4L2ControlList.parse(
                try readText(path, what: "the control listing", malformed: .malformedControlList))
        } catch {
            var located = error
            located.device = located.device ?? path
            throw located
        }
    }

    /// The file's bytes as UTF-8 text.
    private static func readText(
        _ path: String, what: String = "the format list", malformed: CaptureError.Code = .malformedFormatList
    ) throws(CaptureError) -> String {
        let fd = try FileDescriptor.openForReading(path, what: what)
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try fd.read(into: $0) }
            } catch {
                throw CaptureError(
                    .ioFailure, "cannot read \(what)", device: path, call: "read", errno: error as? Errno)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maximumFileSize else {
                throw CaptureError(
                    malformed, "the file is larger than \(maximumFileSize) bytes", device: path)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CaptureError(malformed, "the file is not UTF-8 text", device: path)
        }
        return text
    }
}
