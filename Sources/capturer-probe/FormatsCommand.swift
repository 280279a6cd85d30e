import ArgumentParser
import CaptureCore
import CaptureFileCameras

extension CapturerProbe {
    /// `capturer-probe formats`: the device's formats exactly as `v4l2-ctl --list-formats-ext` prints them.
    struct Formats: AsyncParsableCommand, ProbeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a device's formats in the layout of 'v4l2-ctl -d DEV --list-formats-ext'.",
            discussion: """
                For a V4L2 node the text is byte-identical to 'v4l2-ctl -d DEV --list-formats-ext' (native formats; \
                libv4l2's emulated ones are not listed), so the two can be diffed. For the synthetic camera, a Y4M \
                file or a recorded dump (--formats FILE) the same layout is used. --json gives the same data \
                structured.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var source: DeviceOptions

        mutating func run() async throws {
            let resolved = try source.resolve()
            let list = resolved.formatList
            if global.json {
                try printJSON(FormatListDocument(device: resolved.device, list: list))
            } else {
                print(list.render(), terminator: "")
            }
        }
    }
}

/// The JSON form of a format list.
struct FormatListDocument: Codable {
    struct Interval: Codable {
        var numerator: UInt32
        var denominator: UInt32
        var seconds: Double
        var fps: Double

        init(_ interval: FrameInterval) {
            numerator = interval.numerator
            denominator = interval.denominator
            seconds = interval.seconds
            fps = interval.fps
        }
    }

    struct Rates: Codable {
        var type: String
        var intervals: [Interval]?
        var min: Interval?
        var max: Interval?
        var step: Interval?

        init(_ rates: FrameRates) {
            switch rates {
            case .discrete(let list): type = "discrete"; intervals = list.map(Interval.init)
            case .stepwise(let min, let max, let step):
                type = "stepwise"; self.min = Interval(min); self.max = Interval(max); self.step = Interval(step)
            case .continuous(let min, let max): type = "continuous"; self.min = Interval(min); self.max = Interval(max)
            }
        }
    }

    struct Size: Codable {
        var type: String
        var width: Int?
        var height: Int?
        var min: Dimensions?
        var max: Dimensions?
        var step: Dimensions?
        var frameRates: Rates

        init(_ format: CaptureFormat) {
            frameRates = Rates(format.frameRates)
            switch format.size {
            case .discrete(let size): type = "discrete"; width = size.width; height = size.height
            case .stepwise(let min, let max, let step):
                type = "stepwise"; self.min = min; self.max = max; self.step = step
            case .continuous(let min, let max): type = "continuous"; self.min = min; self.max = max
            }
        }
    }

    struct Entry: Codable {
        var index: Int
        var pixelFormat: String
        var description: String
        var flags: [String]
        var sizes: [Size]
    }

    var schemaVersion = jsonSchemaVersion
    var device: DeviceSummary
    var bufferType: String
    var pixelFormats: [Entry]

    init(device: CaptureDevice, list: V4L2FormatList) {
        self.device = DeviceSummary(device)
        bufferType = list.bufferType
        pixelFormats = list.entries.enumerated().map { index, entry in
            Entry(
                index: index, pixelFormat: entry.pixelFormat.pixelFormat.fourCC,
                description: entry.pixelFormat.description, flags: Self.flagNames(entry.pixelFormat.flags),
                sizes: entry.formats.map(Size.init))
        }
    }

    /// The flag names `v4l2-ctl` prints.
    static func flagNames(_ flags: PixelFormatFlags) -> [String] {
        let names: [(PixelFormatFlags, String)] = [
            (.compressed, "compressed"), (.emulated, "emulated"), (.continuousBytestream, "continuous-bytestream"),
            (.dynamicResolution, "dyn-resolution"), (.encoderCapFrameInterval, "enc-cap-frame-interval"),
            (.cscColorspace, "csc-colorspace"), (.cscYCbCr, "csc-ycbcr"), (.cscQuantization, "csc-quantization"),
            (.cscTransferFunction, "csc-xfer-func"), (.metaLineBased, "meta-line-based"),
        ]
        return names.filter { flags.contains($0.0) }.map(\.1)
    }
}
