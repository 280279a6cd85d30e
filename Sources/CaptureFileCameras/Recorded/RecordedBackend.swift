import CaptureCore

/// The backend serving recorded devices: it lists them as recorded and streams synthetic frames (a moving test
/// pattern) in the selected size and rate, like the real camera would in that format.
package struct RecordedBackend: CameraBackend {
    /// The devices, all of kind `CaptureDevice.Kind.recorded`.
    package let recorded: [CaptureDevice]
    /// The in-memory controls of the devices that have a controls dump, by device id. Shared by every
    /// `CameraControls` of this backend, so a write through one is seen (and heard as an event) by the others.
    package let controlChannels: [String: RecordedControlChannel]

    /// Serves `devices`; each is listed with kind `CaptureDevice.Kind.recorded`. `controls` gives, by device
    /// id, the `v4l2-ctl --list-ctrls-menus` listing a device's controls start from.
    package init(_ devices: [CaptureDevice], controls: [String: V4L2ControlList] = [:]) {
        recorded = devices.map { device in
            var device = device
            device.kind = .recorded
            return device
        }
        var channels: [String: RecordedControlChannel] = [:]
        for device in recorded {
            if let list = controls[device.id] {
                channels[device.id] = RecordedControlChannel(deviceName: device.node ?? device.id, list: list)
            }
        }
        controlChannels = channels
    }

    package var kind: CaptureDevice.Kind { .recorded }

    package func devices() -> [CaptureDevice] { recorded }

    /// Frames are synthesised in the output layout, so every listed pixel format can be delivered.
    package func canConvert(_ pixelFormat: PixelFormat) -> Bool { true }

    /// A synthetic session, after checking what a driver would: the device is one of ours, it lists the format,
    /// and the format offers the size.
    package func makeSession(
        _ configuration: CaptureSessionConfiguration, events: CaptureSessionEvents
    ) throws(CaptureError) -> any CaptureSession {
        let id = configuration.device.id
        guard let device = recorded.first(where: { $0.id == id }) else {
            throw CaptureError(.deviceNotFound, "no recorded device has this id", device: id)
        }
        guard device.formats.contains(configuration.format) else {
            throw CaptureError(
                .formatNotSupported, "\(device.name) does not list \(configuration.format)", device: id)
        }
        guard configuration.format.size.contains(configuration.dimensions) else {
            throw CaptureError(
                .formatNotSupported, "\(configuration.format) does not offer \(configuration.dimensions)", device: id)
        }
        return try SyntheticSession(configuration: configuration, events: events)
    }
}

extension CameraProvider {
    /// Recorded devices (for example from ``RecordedDevice/load(path:name:position:)``), listed in order, each
    /// streaming synthetic frames in the format the capturer selects.
    public static func recorded(_ devices: [CaptureDevice]) -> CameraProvider {
        CameraProvider(backends: [RecordedBackend(devices)])
    }

    /// Recorded devices with their controls: a device loaded with a controls dump (see
    /// ``RecordedDevice/addingControls(_:)``) offers them through `controls(for:)`, held in memory.
    public static func recordedDevices(_ devices: [RecordedDevice]) -> CameraProvider {
        var controls: [String: V4L2ControlList] = [:]
        for device in devices { controls[device.device.id] = device.controlList }
        return CameraProvider(backends: [RecordedBackend(devices.map(\.device), controls: controls)])
    }
}

extension RecordedBackend: ControlProvidingBackend {
    /// The device's in-memory controls.
    ///
    /// - Throws: `ControlError.notSupported(_:)` when the device was recorded without a controls dump.
    package func controlChannel(for device: CaptureDevice) throws(ControlError) -> any ControlChannel {
        guard let channel = controlChannels[device.id] else {
            throw ControlError.notSupported("\(device.name) was recorded without a controls dump")
        }
        return channel
    }
}
