#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A scratch file holding the current input, for readers that open a path (Y4M, IVF).
enum FuzzInputFile {
    /// This process's scratch file.
    static let path: String = {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        return "\(directory)/capture-fuzz-\(getpid()).input"
    }()

    /// Writes `bytes` to the scratch file, runs `body` with its path, then removes it.
    static func withFile(containing bytes: UnsafeRawBufferPointer, _ body: (String) -> Void) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            printError("capture-fuzz: cannot create \(path) (errno \(errno))")
            exit(1)
        }
        var written = 0
        while written < bytes.count, let base = bytes.baseAddress {
            let n = write(fd, base + written, bytes.count - written)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                printError("capture-fuzz: cannot write \(path) (errno \(errno))")
                exit(1)
            }
            written += n
        }
        close(fd)
        body(path)
        unlink(path)
    }

    /// The whole contents of `path`, or `nil` when it cannot be read.
    static func contents(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }
}
