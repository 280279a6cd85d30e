public import CaptureCore
internal import CaptureFileCameras
import Foundation

extension Fixtures {
    /// The recorded device of `Fixtures/devices/<file>` (for example `"uvc-c920.txt"`), with id
    /// `recorded:<file>`.
    public static func device(_ file: String, position: CameraPosition = .unspecified) throws -> CaptureDevice {
        try RecordedDevice.load(path: url("devices/" + file).path, position: position).device
    }

    /// The recorded-device dumps under `Fixtures/devices/` (the malformed ones, in `devices/malformed/`, excluded).
    public static func deviceFiles() throws -> [String] { try files(in: "devices") }
}
