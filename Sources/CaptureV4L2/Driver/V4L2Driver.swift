import SystemPackage

/// The system calls the V4L2 backend makes, behind one seam: the real implementation is ``LibV4L2Driver``; unit
/// tests substitute a fake device. Nothing in the backend calls `open`, `ioctl`, `mmap` or `poll` any other way.
///
/// Every method returns the raw outcome: retrying on `EINTR` and giving each `errno` its meaning is the job of the
/// ioctl layer (``V4L2Handle``), so that logic is exercised by the tests too.
protocol V4L2Driver: Sendable {
    /// Opens a device node for streaming (read-write, non-blocking, close-on-exec) and returns its descriptor.
    func open(_ path: String) -> Result<CInt, Errno>
    /// Closes a descriptor returned by ``open(_:)``.
    func close(_ fd: CInt)
    /// Issues one ioctl; `nil` on success, else the `errno` it failed with (including `EINTR`).
    func ioctl(_ fd: CInt, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Errno?
    /// Maps `length` bytes of a driver buffer at `offset` (shared, read-write).
    func mmap(_ fd: CInt, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, Errno>
    /// Unmaps a mapping made by ``mmap(_:length:offset:)``.
    func munmap(_ address: UnsafeMutableRawPointer, length: Int)
    /// Waits up to `timeoutMs` for `events` on `fd`; returns the events that occurred (0 on timeout).
    func poll(_ fd: CInt, events: Int16, timeoutMs: Int32) -> Result<Int16, Errno>
    /// The `/dev/video*` nodes that exist now (full paths, any order).
    func videoNodes() -> [String]
    /// The symbolic links in `directory`, as (link name, absolute target path) pairs; empty if it does not exist.
    func symbolicLinks(in directory: String) -> [(name: String, target: String)]
}
