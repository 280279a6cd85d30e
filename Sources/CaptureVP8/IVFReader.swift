public import CaptureCore

/// One frame read from an IVF file.
public struct IVFFrame: Sendable, Hashable, Codable {
    /// The compressed frame.
    public var bytes: [UInt8]
    /// Its presentation time in the file's time base.
    public var pts: UInt64

    /// Creates a frame.
    public init(bytes: [UInt8], pts: UInt64) {
        self.bytes = bytes
        self.pts = pts
    }
}

/// Reads an IVF file frame by frame, validating the header and every frame header.
public final class IVFReader {
    /// The file's path.
    public let path: String
    /// The validated header.
    public let header: IVFFileHeader
    /// Frames read so far.
    public private(set) var framesRead = 0

    /// Frames larger than this are treated as corruption (a VP8 frame of 16383x16383 stays far below it).
    public static let maximumFrameBytes = 256 << 20

    private let file: BinaryFile
    private var offset: Int

    /// Opens `path` and validates its header.
    ///
    /// - Throws: `CaptureError` `deviceNotFound` for a missing file, `ioFailure` when it cannot be read,
    ///   `malformedFile` when the header is not a valid IVF header.
    public init(path: String) throws(CaptureError) {
        self.path = path
        let file = try BinaryFile(readingFrom: path)
        let header = try IVFFileHeader(parsing: try file.read(IVFFileHeader.size), file: path)
        if header.headerSize > IVFFileHeader.size {
            let extra = header.headerSize - IVFFileHeader.size
            guard try file.read(extra).count == extra else {
                throw CaptureError(.malformedFile, "IVF header is truncated", device: path)
            }
        }
        self.header = header
        self.offset = header.headerSize
        self.file = file
    }

    /// The next frame, or `nil` at the clean end of the file.
    ///
    /// - Throws: `CaptureError` `malformedFile` for a truncated frame header or frame, or a frame size of 0 or above
    ///   ``maximumFrameBytes``; `ioFailure` when reading fails.
    public func next() throws(CaptureError) -> IVFFrame? {
        let frameHeader = try file.read(IVFFileHeader.frameHeaderSize)
        if frameHeader.isEmpty { return nil }
        guard frameHeader.count == IVFFileHeader.frameHeaderSize else {
            throw malformed("frame \(framesRead) header is truncated (\(frameHeader.count) of 12 bytes)")
        }
        let size = Int(frameHeader.littleEndian(UInt32.self, at: 0))
        let pts = frameHeader.littleEndian(UInt64.self, at: 4)
        guard size > 0, size <= Self.maximumFrameBytes else {
            throw malformed("frame \(framesRead) declares \(size) bytes")
        }
        let bytes = try file.read(size)
        guard bytes.count == size else {
            throw malformed("frame \(framesRead) is truncated (\(bytes.count) of \(size) bytes)")
        }
        offset += IVFFileHeader.frameHeaderSize + size
        framesRead += 1
        return IVFFrame(bytes: bytes, pts: pts)
    }

    /// Every remaining frame.
    ///
    /// - Throws: As ``next()``.
    public func readAll() throws(CaptureError) -> [IVFFrame] {
        var frames: [IVFFrame] = []
        while let frame = try next() { frames.append(frame) }
        return frames
    }

    private func malformed(_ why: String) -> CaptureError {
        CaptureError(.malformedFile, "IVF \(why) at byte \(offset)", device: path)
    }
}
