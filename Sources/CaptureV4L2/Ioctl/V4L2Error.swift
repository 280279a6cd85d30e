import SystemPackage

/// A failed V4L2 call: which call (`VIDIOC_S_FMT`, `open`, `mmap`, …) and the `errno` it returned.
///
/// This is the ioctl layer's error; the session and backend turn it into a ``CaptureError`` that names the device
/// and says what the failure means (see `CaptureError.init(_:device:)`).
struct V4L2Error: Error, Hashable, CustomStringConvertible {
    /// The call that failed, spelled as in C (`VIDIOC_DQBUF`).
    var call: String
    /// The system error.
    var errno: Errno

    /// `"VIDIOC_S_FMT failed: Invalid argument (22)"`.
    var description: String { "\(call) failed: \(errno) (\(errno.rawValue))" }
}
