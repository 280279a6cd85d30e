import CaptureCore

/// A camera in JSON output.
struct DeviceSummary: Codable, Hashable {
    var id: String
    var name: String
    var kind: String
    var driver: String?
    var bus: String?
    var node: String?
    var position: String
    var sensorRotation: Int
    var pixelFormats: [String]
    var isDefault: Bool?

    init(_ device: CaptureDevice, isDefault: Bool? = nil) {
        id = device.id
        name = device.name
        kind = device.kind.rawValue
        driver = device.driver
        bus = device.bus
        node = device.node
        position = device.position.rawValue
        sensorRotation = device.sensorRotation.degrees
        pixelFormats = device.pixelFormats.map(\.pixelFormat.fourCC)
        self.isDefault = isDefault
    }
}
