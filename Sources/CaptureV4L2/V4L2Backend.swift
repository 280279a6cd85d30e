public import CaptureCore
public import Logging

/// Real cameras through V4L2 (via libv4l2): discovery, format enumeration and streaming capture.
///
/// Lists every `/dev/video*` node that is a streaming video-capture node (single- or multi-planar, judged by its
/// `device_caps`) and offers at least one pixel format the capturer can convert, which leaves out UVC metadata
/// nodes and raw ISP nodes. Use it through `CameraProvider.system`, or directly to inspect nodes with
/// ``listNodes()`` and ``describe(node:)``.
public struct V4L2Backend: Sendable {
    let scanner: DeviceScanner
    let conversion: FrameConversion
    let logger: Logger

    /// A backend on the system's devices, converting with libyuv.
    public init(logger: Logger = Logger(label: "swift-camera-capture.v4l2")) {
        self.init(driver: LibV4L2Driver(), conversion: .libyuv, logger: logger)
    }

    /// A backend on `driver` (a fake device in unit tests) converting with `conversion`.
    init(
        driver: any V4L2Driver, conversion: FrameConversion, logger: Logger = Logger(label: "swift-camera-capture.v4l2")
    ) {
        self.scanner = DeviceScanner(driver: driver, canConvert: conversion.canConvert, logger: logger)
        self.conversion = conversion
        self.logger = logger
    }

    /// `CaptureDevice.Kind.v4l2`.
    public var kind: CaptureDevice.Kind { .v4l2 }

    /// The usable capture devices, sorted by node number.
    public func devices() -> [CaptureDevice] {
        scanner.devices()
    }

    /// Whether the backend can deliver frames from a device format in `pixelFormat`.
    public func canConvert(_ pixelFormat: PixelFormat) -> Bool {
        conversion.canConvert(pixelFormat)
    }

    /// Every `/dev/video*` node, sorted by number, whether or not it is a capture device.
    public static func listNodes() -> [String] {
        V4L2Backend().scanner.nodes()
    }

    /// The full description of one node: every pixel format (in driver order, including ones the capturer cannot
    /// convert), every size and every frame interval, as the driver enumerates them.
    ///
    /// - Throws: `CaptureError` with code `deviceNotFound`, `permissionDenied` (with how to fix it),
    ///   `notACaptureDevice`, or the driver error of a failed call.
    public static func describe(node: String) throws(CaptureError) -> CaptureDevice {
        try V4L2Backend().scanner.describe(node)
    }
}

extension V4L2Backend: CameraBackend {
    package func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        guard configuration.device.kind == .v4l2, configuration.device.node != nil else {
            throw CaptureError(
                .invalidArgument, "not a V4L2 device", device: configuration.device.node ?? configuration.device.id)
        }
        return V4L2Session(
            configuration: configuration, events: events, driver: scanner.driver, conversion: conversion,
            logger: logger)
    }

    /// A ``DeviceMonitor`` of `/dev` on this backend's driver; `nil` when inotify cannot be set up.
    package func deviceEvents() -> AsyncStream<DeviceEvent>? {
        do {
            return try DeviceMonitor(scanner: scanner, directory: "/dev", logger: logger).events()
        } catch {
            logger.warning("cannot watch for cameras: \(error)")
            return nil
        }
    }
}
