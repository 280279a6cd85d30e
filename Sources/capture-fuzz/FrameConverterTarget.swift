import CaptureConversion
import CaptureCore

extension FuzzTarget {
    /// ``FrameConverter`` on arbitrary bytes in every supported camera format (MJPEG, YUYV, NV12, RGB…), with
    /// arbitrary declared sizes and strides.
    ///
    /// The first 8 bytes choose the frame: format (byte 0, an index into the supported formats), width and height
    /// (bytes 1–2 and 3–4, little-endian, 1…1024), bytes per line (bytes 5–6, any value, 0 = packed) and output
    /// (byte 7: NV12 or I420). The rest is the frame. For JPEG formats the size is the one the JPEG's SOF declares
    /// when it has one, so that inputs reach the decoder rather than stopping at the size check. A JPEG frame is
    /// converted twice with one ``JPEGDecoder``, as a stream reuses its decoder after good and bad frames alike.
    static let frameConverter = FuzzTarget(name: "frame-converter") { bytes in
        guard bytes.count >= FrameConverterInput.headerBytes else { return }
        let input = FrameConverterInput(bytes)
        let frame = UnsafeRawBufferPointer(rebasing: bytes[FrameConverterInput.headerBytes...])
        let buffer = VideoFrameBuffer(format: input.output, width: input.width, height: input.height)
        let jpegDecoder = JPEGDecoder()
        for _ in 0..<(input.pixelFormat.isJPEG ? 2 : 1) {
            _ = try? FrameConverter.convert(
                frame, pixelFormat: input.pixelFormat, width: input.width, height: input.height,
                bytesPerLine: input.bytesPerLine, into: buffer, jpegDecoder: jpegDecoder)
        }
    }
}

/// The frame a `frame-converter` input declares in its first bytes.
struct FrameConverterInput {
    /// Bytes before the frame.
    static let headerBytes = 8
    /// The largest width or height tried (keeps the destination buffer small).
    static let maximumSide = 1024
    /// Formats in a fixed order, so that byte 0 means the same format from run to run.
    static let formats = FrameConverter.supportedPixelFormats.sorted { $0.rawValue < $1.rawValue }

    let pixelFormat: PixelFormat
    let width: Int
    let height: Int
    let bytesPerLine: Int
    let output: OutputPixelFormat

    init(_ bytes: UnsafeRawBufferPointer) {
        func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func side(_ value: Int) -> Int { value % Self.maximumSide + 1 }
        pixelFormat = Self.formats[Int(bytes[0]) % Self.formats.count]
        bytesPerLine = le16(5)
        output = bytes[7] & 1 == 0 ? .nv12 : .i420
        let frame = UnsafeRawBufferPointer(rebasing: bytes[Self.headerBytes...])
        if pixelFormat.isJPEG, let size = Self.jpegSize(frame),
            (1...Self.maximumSide).contains(size.width), (1...Self.maximumSide).contains(size.height)
        {
            (width, height) = (size.width, size.height)
        } else {
            (width, height) = (side(le16(1)), side(le16(3)))
        }
    }

    /// The size in a JPEG's first SOF segment (baseline, extended or progressive), if the markers lead to one.
    static func jpegSize(_ jpeg: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        var at = 2
        while at + 9 <= jpeg.count, jpeg[at] == 0xFF {
            let marker = jpeg[at + 1]
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            if (0xC0...0xC2).contains(marker) {
                return (Int(jpeg[at + 7]) << 8 | Int(jpeg[at + 8]), Int(jpeg[at + 5]) << 8 | Int(jpeg[at + 6]))
            }
            guard length >= 2 else { return nil }
            at += 2 + length
        }
        return nil
    }
}
