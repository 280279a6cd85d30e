import CaptureConversion
import CaptureCore

/// Converts the frames of a file (concatenated raw frames, or concatenated JPEGs for MJPG) with ``FrameConverter``;
/// reports the best run's time per frame.
struct ConversionBench {
    let options: BenchOptions

    init(_ options: BenchOptions) { self.options = options }

    func run() throws {
        let size = try options.dimensions()
        let output = try options.layout("output")
        let runs = try options.int("runs", default: 3)
        let formatName = try options.string("format")
        guard let pixelFormat = PixelFormat(fourCC: formatName) else {
            throw CaptureError(.invalidArgument, "bad --format \(formatName)")
        }
        guard FrameConverter.canConvert(pixelFormat) else {
            print("convert format=\(formatName) skipped=FrameConverter-in-this-build-cannot-convert-it")
            return
        }
        let data = try readFile(try options.string("input"))
        let ranges: [Range<Int>]
        if let frameBytes = FrameConverter.minimumFrameBytes(
            pixelFormat: pixelFormat, width: size.width, height: size.height, bytesPerLine: 0)
        {
            ranges = (0..<(data.count / frameBytes)).map { $0 * frameBytes..<($0 + 1) * frameBytes }
        } else {
            ranges = Self.jpegRanges(data)
        }
        let count = min(try options.int("frames", default: 150), ranges.count)
        guard count > 0 else { throw CaptureError(.invalidArgument, "no \(formatName) frame in the input") }

        let destination = VideoFrameBuffer(format: output, width: size.width, height: size.height)
        // One decoder for every frame, as a capture stream keeps one.
        let jpegDecoder = JPEGDecoder()
        var best = Double.infinity
        for _ in 0..<runs {
            let start = MonotonicClock.nowNs()
            try data.withUnsafeBytes { raw in
                for range in ranges.prefix(count) {
                    try FrameConverter.convert(
                        UnsafeRawBufferPointer(rebasing: raw[range]), pixelFormat: pixelFormat, width: size.width,
                        height: size.height, bytesPerLine: 0, into: destination, jpegDecoder: jpegDecoder)
                }
            }
            best = min(best, secondsSince(start))
        }
        print(
            "convert format=\(formatName) size=\(size) output=\(output) frames=\(count) "
                + "ms_per_frame=\(fixed(best * 1000 / Double(count), 3)) fps=\(fixed(Double(count) / best, 1))")
    }

    /// The byte ranges of the JPEG images (SOI … EOI) in a concatenation. Inside entropy-coded data 0xFF is always
    /// followed by 0x00 or a restart marker, so 0xFF 0xD9 only ends an image.
    static func jpegRanges(_ data: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start: Int?
        var index = 0
        while index + 1 < data.count {
            if data[index] == 0xFF {
                if data[index + 1] == 0xD8, start == nil { start = index }
                if data[index + 1] == 0xD9, let s = start {
                    ranges.append(s..<index + 2)
                    start = nil
                }
            }
            index += 1
        }
        return ranges
    }
}
