import ArgumentParser
import CaptureCore

extension CapturerProbe {
    /// `capturer-probe snapshot`: one frame to a PNG, PPM or Y4M file.
    struct Snapshot: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Capture one frame and write it as PNG, PPM (P6 RGB, BT.601 limited range) or Y4M (C420jpeg).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var request: RequestOptions

        @Option(name: [.short, .long], help: ArgumentHelp("The image file: .png, .ppm or .y4m.", valueName: "file"))
        var output: String

        @Option(help: "Frames to skip before the one kept (cameras adjusting exposure).")
        var skip = 0

        func validate() throws {
            guard ImageFileFormat(path: output) != nil else {
                throw ValidationError("--output must end in .png, .ppm or .y4m, not '\(output)'")
            }
            guard skip >= 0 else { throw ValidationError("--skip must not be negative") }
        }

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var device: DeviceSummary
            var pixelFormat: String
            var width: Int
            var height: Int
            var rotation: Int
            var fileFormat: String
            var output: String
            var bytes: Int
        }

        mutating func run() async throws {
            let resolved = try source.resolve()
            guard let format = ImageFileFormat(path: output) else { return }
            try OutputFile.checkWritable(output)
            let run = try await CaptureRun.start(on: resolved, request: request, output: .i420, stream: true)
            var kept: (image: I420Picture, rotation: Int)?
            var seen = 0
            if let frames = run.frames {
                for await frame in frames {
                    seen += 1
                    if seen > skip {
                        kept = (I420Picture(copying: frame.buffer), frame.rotation.degrees)
                        break
                    }
                }
            }
            try await run.stop()
            guard let kept else {
                throw CaptureError(
                    .streamStalled, "the capture ended before a frame arrived", device: resolved.device.id)
            }
            let bytes = try format.encode(kept.image, fps: run.configuration.granted.fps)
            try OutputFile.write(bytes, to: output)
            let granted = run.configuration.granted
            let result = Output(
                device: DeviceSummary(resolved.device), pixelFormat: granted.pixelFormat.fourCC,
                width: kept.image.width, height: kept.image.height, rotation: kept.rotation,
                fileFormat: format.rawValue, output: output, bytes: bytes.count)
            if global.json {
                try printJSON(result)
            } else {
                print(
                    """
                    device:  \(result.device.id) (\(result.device.name))
                    frame:   \(result.width)x\(result.height) from \(result.pixelFormat), rotation \(result.rotation)°
                    wrote:   \(output) (\(format.rawValue.uppercased()), \(bytes.count) bytes)
                    """)
            }
        }
    }
}
