/// A value to write to one control.
package struct ControlAssignment: Sendable, Hashable {
    package var control: ControlDescription
    package var value: ControlValue

    package init(_ control: ControlDescription, _ value: ControlValue) {
        self.control = control
        self.value = value
    }
}

/// The control interface of one device, as a backend provides it: V4L2 through its ioctls on a descriptor of its
/// own (so it works whether or not the device is capturing), a recorded device in memory.
package protocol ControlChannel: Sendable {
    /// The node or id, for messages.
    var deviceName: String { get }
    /// Every control and class heading in the driver's order, with menu items; disabled controls included.
    func queryControls() throws(ControlError) -> [ControlDescription]
    /// The current values of `controls`, in order, read together where the driver allows it.
    func read(_ controls: [ControlDescription]) throws(ControlError) -> [ControlValue]
    /// Writes every assignment in one request (atomic where the driver allows it). An error names the control
    /// that failed where the driver says which.
    func write(_ assignments: [ControlAssignment]) throws(ControlError)
    /// Changes to `controls` made by others, until the stream's consumer stops.
    func events(_ controls: [ControlDescription]) throws(ControlError) -> AsyncStream<ControlEvent>
}

/// A backend whose devices have controls.
package protocol ControlProvidingBackend: CameraBackend {
    /// The control interface of `device`.
    func controlChannel(for device: CaptureDevice) throws(ControlError) -> any ControlChannel
}

extension CameraProvider {
    /// The controls of `device`.
    ///
    /// - Throws: ``ControlError/notSupported(_:)`` when the device's backend has no controls (the synthetic camera,
    ///   a Y4M file, a recorded device without a controls dump), ``ControlError/device(_:)`` when it cannot be
    ///   opened.
    public func controls(for device: CaptureDevice) throws(ControlError) -> CameraControls {
        guard let backend = backend(for: device) as? any ControlProvidingBackend else {
            throw ControlError.notSupported("\(device.name) has no controls")
        }
        return CameraControls(channel: try backend.controlChannel(for: device))
    }
}

extension CameraProvider {
    /// Controls over `channel` (for backends that open a node directly).
    package func controls(forChannel channel: any ControlChannel) -> CameraControls {
        CameraControls(channel: channel)
    }
}

extension CameraVideoCapturer {
    /// The controls of `device` through this capturer's provider; usable while capturing (see
    /// ``CameraProvider/controls(for:)``).
    public func controls(for device: CaptureDevice) throws(ControlError) -> CameraControls {
        try provider.controls(for: device)
    }
}
