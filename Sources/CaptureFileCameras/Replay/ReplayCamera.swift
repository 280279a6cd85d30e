import CaptureConversion
import CaptureCore
import SystemPackage

/// A file of raw camera frames to replay: its path, the pixel format and size of its frames, and the rate to play
/// them at.
///
/// Raw formats (YUYV, UYVY, NV12, I420…) are tightly packed frames back to back, as `ffmpeg -f rawvideo` writes
/// them; MJPEG (`MJPG` or `JPEG`) is a stream of concatenated JPEG images, as `ffmpeg -f mjpeg` writes it.
public struct ReplaySource: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The camera pixel format of its frames (one `FrameConverter` converts).
    public var pixelFormat: PixelFormat
    /// The size of its frames.
    public var dimensions: Dimensions
    /// The frame rate the camera offers and paces at.
    public var fps: Double

    /// A source description; nothing is checked until ``ReplayCamera/device(_:)``.
    public init(path: String, pixelFormat: PixelFormat, dimensions: Dimensions, fps: Double = 30) {
        self.path = path
        self.pixelFormat = pixelFormat
        self.dimensions = dimensions
        self.fps = fps
    }

    /// Parses the command-line form `FILE:FORMAT:WxH[@FPS]`, for example `clip.yuyv:YUYV:1280x720@30` or
    /// `cam.mjpeg:MJPG:1920x1080`. The format and size are split off the end, so the file name may hold colons.
    /// - Throws: `invalidArgument` naming the part that is wrong.
    public init(parsing text: String) throws(CaptureError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3 else {
            throw CaptureError(.invalidArgument, "a replay device is FILE:FORMAT:WxH[@FPS], not '\(text)'")
        }
        let path = parts.dropLast(2).joined(separator: ":")
        let format = parts[parts.count - 2].uppercased()
        var sizeText = parts[parts.count - 1]
        var fps = 30.0
        if let at = sizeText.firstIndex(of: "@") {
            guard let rate = Double(sizeText[sizeText.index(after: at)...]), rate > 0, rate <= 1000 else {
                throw CaptureError(.invalidArgument, "bad frame rate in '\(sizeText)' (1 to 1000)")
            }
            fps = rate
            sizeText = sizeText[..<at]
        }
        guard !path.isEmpty else { throw CaptureError(.invalidArgument, "the replay device names no file") }
        guard let size = Dimensions(parsing: sizeText), size.width > 0, size.height > 0 else {
            throw CaptureError(.invalidArgument, "bad frame size '\(sizeText)' (WxH)")
        }
        guard let pixelFormat = PixelFormat(fourCC: format), FrameConverter.canConvert(pixelFormat) else {
            throw CaptureError(
                .invalidArgument, "the converter does not take '\(format)' (YUYV, UYVY, NV12, YU12, MJPG…)")
        }
        self.init(path: path, pixelFormat: pixelFormat, dimensions: size, fps: fps)
    }

    /// The command-line form, `FILE:FORMAT:WxH@FPS`.
    public var description: String { "\(path):\(pixelFormat.fourCC):\(dimensions)@\(fps)" }
}

/// A camera that replays a file of raw camera frames through `FrameConverter`, the same conversion V4L2 frames
/// take: webcam-shaped input (MJPEG at 1080p, YUYV at 720p) without a webcam, for tests and benchmarks.
///
/// It plays at the source's rate, or as fast as the consumer takes frames when the capturer is unpaced, and loops at
/// the end of the file (or ends the capture). A frame that fails to convert (a corrupt JPEG) is dropped and counted
/// as `conversionFailed`; the stream goes on.
public enum ReplayCamera {
    /// The device for `source`: one format, the source's pixel format at its size and rate.
    /// - Throws: `deviceNotFound` for a missing file, `ioFailure` for an unreadable one, `malformedFile` when the
    ///   file holds no whole frame, its size is not a whole number of raw frames, or it has no JPEG image.
    public static func device(_ source: ReplaySource) throws(CaptureError) -> CaptureDevice {
        let index = try ReplayIndex(source)
        try index.close()
        let interval = FrameInterval(numerator: 1_000, denominator: UInt32((source.fps * 1_000).rounded()))
        let name = source.path.split(separator: "/").last.map(String.init) ?? source.path
        return CaptureDevice(
            id: "replay:\(source)", name: name, kind: .replay, position: .external, driver: "replay",
            node: source.path,
            pixelFormats: [
                PixelFormatDescription(
                    pixelFormat: source.pixelFormat,
                    description: source.pixelFormat.isJPEG
                        ? "Motion-JPEG (replayed)" : "\(source.pixelFormat.fourCC) (replayed)")
            ],
            formats: [
                CaptureFormat(
                    pixelFormat: source.pixelFormat, size: .discrete(source.dimensions),
                    frameRates: .discrete([interval]))
            ])
    }
}

extension CameraProvider {
    /// A camera replaying `source`, looping at the end of the file (or ending the capture when `loop` is false).
    /// - Throws: what ``ReplayCamera/device(_:)`` throws.
    public static func replay(_ source: ReplaySource, loop: Bool = true) throws(CaptureError) -> CameraProvider {
        CameraProvider(backends: [ReplayBackend(sources: [(try ReplayCamera.device(source), source)], loop: loop)])
    }
}

/// Serves replay files as cameras.
struct ReplayBackend: CameraBackend {
    let sources: [(CaptureDevice, ReplaySource)]
    let loop: Bool

    var kind: CaptureDevice.Kind { .replay }
    func devices() -> [CaptureDevice] { sources.map(\.0) }
    func canConvert(_ pixelFormat: PixelFormat) -> Bool { FrameConverter.canConvert(pixelFormat) }

    func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        guard let source = sources.first(where: { $0.0.id == configuration.device.id })?.1 else {
            throw CaptureError(.deviceNotFound, "no such replay device", device: configuration.device.id)
        }
        guard configuration.dimensions == source.dimensions, configuration.format.pixelFormat == source.pixelFormat
        else {
            throw CaptureError(
                .formatNotSupported, "the file holds \(source.pixelFormat.fourCC) at \(source.dimensions) only",
                device: source.path)
        }
        return ReplaySession(source: source, configuration: configuration, events: events, loop: loop)
    }
}
