import Foundation

/// Checks on output paths, made before capturing so that a long capture does not end in a write error.
enum OutputFile {
    /// Throws ``ProbeFailure`` (exit 8) unless `path` can be created or overwritten. A file that did not exist is
    /// removed again after the check.
    static func checkWritable(_ path: String) throws {
        var info = stat()
        let existed = stat(path, &info) == 0
        if existed, info.st_mode & S_IFMT == S_IFDIR {
            throw ProbeFailure(
                status: .outputNotWritable, message: "\(path): is a directory",
                hint: "give a file name for --output")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw ProbeFailure(
                status: .outputNotWritable, message: "\(path): cannot write the output file (\(reason))",
                hint: "choose a writable location for --output")
        }
        close(fd)
        if !existed { unlink(path) }
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw ProbeFailure(
                status: .outputNotWritable, message: "\(path): cannot write the output file",
                hint: "choose a writable location for --output")
        }
    }
}
