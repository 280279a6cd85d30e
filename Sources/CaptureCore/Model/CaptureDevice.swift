/// A camera the capturer can open: what it is, where it faces, and every format it offers.
public struct CaptureDevice: Sendable, Hashable, Codable, Identifiable, CustomStringConvertible {
    /// Which backend serves a device.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A V4L2 device node.
        case v4l2
        /// The built-in synthetic camera.
        case synthetic
        /// A recorded device: a `v4l2-ctl --list-formats-ext` dump, streaming synthetic frames.
        case recorded
        /// A Y4M file.
        case y4m
        /// A file of raw camera frames (YUYV, UYVY, NV12, MJPEG…) replayed through the frame converter.
        case replay
    }

    /// A stable identifier: the same camera keeps it across reboots and re-plugging where the backend allows.
    public var id: String
    /// A human-readable name (the V4L2 card name).
    public var name: String
    /// The backend that serves this device.
    public var kind: Kind
    /// Where the camera faces.
    public var position: CameraPosition
    /// The rotation of the sensor relative to the device, added to the orientation-derived rotation.
    public var sensorRotation: VideoRotation
    /// The driver name, for V4L2 devices.
    public var driver: String?
    /// The bus, for V4L2 devices (for example `usb-0000:00:14.0-1`).
    public var bus: String?
    /// The device node or file path, where there is one.
    public var node: String?
    /// Whether the device uses the multi-planar V4L2 API (`V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE`), as many MIPI and ISP
    /// nodes do; `v4l2-ctl` then prints "Video Capture Multiplanar" as the format list's type.
    public var isMultiplanar: Bool
    /// The pixel formats in the device's order, with their descriptions and flags.
    public var pixelFormats: [PixelFormatDescription]
    /// Every (pixel format, size) the device offers, in enumeration order, with its frame rates.
    public var formats: [CaptureFormat]

    /// Creates a device description.
    public init(
        id: String, name: String, kind: Kind, position: CameraPosition = .unspecified,
        sensorRotation: VideoRotation = .degrees0, driver: String? = nil, bus: String? = nil, node: String? = nil,
        isMultiplanar: Bool = false, pixelFormats: [PixelFormatDescription]? = nil, formats: [CaptureFormat]
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.position = position
        self.sensorRotation = sensorRotation
        self.driver = driver
        self.bus = bus
        self.node = node
        self.isMultiplanar = isMultiplanar
        self.formats = formats
        if let pixelFormats {
            self.pixelFormats = pixelFormats
        } else {
            var seen: [PixelFormat] = []
            for format in formats where !seen.contains(format.pixelFormat) { seen.append(format.pixelFormat) }
            self.pixelFormats = seen.map { PixelFormatDescription(pixelFormat: $0, description: $0.fourCC) }
        }
    }

    /// `"name (id)"`.
    public var description: String { "\(name) (\(id))" }
}
