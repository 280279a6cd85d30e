import CaptureConversion
import CaptureCore
import Testing

/// Sizes with odd widths and heights, down to one pixel.
private let sizes: [Dimensions] = [
    Dimensions(width: 641, height: 479), Dimensions(width: 64, height: 48), Dimensions(width: 3, height: 3),
    Dimensions(width: 1, height: 1), Dimensions(width: 2, height: 5),
]

@Suite("FrameConverter: raw formats against libyuv's own ConvertToI420")
struct FrameConverterTests {
    @Test("every raw format, tight and padded strides, NV12 and I420", arguments: SourceFormat.all)
    func matchesLibyuv(_ format: SourceFormat) throws {
        for size in sizes {
            let (w, h) = (size.width, size.height)
            let packedCount = format.planes(w, h, 0).reduce(0) { $0 + $1.rowBytes * $1.rows }
            let packed = pseudoRandomBytes(packedCount, seed: UInt64(w * 7919 + h))
            let expected = try #require(format.reference(packed, w, h), "libyuv reference for \(format) \(size)")
            let rowBytes = format.rowBytes(width: w)
            for stride in [0, rowBytes, rowBytes + 13, (rowBytes + 63) / 64 * 64 + 64] {
                let source = stride == 0 ? packed : format.padded(packed, width: w, height: h, stride: stride)
                for output in OutputPixelFormat.allCases {
                    let buffer = try convert(
                        source, format.pixelFormat, width: w, height: h, bytesPerLine: stride, output: output)
                    let actual = I420Image(buffer)
                    let mismatch = actual.mismatch(expected)
                    #expect(mismatch == nil, "\(format) \(size) stride \(stride) → \(output)")
                    if output == .nv12 {
                        let uv = firstDifference(buffer.packedBytes(plane: 1), expected.nv12UV())
                        #expect(uv == nil, "\(format) \(size) NV12 UV")
                    }
                }
            }
        }
    }

    @Test("minimumFrameBytes is what the converter needs: one byte less is a short frame", arguments: SourceFormat.all)
    func shortFrames(_ format: SourceFormat) throws {
        let (w, h) = (641, 479)
        for stride in [0, format.rowBytes(width: w) + 10] {
            let needed = try #require(
                FrameConverter.minimumFrameBytes(
                    pixelFormat: format.pixelFormat, width: w, height: h, bytesPerLine: stride))
            let bytes = [UInt8](repeating: 100, count: needed)
            _ = try convert(bytes, format.pixelFormat, width: w, height: h, bytesPerLine: stride, output: .nv12)
            let error = #expect(throws: CaptureError.self) {
                try convert(
                    Array(bytes.dropLast()), format.pixelFormat, width: w, height: h, bytesPerLine: stride,
                    output: .nv12)
            }
            #expect(error?.code == .conversionFailed)
        }
    }

    @Test("a tightly packed frame needs exactly what V4L2 and WebRTC's CalcBufferSize say")
    func tightSizes() {
        let (w, h) = (640, 480)
        let expectations: [(PixelFormat, Int)] = [
            (.yuyv, w * h * 2), (.uyvy, w * h * 2), (.nv12, w * h * 3 / 2), (.yu12, w * h * 3 / 2),
            (.rgb3, w * h * 3), (.xr24, w * h * 4), (.grey, w * h),
        ]
        for (format, bytes) in expectations {
            #expect(
                FrameConverter.minimumFrameBytes(pixelFormat: format, width: w, height: h, bytesPerLine: 0) == bytes)
        }
        // Odd sizes: WebRTC's I420 layout (chroma ceil(w/2) x ceil(h/2)) and the NV12 UV stride w + w % 2.
        #expect(FrameConverter.minimumFrameBytes(pixelFormat: .yu12, width: 3, height: 3, bytesPerLine: 0) == 9 + 2 * 4)
        #expect(FrameConverter.minimumFrameBytes(pixelFormat: .nv12, width: 3, height: 3, bytesPerLine: 0) == 9 + 8)
        #expect(FrameConverter.minimumFrameBytes(pixelFormat: .mjpg, width: w, height: h, bytesPerLine: 0) == nil)
        #expect(FrameConverter.minimumFrameBytes(pixelFormat: .h264, width: w, height: h, bytesPerLine: 0) == nil)
    }

    @Test("bad arguments are typed errors, not crashes")
    func badArguments() throws {
        let bytes = [UInt8](repeating: 0, count: 640 * 480 * 4)
        let cases: [(PixelFormat, Int, Int, Int, Dimensions, CaptureError.Code)] = [
            (.yuyv, 640, 480, 1279, Dimensions(width: 640, height: 480), .invalidArgument),  // stride < row
            (.yuyv, 640, 480, -4, Dimensions(width: 640, height: 480), .invalidArgument),
            (.yuyv, 640, 480, 0, Dimensions(width: 320, height: 240), .invalidArgument),  // destination size
            (.yuyv, 0, 480, 0, Dimensions(width: 1, height: 480), .invalidArgument),
            (.h264, 640, 480, 0, Dimensions(width: 640, height: 480), .conversionFailed),
            (.yuyv, 100_000, 2, 0, Dimensions(width: 2, height: 2), .invalidArgument),
        ]
        for (format, w, h, bpl, destination, code) in cases {
            let buffer = VideoFrameBuffer(format: .nv12, width: max(destination.width, 1), height: destination.height)
            let error = #expect(throws: CaptureError.self, "\(format) \(w)x\(h) bpl \(bpl)") {
                try convert(bytes, format, width: w, height: h, bytesPerLine: bpl, into: buffer)
            }
            #expect(error?.code == code, "\(format) \(w)x\(h) bpl \(bpl): \(String(describing: error))")
        }
        let empty = #expect(throws: CaptureError.self) {
            try convert([], .nv12, width: 2, height: 2, output: .i420)
        }
        #expect(empty?.code == .conversionFailed)
    }

    @Test("supportedPixelFormats lists every format of the capturer", arguments: SourceFormat.all)
    func supported(_ format: SourceFormat) {
        #expect(FrameConverter.canConvert(format.pixelFormat))
    }

    @Test("JPEG formats are supported, H.264 is not")
    func compressedSupport() {
        #expect(FrameConverter.canConvert(.mjpg) && FrameConverter.canConvert(.jpeg))
        #expect(!FrameConverter.canConvert(.h264))
        #expect(FrameConverter.supportedPixelFormats.count == SourceFormat.all.count + 2)
    }
}

