import ArgumentParser
import CaptureCore
import CaptureV4L2

extension CapturerProbe {
    /// `capturer-probe list`: every camera, the default marked.
    struct List: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the cameras (V4L2 capture devices and the built-in synthetic camera); * marks the default.")

        @OptionGroup var global: GlobalOptions

        @Option(help: "The position whose default device to mark (front, back, external).")
        var position: CameraPosition = .front

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var defaultDevice: String?
            var devices: [DeviceSummary]
        }

        mutating func run() async throws {
            let provider = DeviceResolver.systemProvider(position: position)
            let defaultDevice = CameraVideoCapturer(provider: provider).selectDevice(position: position)
            let real = V4L2Backend().devices()
            let devices = real + [SyntheticCamera.device(position: position)]
            if global.json {
                try printJSON(
                    Output(
                        defaultDevice: defaultDevice?.id,
                        devices: devices.map { DeviceSummary($0, isDefault: $0.id == defaultDevice?.id) }))
                return
            }
            var rows = [["", "ID", "NAME", "DRIVER", "BUS", "POSITION", "NODE"]]
            for device in devices {
                rows.append([
                    device.id == defaultDevice?.id ? "*" : "", device.id, device.name, device.driver ?? "-",
                    device.bus ?? "-", device.position.rawValue, device.node ?? "-",
                ])
            }
            print(Text.table(rows))
            if real.isEmpty { print("\nNo V4L2 camera found: the synthetic camera is the default.") }
        }
    }
}
