import CaptureCore
import Foundation
internal import CZlib

/// The still-image formats `snapshot` writes, chosen by the output file's extension.
enum ImageFileFormat: String, CaseIterable {
    case png, ppm, y4m

    /// The format for `path`'s extension, or `nil`.
    init?(path: String) {
        guard let dot = path.lastIndex(of: "."), path[dot...].contains(where: { $0 != "." }) else { return nil }
        self.init(rawValue: path[path.index(after: dot)...].lowercased())
    }

    /// The file's bytes for `image`; `fps` goes into the Y4M header.
    func encode(_ image: I420Picture, fps: Double) throws(CaptureError) -> [UInt8] {
        switch self {
        case .ppm: PPM.encode(image)
        case .png: try PNG.encode(image)
        case .y4m: Y4M.encode(image, fps: fps)
        }
    }
}

/// Binary PPM (P6), 8-bit RGB.
enum PPM {
    static func encode(_ image: I420Picture) -> [UInt8] {
        Array("P6\n\(image.width) \(image.height)\n255\n".utf8) + image.rgb()
    }
}

/// One-frame YUV4MPEG2 with 4:2:0 JPEG-siting chroma (`C420jpeg`), what ffmpeg and vpxenc read.
enum Y4M {
    static func encode(_ image: I420Picture, fps: Double) -> [UInt8] {
        let rate = fps == fps.rounded() ? "\(max(1, Int(fps))):1" : "\(Int((fps * 1000).rounded())):1000"
        let header = "YUV4MPEG2 W\(image.width) H\(image.height) F\(rate) Ip A1:1 C420jpeg\nFRAME\n"
        return Array(header.utf8) + image.y + image.u + image.v
    }
}

/// PNG (8-bit RGB) through zlib: each row filtered with PNG's "Up" filter (whichever of None or Up is smaller by the
/// usual minimum-sum-of-absolute-differences heuristic), the image data deflated by zlib at its default level, and
/// every chunk's CRC computed by zlib's `crc32`.
enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Throws `ioFailure` only if zlib fails (out of memory).
    static func encode(_ image: I420Picture) throws(CaptureError) -> [UInt8] {
        let rgb = image.rgb()
        let rowBytes = image.width * 3
        var raw: [UInt8] = []
        raw.reserveCapacity((rowBytes + 1) * image.height)
        for row in 0..<image.height {
            let current = rgb[row * rowBytes..<(row + 1) * rowBytes]
            guard row > 0 else {
                raw.append(0)  // filter type None
                raw += current
                continue
            }
            let previous = rgb[(row - 1) * rowBytes..<row * rowBytes]
            let up = zip(current, previous).map { $0 &- $1 }
            if cost(up) < cost(current) {
                raw.append(2)  // filter type Up
                raw += up
            } else {
                raw.append(0)
                raw += current
            }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(image.width))
        header += bigEndian(UInt32(image.height))
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type RGB, deflate, filter 0, no interlace
        return signature + chunk("IHDR", header) + chunk("IDAT", try deflate(raw)) + chunk("IEND", [])
    }

    /// The sum of the bytes taken as signed values: libpng's heuristic for choosing a row filter.
    private static func cost<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int {
        bytes.reduce(0) { $0 + Int(Int8(bitPattern: $1).magnitude) }
    }

    /// A zlib stream (RFC 1950) of `data`, compressed by zlib's `compress2` at its default level.
    static func deflate(_ data: [UInt8]) throws(CaptureError) -> [UInt8] {
        var capacity = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(capacity))
        let status = out.withUnsafeMutableBufferPointer { destination in
            data.withUnsafeBufferPointer { source in
                compress2(
                    destination.baseAddress, &capacity, source.baseAddress, uLong(source.count),
                    Z_DEFAULT_COMPRESSION)
            }
        }
        guard status == Z_OK else {
            throw CaptureError(.ioFailure, "zlib could not compress the PNG image data", call: "compress2 (\(status))")
        }
        out.removeSubrange(Int(capacity)...)
        return out
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = body.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
