import ArgumentParser
import CaptureCore

/// The request options shared by `select`, `capture` and `snapshot`.
struct RequestOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The size wanted.", valueName: "WxH"))
    var target = TargetSize(Dimensions(width: 1280, height: 720))

    @Option(help: "The highest frame rate wanted.")
    var fpsLimit: Double = 30

    @Option(help: ArgumentHelp("Pixel formats in order of preference, to break ties.", valueName: "FOURCC,..."))
    var prefer = PixelFormatList(PixelFormat.defaultPreference)

    func validate() throws {
        guard fpsLimit.isFinite, fpsLimit > 0 else { throw ValidationError("--fps-limit must be a positive number") }
    }

    var request: FormatRequest {
        FormatRequest(target: target.dimensions, fpsLimit: fpsLimit, preference: prefer.formats)
    }

    /// What the capturer's rules pick on `resolved`.
    func select(on resolved: ResolvedDevice) throws -> FormatSelection {
        guard
            let selection = CaptureRules.selectFormat(
                from: resolved.device.formats, for: request, canConvert: resolved.canConvert)
        else {
            throw CaptureError(
                .noUsableFormat, "offers no format the capturer can convert", device: resolved.device.id)
        }
        return selection
    }
}

extension CapturerProbe {
    /// `capturer-probe select`: the device, format and frame rate the capturer picks, and why.
    struct Select: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show which device, format and frame rate the capturer picks for a target size, and why.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions
        @OptionGroup var options: RequestOptions

        struct Output: Codable {
            var schemaVersion = jsonSchemaVersion
            var device: DeviceSummary
            var target: Dimensions
            var fpsLimit: Double
            var preference: [String]
            var pixelFormat: String
            var width: Int
            var height: Int
            var fps: Double
            var formatIndex: Int
            var distance: Int
            var candidateCount: Int
            var decidingRule: String
            var explanation: [String]
        }

        mutating func run() async throws {
            let resolved = try source.resolve()
            let selection = try options.select(on: resolved)
            let request = options.request
            if global.json {
                try printJSON(
                    Output(
                        device: DeviceSummary(resolved.device), target: request.target, fpsLimit: request.fpsLimit,
                        preference: request.preference.map(\.fourCC), pixelFormat: selection.pixelFormat.fourCC,
                        width: selection.dimensions.width, height: selection.dimensions.height, fps: selection.fps,
                        formatIndex: selection.formatIndex, distance: selection.distance,
                        candidateCount: selection.candidateCount, decidingRule: selection.decidingRule.rawValue,
                        explanation: selection.explanation))
                return
            }
            print(
                """
                device:        \(resolved.device.id) (\(resolved.device.name))
                selected:      \(selection.pixelFormat.fourCC) \(selection.dimensions) at \(Text.fps(selection.fps)) fps
                deciding rule: \(selection.decidingRule.rawValue)
                why:
                """)
            for line in selection.explanation { print("  - \(line)") }
        }
    }
}
