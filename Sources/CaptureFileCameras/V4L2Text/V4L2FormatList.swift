import CaptureCore

/// A device's format list exactly as `v4l2-ctl --list-formats-ext` shows it: the buffer type and, for each pixel
/// format in the driver's order, its description, flags, sizes and frame intervals.
///
/// ``parse(_:)`` reads the text (the current layout and the older `Index/Pixel Format/Name` layout, see
/// <doc:CaptureFileCameras>); ``render()`` writes it back byte for byte as the current `v4l2-ctl` prints it.
/// ``init(_:bufferType:)`` and ``device(id:name:kind:position:node:)`` convert to and from `CaptureDevice`, whose
/// `CaptureDevice.pixelFormats` and `CaptureDevice.formats` hold the same information.
///
/// Repeated sizes and intervals are kept as listed (not deduplicated), so rendering a parsed dump reproduces it.
public struct V4L2FormatList: Sendable, Hashable, Codable {
    /// One pixel format of the list (`VIDIOC_ENUM_FMT` entry) with its sizes (`VIDIOC_ENUM_FRAMESIZES`), each
    /// carrying its intervals (`VIDIOC_ENUM_FRAMEINTERVALS`).
    public struct Entry: Sendable, Hashable, Codable {
        /// The pixel format, the driver's description and flags.
        public var pixelFormat: PixelFormatDescription
        /// The sizes listed for this pixel format, in order, with their frame rates. Every element has
        /// `pixelFormat.pixelFormat` as its pixel format.
        public var formats: [CaptureFormat]

        /// Creates an entry.
        public init(pixelFormat: PixelFormatDescription, formats: [CaptureFormat] = []) {
            self.pixelFormat = pixelFormat
            self.formats = formats
        }
    }

    /// The buffer type `v4l2-ctl` names in its `Type:` line for single-planar capture devices.
    public static let videoCapture = "Video Capture"
    /// The buffer type `v4l2-ctl` names for multi-planar capture devices.
    public static let videoCaptureMultiplanar = "Video Capture Multiplanar"

    /// The buffer type shown in the `Type:` line, for example ``videoCapture``.
    public var bufferType: String
    /// The pixel formats in the driver's order.
    public var entries: [Entry]

    /// Creates a list from its entries.
    public init(bufferType: String = V4L2FormatList.videoCapture, entries: [Entry]) {
        self.bufferType = bufferType
        self.entries = entries
    }

    /// Creates a list from a pixel-format list and a flat format list: each pixel format gets the formats with that
    /// pixel format, in their order. A format whose pixel format is not in `pixelFormats` adds an entry at the end
    /// (described by its FourCC); a pixel format listed twice gets its formats at its first listing.
    public init(
        pixelFormats: [PixelFormatDescription], formats: [CaptureFormat],
        bufferType: String = V4L2FormatList.videoCapture
    ) {
        var entries = pixelFormats.map { Entry(pixelFormat: $0) }
        for format in formats {
            if let index = entries.firstIndex(where: { $0.pixelFormat.pixelFormat == format.pixelFormat }) {
                entries[index].formats.append(format)
            } else {
                let description = PixelFormatDescription(
                    pixelFormat: format.pixelFormat, description: format.pixelFormat.fourCC)
                entries.append(Entry(pixelFormat: description, formats: [format]))
            }
        }
        self.init(bufferType: bufferType, entries: entries)
    }

    /// The format list of `device`; its type is ``videoCaptureMultiplanar`` for a multi-planar device, else
    /// ``videoCapture``, unless `bufferType` says otherwise.
    public init(_ device: CaptureDevice, bufferType: String? = nil) {
        self.init(
            pixelFormats: device.pixelFormats, formats: device.formats,
            bufferType: bufferType ?? (device.isMultiplanar ? Self.videoCaptureMultiplanar : Self.videoCapture))
    }

    /// The pixel formats in the driver's order.
    public var pixelFormats: [PixelFormatDescription] { entries.map(\.pixelFormat) }

    /// Every (pixel format, size) in enumeration order.
    public var formats: [CaptureFormat] { entries.flatMap(\.formats) }

    /// A device description carrying this list.
    public func device(
        id: String, name: String, kind: CaptureDevice.Kind = .recorded, position: CameraPosition = .unspecified,
        node: String? = nil
    ) -> CaptureDevice {
        CaptureDevice(
            id: id, name: name, kind: kind, position: position, node: node,
            isMultiplanar: bufferType == Self.videoCaptureMultiplanar, pixelFormats: pixelFormats, formats: formats)
    }
}
