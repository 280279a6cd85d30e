internal import CV4L2

/// The capability bits of a V4L2 node (`struct v4l2_capability.capabilities` / `device_caps`).
struct DeviceCapabilities: OptionSet, Hashable {
    var rawValue: UInt32

    /// Single-planar video capture. The corresponding V4L2 constant is `V4L2_CAP_VIDEO_CAPTURE`.
    static let videoCapture = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE))
    /// Multi-planar video capture. The corresponding V4L2 constant is `V4L2_CAP_VIDEO_CAPTURE_MPLANE`.
    static let videoCaptureMultiplanar = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE))
    /// Streaming I/O (`VIDIOC_REQBUFS` and friends). The corresponding V4L2 constant is `V4L2_CAP_STREAMING`.
    static let streaming = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_STREAMING))
    /// `device_caps` is filled in. The corresponding V4L2 constant is `V4L2_CAP_DEVICE_CAPS`.
    static let deviceCaps = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_DEVICE_CAPS))
}

/// What `VIDIOC_QUERYCAP` reports.
struct Capability: Hashable {
    /// The driver name, for example `uvcvideo` or `vivid`.
    var driver: String
    /// The card (device) name.
    var card: String
    /// The bus, for example `usb-0000:00:14.0-1` or `platform:vivid-000`.
    var busInfo: String
    /// The kernel version the driver reports.
    var version: UInt32
    /// The capabilities of the whole physical device.
    var capabilities: DeviceCapabilities
    /// The capabilities of this node.
    var deviceCapabilities: DeviceCapabilities

    /// The capabilities of this node: `device_caps` when the driver sets it, else `capabilities`.
    var nodeCapabilities: DeviceCapabilities {
        capabilities.contains(.deviceCaps) ? deviceCapabilities : capabilities
    }

    /// The buffer type this node captures with (single-planar preferred), or `nil` if it is not a streaming
    /// video-capture node.
    var captureBufferType: BufferType? {
        let caps = nodeCapabilities
        guard caps.contains(.streaming) else { return nil }
        if caps.contains(.videoCapture) { return .videoCapture }
        if caps.contains(.videoCaptureMultiplanar) { return .videoCaptureMultiplanar }
        return nil
    }
}

/// The two buffer types a capture node may use.
enum BufferType: Hashable {
    /// The corresponding V4L2 constant is `V4L2_BUF_TYPE_VIDEO_CAPTURE`.
    case videoCapture
    /// The corresponding V4L2 constant is `V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE`.
    case videoCaptureMultiplanar

    var rawValue: UInt32 {
        switch self {
        case .videoCapture: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        case .videoCaptureMultiplanar: V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue
        }
    }
}

extension V4L2Handle {
    /// Wraps `VIDIOC_QUERYCAP`.
    func queryCapability() throws(V4L2Error) -> Capability {
        var cap = v4l2_capability()
        try ioctl("VIDIOC_QUERYCAP", CV4L2_VIDIOC_QUERYCAP, &cap)
        return Capability(
            driver: cString(cap.driver), card: cString(cap.card), busInfo: cString(cap.bus_info),
            version: cap.version, capabilities: DeviceCapabilities(rawValue: cap.capabilities),
            deviceCapabilities: DeviceCapabilities(rawValue: cap.device_caps))
    }
}

/// Decodes a fixed-size, NUL-terminated C `char`/`__u8` array field (imported as a tuple) as UTF-8.
func cString<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { bytes in
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