@Suite("FrameConverter: hand-computed references")
struct FrameConverterHandReferenceTests {
    /// YUYV to I420 by hand: Y copied, chroma of each row pair averaged with rounding up ((a + b + 1) / 2), the last
    /// row of an odd height on its own.
    @Test(
        "YUYV to I420 averages the chroma of two rows",
        arguments: [Dimensions(width: 6, height: 4), Dimensions(width: 5, height: 3)])
    func yuyvByHand(_ size: Dimensions) throws {
        let (w, h) = (size.width, size.height)
        let rowBytes = (w + 1) / 2 * 4
        let src = pseudoRandomBytes(rowBytes * h, seed: 42)
        let buffer = try convert(src, .yuyv, width: w, height: h, output: .i420)
        let image = I420Image(buffer)
        for row in 0..<h {
            for x in 0..<w {
                #expect(image.y[row * w + x] == src[row * rowBytes + x / 2 * 4 + (x % 2) * 2])
            }
        }
        let cw = (w + 1) / 2
        for row in 0..<(h + 1) / 2 {
            let top = 2 * row, bottom = min(2 * row + 1, h - 1)
            for x in 0..<cw {
                for (plane, offset) in [(image.u, 1), (image.v, 3)] {
                    let a = Int(src[top * rowBytes + x * 4 + offset]), b = Int(src[bottom * rowBytes + x * 4 + offset])
                    #expect(Int(plane[row * cw + x]) == (a + b + 1) / 2)
                }
            }
        }
    }

    /// V4L2's byte order for each RGB format, written down from the V4L2 specification (not from the converter):
    /// where R, G, B and alpha go in memory.
    private static let rgbOrders: [(PixelFormat, [Character])] = [
        (.rgb3, ["R", "G", "B"]), (.bgr3, ["B", "G", "R"]),
        (.ar24, ["B", "G", "R", "A"]), (.xr24, ["B", "G", "R", "A"]), (.bgr4, ["B", "G", "R", "A"]),
        (.ba24, ["A", "R", "G", "B"]), (.bx24, ["A", "R", "G", "B"]), (.rgb4, ["A", "R", "G", "B"]),
        (.ab24, ["R", "G", "B", "A"]), (.xb24, ["R", "G", "B", "A"]),
        (.ra24, ["A", "B", "G", "R"]), (.rx24, ["A", "B", "G", "R"]),
    ]

    /// A solid colour comes out as BT.601 limited-range YUV, so each V4L2 byte order maps to the right libyuv one.
    @Test("each RGB byte order gives the BT.601 colour", arguments: rgbOrders.map(\.0))
    func rgbByteOrders(_ format: PixelFormat) throws {
        let order = try #require(Self.rgbOrders.first { $0.0 == format }?.1)
        let (r, g, b, a) = (200, 50, 10, 0x77)
        let pixel = order.map { channel -> UInt8 in
            switch channel {
            case "R": UInt8(r)
            case "G": UInt8(g)
            case "B": UInt8(b)
            default: UInt8(a)
            }
        }
        let (w, h) = (4, 4)
        let source = Array((0..<(w * h)).map { _ in pixel }.joined())
        // libyuv's BT.601 coefficients (row_common.cc RGBToY/RGBToU/RGBToV).
        let y = (66 * r + 129 * g + 25 * b + 0x1080) >> 8
        let u = (112 * b - 74 * g - 38 * r + 0x8080) >> 8
        let v = (112 * r - 94 * g - 18 * b + 0x8080) >> 8
        for output in OutputPixelFormat.allCases {
            let image = I420Image(try convert(source, format, width: w, height: h, output: output))
            #expect(image.y.allSatisfy { abs(Int($0) - y) <= 1 }, "\(format) Y \(image.y[0]) vs \(y)")
            #expect(image.u.allSatisfy { abs(Int($0) - u) <= 1 }, "\(format) U \(image.u[0]) vs \(u)")
            #expect(image.v.allSatisfy { abs(Int($0) - v) <= 1 }, "\(format) V \(image.v[0]) vs \(v)")
        }
    }

    @Test("GREY keeps luma and sets neutral chroma")
    func grey() throws {
        let src = pseudoRandomBytes(5 * 3, seed: 7)
        for output in OutputPixelFormat.allCases {
            let image = I420Image(try convert(src, .grey, width: 5, height: 3, output: output))
            #expect(firstDifference(image.y, src) == nil)
            #expect(image.u.allSatisfy { $0 == 128 } && image.v.allSatisfy { $0 == 128 })
        }
    }
}
