import CaptureCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file descriptor with whole-buffer reads and writes that retry on `EINTR`; errors are `CaptureError`s.
final class BinaryFile {
    let path: String
    private let fd: Int32

    /// Opens `path` for reading.
    init(readingFrom path: String) throws(CaptureError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw Self.error(
                code == ENOENT ? .deviceNotFound : .ioFailure, "cannot open", path: path, call: "open",
                errno: code)
        }
        self.fd = fd
    }

    /// Creates (or truncates) `path` for writing.
    init(writingTo path: String) throws(CaptureError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw Self.error(.ioFailure, "cannot create", path: path, call: "open", errno: errno)
        }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The buffer a read starts with; it doubles as bytes arrive.
    static let initialReadBytes = 64 << 10

    /// Reads up to `count` bytes, fewer only at the end of the file.
    ///
    /// The buffer grows with what the file holds, so a size that a corrupt file declares (an IVF frame header
    /// claiming 256 MB) costs no more memory than the file's bytes.
    func read(_ count: Int) throws(CaptureError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(count, Self.initialReadBytes))
        var filled = 0
        while filled < count {
            if filled == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(count - filled, bytes.count)))
            }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.error(.ioFailure, "cannot read", path: path, call: "read", errno: errno)
            }
            if n == 0 { break }
            filled += n
        }
        if filled < bytes.count { bytes.removeLast(bytes.count - filled) }
        return bytes
    }

    /// Writes all of `bytes` at the current position, or at `offset` when given.
    func write(_ bytes: [UInt8], at offset: Int? = nil) throws(CaptureError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                let start = raw.baseAddress! + written
                return if let offset {
                    pwrite(fd, start, bytes.count - written, off_t(offset + written))
                } else {
                    Glibc.write(fd, start, bytes.count - written)
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.error(.ioFailure, "cannot write", path: path, call: "write", errno: errno)
            }
            written += n
        }
    }

    private static func error(
        _ code: CaptureError.Code, _ what: String, path: String, call: String, errno code2: Int32
    ) -> CaptureError {
        CaptureError(code, "\(what) \(path): \(String(cString: strerror(code2)))", device: path, call: call)
    }
}
