internal import CV4L2
import CaptureCore
import Logging

/// Finds V4L2 capture devices and describes them: capabilities, formats, sizes, rates, position and rotation.
struct DeviceScanner: Sendable {
    var driver: any V4L2Driver
    /// Whether the backend can convert a pixel format (a node with none is not listed).
    var canConvert: @Sendable (PixelFormat) -> Bool
    var logger = Logger(label: "swift-camera-capture.v4l2")

    /// Where udev puts stable per-device links.
    static let byIDDirectory = "/dev/v4l/by-id"

    /// The `/dev/video*` nodes, sorted by number.
    func nodes() -> [String] {
        driver.videoNodes().sorted { (Self.number($0), $0) < (Self.number($1), $1) }
    }

    /// Every node that is a streaming video-capture device offering at least one convertible format, in node order.
    func devices() -> [CaptureDevice] {
        let links = byIDLinks()
        var devices: [CaptureDevice] = []
        for node in nodes() {
            let device: CaptureDevice
            do {
                device = try describe(node, links: links)
            } catch {
                // A camera the user may not open is worth saying once per scan; other skipped nodes are routine.
                let level: Logger.Level = error.code == .permissionDenied ? .notice : .debug
                logger.log(level: level, "skipping \(node): \(error)")
                continue
            }
            guard device.formats.contains(where: { canConvert($0.pixelFormat) }) else {
                logger.debug("skipping \(node): no pixel format the capturer can convert")
                continue
            }
            devices.append(disambiguated(device))
        }
        return devices
    }

    /// The full description of one node.
    ///
    /// - Throws: ``CaptureError`` `deviceNotFound`, `permissionDenied`, `notACaptureDevice` (not V4L2, or no
    ///   streaming video capture), or the error of a failed enumeration call.
    func describe(_ node: String) throws(CaptureError) -> CaptureDevice {
        disambiguated(try describe(node, links: byIDLinks()))
    }

    private func describe(_ node: String, links: [String: String]) throws(CaptureError) -> CaptureDevice {
        let handle: V4L2Handle
        do {
            handle = try V4L2Handle.open(node, driver: driver)
        } catch {
            throw CaptureError(error, device: node)
        }
        defer { handle.close() }
        do {
            let capability = try handle.queryCapability()
            guard let type = capability.captureBufferType else {
                throw CaptureError(
                    .notACaptureDevice,
                    "not a video-capture device with streaming I/O (device caps 0x"
                        + String(capability.nodeCapabilities.rawValue, radix: 16) + ")",
                    device: node, call: "VIDIOC_QUERYCAP")
            }
            let pixelFormats = try handle.enumerateFormats(type)
            var formats: [CaptureFormat] = []
            for description in pixelFormats { formats += try handle.captureFormats(description.pixelFormat) }
            let orientation = try handle.optionalControlValue(ControlID.cameraOrientation)
            let rotation = try handle.optionalControlValue(ControlID.cameraSensorRotation)
            return CaptureDevice(
                id: links[node] ?? (capability.busInfo.isEmpty ? node : capability.busInfo),
                name: capability.card, kind: .v4l2, position: Self.position(orientation),
                sensorRotation: rotation.flatMap { VideoRotation(degrees: Int($0)) } ?? .degrees0,
                driver: capability.driver, bus: capability.busInfo, node: node,
                isMultiplanar: type == .videoCaptureMultiplanar, pixelFormats: pixelFormats, formats: formats)
        } catch let error as V4L2Error {
            throw error.call == "VIDIOC_QUERYCAP"
                ? CaptureError(
                    .notACaptureDevice, "not a V4L2 device", device: node, call: error.call, errno: error.errno)
                : CaptureError(error, device: node)
        } catch let error as CaptureError {
            throw error
        } catch {
            throw CaptureError(.driverError, "\(error)", device: node)
        }
    }

    /// The camera position a `V4L2_CID_CAMERA_ORIENTATION` value means.
    static func position(_ orientation: Int32?) -> CameraPosition {
        switch orientation.map(UInt32.init(bitPattern:)) {
        case UInt32(V4L2_CAMERA_ORIENTATION_FRONT): .front
        case UInt32(V4L2_CAMERA_ORIENTATION_BACK): .back
        case UInt32(V4L2_CAMERA_ORIENTATION_EXTERNAL): .external
        default: .unspecified
        }
    }

    /// Makes ids unique when several capture nodes share a bus and have no by-id link: the lowest-numbered
    /// streaming-capture node on the bus keeps the bus as its id, the others get `#<node name>` appended. Decided
    /// from `VIDIOC_QUERYCAP` alone, so a node's id does not depend on which formats are convertible.
    private func disambiguated(_ device: CaptureDevice) -> CaptureDevice {
        guard let bus = device.bus, device.id == bus, let node = device.node else { return device }
        let first = nodes().first { other in
            guard let handle = try? V4L2Handle.open(other, driver: driver) else { return false }
            defer { handle.close() }
            guard let capability = try? handle.queryCapability() else { return false }
            return capability.busInfo == bus && capability.captureBufferType != nil
        }
        guard let first, first != node else { return device }
        var device = device
        device.id += "#" + (node.split(separator: "/").last.map(String.init) ?? node)
        return device
    }

    /// `/dev/v4l/by-id` links by target node.
    private func byIDLinks() -> [String: String] {
        var links: [String: String] = [:]
        for link in driver.symbolicLinks(in: Self.byIDDirectory).sorted(by: { $0.name < $1.name }) {
            links[link.target] = links[link.target] ?? link.name
        }
        return links
    }

    /// The trailing number of a node path (`/dev/video12` → 12).
    static func number(_ node: String) -> Int {
        Int(String(node.reversed().prefix { $0.isNumber }.reversed())) ?? Int.max
    }
}
