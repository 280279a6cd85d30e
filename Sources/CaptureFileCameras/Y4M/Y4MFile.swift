import CaptureCore
import SystemPackage

/// The stream header of a YUV4MPEG2 (`.y4m`) file.
public struct Y4MHeader: Sendable, Hashable, Codable {
    /// Frame size.
    public var dimensions: Dimensions
    /// Frames per second as a fraction (`F30000:1001`), as `numerator/denominator` frames per second.
    public var frameRate: FrameInterval
    /// The colour-space tag (`420jpeg`, `420mpeg2`, `420paldv`, `420`); only 4:2:0 8-bit is accepted.
    public var colorSpace: String
    /// Bytes of the header line including its newline: where the first frame starts.
    public var byteCount: Int

    /// Frames per second.
    public var fps: Double {
        frameRate.denominator == 0 ? 0 : Double(frameRate.numerator) / Double(frameRate.denominator)
    }

    /// Bytes of one frame's I420 payload.
    public var frameBytes: Int {
        let chroma = ((dimensions.width + 1) / 2) * ((dimensions.height + 1) / 2)
        return dimensions.width * dimensions.height + 2 * chroma
    }

    /// Parses the header line (without or with its newline). `path` names the file in errors.
    public static func parse(_ line: [UInt8], path: String = "") throws(CaptureError) -> Y4MHeader {
        func malformed(_ what: String) -> CaptureError {
            CaptureError(.malformedFile, "not a valid Y4M header: \(what)", device: path.isEmpty ? nil : path)
        }
        var bytes = line
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw malformed("not text") }
        let tokens = text.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.first == "YUV4MPEG2" else { throw malformed("it does not start with YUV4MPEG2") }
        var width: Int?
        var height: Int?
        var rate = FrameInterval(numerator: 30, denominator: 1)
        var colorSpace = "420jpeg"
        for token in tokens.dropFirst() {
            let value = token.dropFirst()
            switch token.first {
            case "W":
                guard let w = Int(value), w > 0, w <= 16384 else { throw malformed("bad width \(token)") }
                width = w
            case "H":
                guard let h = Int(value), h > 0, h <= 16384 else { throw malformed("bad height \(token)") }
                height = h
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = UInt32(parts[0]), let d = UInt32(parts[1]), n > 0, d > 0 else {
                    throw malformed("bad frame rate \(token)")
                }
                rate = FrameInterval(numerator: n, denominator: d)
            case "C":
                colorSpace = String(value)
            case "I", "A", "X":
                continue
            default:
                throw malformed("unknown tag \(token)")
            }
        }
        guard let width, let height else { throw malformed("no W (width) or H (height) tag") }
        guard ["420", "420jpeg", "420mpeg2", "420paldv"].contains(colorSpace) else {
            throw CaptureError(
                .formatNotSupported, "Y4M colour space C\(colorSpace) is not supported (only 8-bit 4:2:0)",
                device: path.isEmpty ? nil : path)
        }
        return Y4MHeader(
            dimensions: Dimensions(width: width, height: height), frameRate: rate, colorSpace: colorSpace,
            byteCount: line.count + (line.last == UInt8(ascii: "\n") ? 0 : 1))
    }
}

