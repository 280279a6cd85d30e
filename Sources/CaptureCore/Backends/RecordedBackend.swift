/// The backend serving recorded devices: it lists them as recorded and streams synthetic frames (a moving test
/// pattern) in the selected size and rate, like the real camera would in that format.
package struct RecordedBackend: CameraBackend {
    /// The devices, all of kind ``CaptureDevice/Kind/recorded``.
    package let recorded: [CaptureDevice]

    /// Serves `devices`; each is listed with kind ``CaptureDevice/Kind/recorded``.
    package init(_ devices: [CaptureDevice]) {
        recorded = devices.map { device in
            var device = device
            device.kind = .recorded
            return device
        }
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
}
