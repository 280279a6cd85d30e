public import CaptureCore

/// The 32-byte header of an IVF file: `DKIF`, version 0, header size 32, codec FourCC, size, time base, frame count.
///
/// All fields are little-endian. The time base is `timebaseScale / timebaseRate` seconds per pts tick (vpxenc writes
/// rate = fps numerator, scale = fps denominator; ``IVFWriter`` writes 90000/1 or fps/1).
public struct IVFFileHeader: Sendable, Hashable, Codable {
    /// The codec FourCC, `VP80` for VP8.
    public var fourCC: String
    /// The coded frame size.
    public var dimensions: Dimensions
    /// Time base denominator (ticks per second when ``timebaseScale`` is 1).
    public var timebaseRate: UInt32
    /// Time base numerator.
    public var timebaseScale: UInt32
    /// The number of frames, as written in the header (patched when the writer closes).
    public var frameCount: UInt32
    /// The header size the file declares (32 for every known writer).
    public var headerSize: Int

    /// The file signature.
    public static let signature: [UInt8] = Array("DKIF".utf8)
    /// The size of the file header in bytes.
    public static let size = 32
    /// The size of each frame header in bytes (32-bit frame size, 64-bit pts).
    public static let frameHeaderSize = 12

    /// Creates a header.
    public init(
        fourCC: String = "VP80", dimensions: Dimensions, timebaseRate: UInt32, timebaseScale: UInt32,
        frameCount: UInt32 = 0
    ) {
        self.fourCC = fourCC
        self.dimensions = dimensions
        self.timebaseRate = timebaseRate
        self.timebaseScale = timebaseScale
        self.frameCount = frameCount
        self.headerSize = Self.size
    }

    /// The 32 header bytes.
    public var bytes: [UInt8] {
        var out = Self.signature
        out.appendLittleEndian(UInt16(0))
        out.appendLittleEndian(UInt16(Self.size))
        out += Array(fourCC.utf8.prefix(4)) + [UInt8](repeating: 0x20, count: max(0, 4 - fourCC.utf8.count))
        out.appendLittleEndian(UInt16(clamping: dimensions.width))
        out.appendLittleEndian(UInt16(clamping: dimensions.height))
        out.appendLittleEndian(timebaseRate)
        out.appendLittleEndian(timebaseScale)
        out.appendLittleEndian(frameCount)
        out.appendLittleEndian(UInt32(0))
        return out
    }

    /// Parses and validates a header.
    ///
    /// - Throws: `CaptureError` `malformedFile` for a short header, a wrong signature, an unknown version, a header
    ///   size below 32, a zero frame size or a zero time base.
    public init(parsing bytes: [UInt8], file: String? = nil) throws(CaptureError) {
        func fail(_ why: String) -> CaptureError {
            CaptureError(.malformedFile, "not a valid IVF file: \(why)", device: file)
        }
        guard bytes.count >= Self.size else { throw fail("header is \(bytes.count) bytes, expected 32") }
        guard Array(bytes[0..<4]) == Self.signature else { throw fail("signature is not DKIF") }
        let version = bytes.littleEndian(UInt16.self, at: 4)
        guard version == 0 else { throw fail("unsupported version \(version)") }
        let headerSize = Int(bytes.littleEndian(UInt16.self, at: 6))
        guard headerSize >= Self.size else { throw fail("header size \(headerSize) is below 32") }
        let width = Int(bytes.littleEndian(UInt16.self, at: 12))
        let height = Int(bytes.littleEndian(UInt16.self, at: 14))
        guard width > 0, height > 0 else { throw fail("frame size \(width)x\(height)") }
        let rate = bytes.littleEndian(UInt32.self, at: 16)
        let scale = bytes.littleEndian(UInt32.self, at: 20)
        guard rate > 0, scale > 0 else { throw fail("time base \(scale)/\(rate)") }
        self.fourCC = String(decoding: bytes[8..<12], as: UTF8.self)
        self.dimensions = Dimensions(width: width, height: height)
        self.timebaseRate = rate
        self.timebaseScale = scale
        self.frameCount = bytes.littleEndian(UInt32.self, at: 24)
        self.headerSize = headerSize
    }
}

extension [UInt8] {
    /// Appends `value` in little-endian byte order.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
    }

    /// The little-endian `T` at `offset` (the caller checks the bounds).
    func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(self[offset + index]) << (8 * index) }
        return value
    }
}
