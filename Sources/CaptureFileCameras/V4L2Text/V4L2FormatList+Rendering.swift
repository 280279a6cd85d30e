import CaptureCore

extension V4L2FormatList {
    /// The list as the current `v4l2-ctl --list-formats-ext` prints it, byte for byte.
    ///
    /// The layout follows `print_video_formats_ext`, `print_frmsize` and `print_frmival` in v4l-utils:
    /// `ioctl: VIDIOC_ENUM_FMT`, `\tType: <type>` and an empty line; per pixel format
    /// `\t[<index>]: '<fourcc>' (<description>[, <flags>])`; per size `\t\tSize: Discrete WxH`,
    /// `Stepwise WxH - WxH with step W/H` or `Continuous WxH - WxH`; and, under discrete sizes only,
    /// `\t\t\tInterval: Discrete 0.033s (30.000 fps)`, `Continuous <min>s - <max>s (<low>-<high> fps)` or
    /// `Stepwise <min>s - <max>s with step <step>s (<low>-<high> fps)`, every figure `%.3f`.
    /// A format with no sizes prints its header line only; rates of a stepwise or continuous size are not printed.
    public func render() -> String {
        var text = "ioctl: VIDIOC_ENUM_FMT\n\tType: \(bufferType)\n\n"
        for (index, entry) in entries.enumerated() {
            let description = entry.pixelFormat
            text += "\t[\(index)]: '\(description.pixelFormat.fourCC)' (\(description.description)"
            if !description.flags.isEmpty {
                text += ", " + Self.flagText(description.flags, pixelFormat: description.pixelFormat)
            }
            text += ")\n"
            for format in entry.formats {
                text += "\t\tSize: " + Self.sizeText(format.size) + "\n"
                guard case .discrete = format.size else { continue }
                for line in Self.intervalTexts(format.frameRates) {
                    text += "\t\t\tInterval: " + line + "\n"
                }
            }
        }
        return text
    }

    /// `Discrete 640x480`, `Stepwise 16x16 - 1920x1080 with step 2/2`, `Continuous 16x16 - 1920x1080`.
    static func sizeText(_ size: FrameSize) -> String {
        switch size {
        case .discrete(let size):
            "Discrete \(size)"
        case .stepwise(let min, let max, let step):
            "Stepwise \(min) - \(max) with step \(step.width)/\(step.height)"
        case .continuous(let min, let max):
            "Continuous \(min) - \(max)"
        }
    }

    /// The text after `Interval: ` for each interval line of `rates`.
    static func intervalTexts(_ rates: FrameRates) -> [String] {
        switch rates {
        case .discrete(let intervals):
            return intervals.map { "Discrete \(secondsText($0))s (\(fpsText($0)) fps)" }
        case .continuous(let min, let max):
            return [
                "Continuous \(secondsText(min))s - \(secondsText(max))s (\(fpsText(max))-\(fpsText(min)) fps)"
            ]
        case .stepwise(let min, let max, let step):
            return [
                "Stepwise \(secondsText(min))s - \(secondsText(max))s with step \(secondsText(step))s"
                    + " (\(fpsText(max))-\(fpsText(min)) fps)"
            ]
        }
    }
}
