import CaptureCore
import Foundation

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

/// Text helpers.
enum Text {
    /// Rows padded into columns separated by two spaces (the last column unpadded).
    static func table(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `30`, `12.5`, `29.97`.
    static func fps(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 1000).rounded() / 1000)
    }
}
