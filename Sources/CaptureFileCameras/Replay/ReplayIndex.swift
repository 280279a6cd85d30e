import CaptureConversion
import CaptureCore
import SystemPackage

/// An open replay file and where its frames are: fixed-size slots for raw formats, the images the JPEG splitter found
/// for MJPEG. Reads one frame at a time into a buffer it reuses, and decodes MJPEG with a `JPEGDecoder` it keeps.
struct ReplayIndex {
    let source: ReplaySource
    private let fd: FileDescriptor
    /// Bytes of one raw frame (0 for JPEG).
    private let frameBytes: Int
    /// The JPEG images (empty for raw formats).
    private let images: [JPEGStreamSplitter.Frame]
    /// The frames in the file.
    let frameCount: Int
    /// The frame read last (valid up to `length`).
    private(set) var buffer: [UInt8]
    /// Bytes of `buffer` the last frame filled.
    private(set) var length = 0
    /// The stream's JPEG decoder (its TurboJPEG decompressor is made on the first JPEG frame, so raw files never
    /// make one). Used by whoever holds the index: the replay session's loop thread.
    private let jpegDecoder = JPEGDecoder()

    /// Opens and indexes `source.path`.
    init(_ source: ReplaySource) throws(CaptureError) {
        guard source.fps > 0, source.fps <= 1000 else {
            throw CaptureError(.invalidArgument, "frame rate \(source.fps) is out of range", device: source.path)
        }
        let size = source.dimensions
        guard size.width > 0, size.height > 0, size.width <= 16384, size.height <= 16384 else {
            throw CaptureError(.invalidArgument, "frame size \(size) is out of range", device: source.path)
        }
        let fd = try FileDescriptor.openForReading(source.path, what: "the replay file")
        do throws(CaptureError) {
            let fileBytes = try Self.fileSize(fd, path: source.path)
            if source.pixelFormat.isJPEG {
                images = try Self.scanImages(fd, path: source.path)
                guard !images.isEmpty else {
                    throw CaptureError(.malformedFile, "the file holds no JPEG image", device: source.path)
                }
                frameBytes = 0
                frameCount = images.count
                buffer = [UInt8](repeating: 0, count: images.map(\.length).max() ?? 0)
            } else {
                guard
                    let bytes = FrameConverter.minimumFrameBytes(
                        pixelFormat: source.pixelFormat, width: size.width, height: size.height, bytesPerLine: 0)
                else {
                    throw CaptureError(
                        .formatNotSupported, "cannot replay \(source.pixelFormat.fourCC) at \(size)",
                        device: source.path)
                }
                guard fileBytes >= bytes, fileBytes % bytes == 0 else {
                    throw CaptureError(
                        .malformedFile,
                        "the file's \(fileBytes) bytes are not a whole number of \(bytes)-byte "
                            + "\(source.pixelFormat.fourCC) \(size) frames",
                        device: source.path)
                }
                images = []
                frameBytes = bytes
                frameCount = fileBytes / bytes
                buffer = [UInt8](repeating: 0, count: bytes)
            }
        } catch {
            try? fd.close()
            throw error
        }
        self.source = source
        self.fd = fd
    }

    /// Reads frame `index` (0 ..< `frameCount`) into ``buffer``.
    mutating func read(_ index: Int) throws(CaptureError) {
        let offset = images.isEmpty ? index * frameBytes : images[index].offset
        let count = images.isEmpty ? frameBytes : images[index].length
        var total = 0
        let fd = self.fd
        do {
            try buffer.withUnsafeMutableBytes { raw in
                while total < count {
                    let n = try fd.read(
                        fromAbsoluteOffset: Int64(offset + total),
                        into: UnsafeMutableRawBufferPointer(rebasing: raw[total..<count]), retryOnInterrupt: true)
                    if n == 0 { break }
                    total += n
                }
            }
        } catch {
            throw CaptureError(
                .ioFailure, "cannot read the replay file", device: source.path, call: "pread", errno: error as? Errno)
        }
        guard total == count else {
            throw CaptureError(.endOfStream, "the replay file shrank while playing", device: source.path)
        }
        length = count
    }

    /// What ``play(_:into:)`` did.
    enum Outcome {
        /// The frame is in the destination.
        case converted
        /// The frame did not convert (a corrupt JPEG): drop it and go on.
        case corrupt
        /// The file could not be read: the stream ends.
        case failed(CaptureError)
    }

    /// Reads frame `index` and converts it into `destination` with `FrameConverter`.
    mutating func play(_ index: Int, into destination: VideoFrameBuffer) -> Outcome {
        do throws(CaptureError) {
            try read(index)
        } catch {
            return .failed(error)
        }
        let source = self.source
        let length = self.length
        let jpegDecoder = self.jpegDecoder
        do {
            try buffer.withUnsafeBytes { raw in
                try FrameConverter.convert(
                    UnsafeRawBufferPointer(rebasing: raw[0..<length]), pixelFormat: source.pixelFormat,
                    width: source.dimensions.width, height: source.dimensions.height, bytesPerLine: 0,
                    into: destination, jpegDecoder: jpegDecoder)
            }
        } catch {
            return .corrupt
        }
        return .converted
    }

    /// Closes the file.
    func close() throws(CaptureError) {
        do { try fd.close() } catch {
            throw CaptureError(
                .ioFailure, "cannot close the replay file", device: source.path, call: "close", errno: error as? Errno)
        }
    }

    private static func fileSize(_ fd: FileDescriptor, path: String) throws(CaptureError) -> Int {
        do { return Int(try fd.seek(offset: 0, from: .end)) } catch {
            throw CaptureError(
                .ioFailure, "cannot size the replay file", device: path, call: "lseek", errno: error as? Errno)
        }
    }

    /// Splits the whole file into JPEG images, reading it in 1 MiB chunks.
    private static func scanImages(
        _ fd: FileDescriptor, path: String
    ) throws(CaptureError) -> [JPEGStreamSplitter.Frame] {
        var splitter = JPEGStreamSplitter()
        var images: [JPEGStreamSplitter.Frame] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while true {
            let n: Int
            do {
                n = try chunk.withUnsafeMutableBytes { raw in
                    try fd.read(fromAbsoluteOffset: offset, into: raw, retryOnInterrupt: true)
                }
            } catch {
                throw CaptureError(
                    .ioFailure, "cannot read the replay file", device: path, call: "pread", errno: error as? Errno)
            }
            if n == 0 { break }
            chunk.withUnsafeBytes { raw in
                splitter.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { images.append($0) }
            }
            offset += Int64(n)
        }
        splitter.finish { images.append($0) }
        return images
    }
}