/// Reads the frames of a Y4M file one at a time into a reused buffer.
package final class Y4MReader {
    package let header: Y4MHeader
    package let path: String
    private let fd: FileDescriptor
    private var closed = false
    /// The frame just read, I420, tightly packed.
    package private(set) var frame: [UInt8]
    package private(set) var framesRead = 0
    /// Scratch for the `FRAME` line, reused so that reading a frame allocates nothing.
    private var marker = [UInt8](repeating: 0, count: 6)

    /// Opens `path` and reads its header.
    package init(path: String) throws(CaptureError) {
        self.path = path
        let fd = try FileDescriptor.openForReading(path, what: "the Y4M file")
        do {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let n = try withUnsafeMutableBytes(of: &byte) { try fd.read(into: $0) }
                guard n == 1 else { break }
                line.append(byte)
                if byte == UInt8(ascii: "\n") || line.count > 1024 { break }
            }
            guard line.last == UInt8(ascii: "\n") else {
                throw CaptureError(.malformedFile, "not a valid Y4M header: no complete header line", device: path)
            }
            let header = try Y4MHeader.parse(line, path: path)
            try Self.checkFrameFits(header, in: fd, path: path)
            self.header = header
        } catch {
            try? fd.close()
            throw (error as? CaptureError)
                ?? CaptureError(.ioFailure, "cannot read the Y4M header", device: path, errno: error as? Errno)
        }
        self.fd = fd
        self.frame = [UInt8](repeating: 0, count: header.frameBytes)
    }

    deinit { if !closed { try? fd.close() } }

    /// The largest frame a Y4M file may declare: 64 MiB, more than an 8K (7680×4320) I420 frame's 49.8 MB.
    package static let maximumFrameBytes = 64 << 20

    /// Checks, before the frame buffer is allocated, that the declared frame is no larger than
    /// ``maximumFrameBytes`` and that a seekable file holds at least one whole frame (`FRAME` line and payload), so
    /// that a 30-byte file cannot make the reader allocate the 402 MB a W16384 H16384 header declares.
    /// Leaves the file positioned at the first frame.
    private static func checkFrameFits(_ header: Y4MHeader, in fd: FileDescriptor, path: String) throws(CaptureError) {
        let declared = header.frameBytes
        let size = "\(header.dimensions.width)x\(header.dimensions.height)"
        guard declared <= maximumFrameBytes else {
            throw CaptureError(
                .malformedFile, "Y4M frame size \(size) needs \(declared) bytes, more than \(maximumFrameBytes)",
                device: path)
        }
        // A pipe or FIFO has no size to check; its frames are checked as they are read.
        guard let fileBytes = try? fd.seek(offset: 0, from: .end) else { return }
        let needed = Int64(header.byteCount) + Int64("FRAME\n".utf8.count) + Int64(declared)
        guard fileBytes >= needed else {
            throw CaptureError(
                .malformedFile,
                "Y4M file of \(fileBytes) bytes cannot hold one \(size) frame (\(needed) bytes with its header)",
                device: path)
        }
        do {
            _ = try fd.seek(offset: Int64(header.byteCount), from: .start)
        } catch {
            throw CaptureError(
                .ioFailure, "cannot seek to the first Y4M frame", device: path, call: "lseek", errno: error as? Errno)
        }
    }

    /// Reads the next frame into ``frame``. Returns `false` at a clean end of file.
    /// - Throws: `malformedFile` for a bad frame marker or a truncated frame.
    package func readFrame() throws(CaptureError) -> Bool {
        let got = try read(into: &marker, count: 6)
        if got == 0 { return false }
        guard got == 6, marker[0..<5].elementsEqual("FRAME".utf8) else {
            throw CaptureError(.malformedFile, "frame \(framesRead): missing FRAME marker", device: path)
        }
        if marker[5] != UInt8(ascii: "\n") {
            // Frame parameters follow; skip to the end of the line.
            guard marker[5] == UInt8(ascii: " ") else {
                throw CaptureError(.malformedFile, "frame \(framesRead): malformed FRAME line", device: path)
            }
            var skipped = 0
            repeat {
                guard try read(into: &marker, count: 1) == 1, skipped < 1024 else {
                    throw CaptureError(.malformedFile, "frame \(framesRead): unterminated FRAME line", device: path)
                }
                skipped += 1
            } while marker[0] != UInt8(ascii: "\n")
        }
        let expected = header.frameBytes
        let n = try read(into: &frame, count: expected)
        guard n == expected else {
            throw CaptureError(
                .malformedFile, "frame \(framesRead) is truncated: \(n) of \(expected) bytes", device: path)
        }
        framesRead += 1
        return true
    }

    /// Goes back to the first frame.
    package func rewind() throws(CaptureError) {
        do {
            _ = try fd.seek(offset: Int64(header.byteCount), from: .start)
        } catch {
            throw CaptureError(
                .ioFailure, "cannot rewind the Y4M file", device: path, call: "lseek", errno: error as? Errno)
        }
    }

    /// Restarts the frame count after a rewind.
    package func resetCount() { framesRead = 0 }

    /// Closes the file. Idempotent.
    package func close() {
        guard !closed else { return }
        closed = true
        try? fd.close()
    }

    private func read(into buffer: inout [UInt8], count: Int) throws(CaptureError) -> Int {
        var total = 0
        do {
            try buffer.withUnsafeMutableBytes { raw in
                while total < count {
                    let n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[total..<count]))
                    if n == 0 { break }
                    total += n
                }
            }
        } catch {
            throw CaptureError(
                .ioFailure, "cannot read the Y4M file", device: path, call: "read", errno: error as? Errno)
        }
        return total
    }
}
