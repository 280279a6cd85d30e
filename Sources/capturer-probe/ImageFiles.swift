import CaptureCore
import Foundation

/// The still-image formats `snapshot` writes, chosen by the output file's extension.
enum ImageFileFormat: String, CaseIterable {
    case png, ppm, y4m

    /// The format for `path`'s extension, or `nil`.
    init?(path: String) {
        guard let dot = path.lastIndex(of: "."), path[dot...].contains(where: { $0 != "." }) else { return nil }
        self.init(rawValue: path[path.index(after: dot)...].lowercased())
    }

    /// The file's bytes for `image`; `fps` goes into the Y4M header.
    func encode(_ image: I420Picture, fps: Double) -> [UInt8] {
        switch self {
        case .ppm: PPM.encode(image)
        case .png: PNG.encode(image)
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

/// A minimal PNG encoder: 8-bit RGB, no filtering, zlib stream of stored (uncompressed) deflate blocks.
enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func encode(_ image: I420Picture) -> [UInt8] {
        let rgb = image.rgb()
        let rowBytes = image.width * 3
        var raw: [UInt8] = []
        raw.reserveCapacity((rowBytes + 1) * image.height)
        for row in 0..<image.height {
            raw.append(0)  // filter type None
            raw += rgb[row * rowBytes..<(row + 1) * rowBytes]
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(image.width))
        header += bigEndian(UInt32(image.height))
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type RGB, deflate, filter 0, no interlace
        return signature + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// A zlib stream (RFC 1950) holding `data` in stored deflate blocks (RFC 1951 §3.2.4).
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        return out + bigEndian(adler32(data))
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var index = 0
        while index < data.count {
            // 5552 bytes is the most that can be summed before the 32-bit sums must be reduced.
            let end = min(index + 5552, data.count)
            while index < end {
                a += UInt32(data[index])
                b += a
                index += 1
            }
            a %= 65_521
            b %= 65_521
        }
        return b << 16 | a
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
