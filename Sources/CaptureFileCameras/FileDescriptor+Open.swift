import CaptureCore
import SystemPackage

extension FileDescriptor {
    /// Opens `path` read-only (close-on-exec), turning a failure into a `CaptureError`: `deviceNotFound` when the
    /// file does not exist, `ioFailure` otherwise. `what` names the file in the message ("the Y4M file").
    static func openForReading(_ path: String, what: String) throws(CaptureError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            let errno = error as? Errno
            throw CaptureError(
                errno == .noSuchFileOrDirectory ? .deviceNotFound : .ioFailure, "cannot open \(what)",
                device: path, call: "open", errno: errno)
        }
    }
}
