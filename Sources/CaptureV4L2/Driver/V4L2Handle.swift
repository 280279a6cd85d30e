import SystemPackage

/// One open V4L2 device node: the descriptor, the driver it goes through, and the node path for messages.
///
/// The ioctl families are extensions of this type, one file each under `Ioctl/`; they take and return Swift
/// values, and no `v4l2_*` struct escapes them. ``close()`` is idempotent and also runs on deinit, so a handle
/// dropped on an error path never leaks its descriptor.
///
/// Not thread-safe: a handle is used by one thread at a time (the starting thread, then the capture thread).
final class V4L2Handle {
    /// The node path, for example `/dev/video0`.
    let node: String
    let driver: any V4L2Driver
    private(set) var fd: CInt?

    private init(node: String, driver: any V4L2Driver, fd: CInt) {
        self.node = node
        self.driver = driver
        self.fd = fd
    }

    deinit { close() }

    /// Opens `node` through `driver`.
    static func open(_ node: String, driver: any V4L2Driver) throws(V4L2Error) -> V4L2Handle {
        switch driver.open(node) {
        case .success(let fd): return V4L2Handle(node: node, driver: driver, fd: fd)
        case .failure(let errno): throw V4L2Error(call: "open", errno: errno)
        }
    }

    /// Closes the descriptor (once).
    func close() {
        guard let fd else { return }
        self.fd = nil
        driver.close(fd)
    }

    /// Issues `request` on `argument`, retrying while it fails with `EINTR`.
    func ioctl<T>(
        _ call: String, _ request: UInt, _ argument: inout T, retryOnInterrupt: Bool = true
    ) throws(V4L2Error) {
        guard let fd else { throw V4L2Error(call: call, errno: .badFileDescriptor) }
        while true {
            let failure: Errno? = withUnsafeMutableBytes(of: &argument) { bytes in
                guard let address = bytes.baseAddress else { return .badAddress }
                return driver.ioctl(fd, request, address)
            }
            guard let failure else { return }
            if failure == .interrupted && retryOnInterrupt { continue }
            throw V4L2Error(call: call, errno: failure)
        }
    }

    /// Issues one step of an enumeration ioctl (`entry` carries the index); `false` at the end of the list
    /// (`EINVAL`) or when the driver does not implement the enumeration (`ENOTTY`).
    func enumerate<T>(_ call: String, _ request: UInt, _ entry: inout T) throws(V4L2Error) -> Bool {
        do {
            try ioctl(call, request, &entry)
            return true
        } catch  where error.errno == .invalidArgument || error.errno == .inappropriateIOCTLForDevice {
            return false
        }
    }

    /// Waits up to `timeoutMs` for `events`, retrying on `EINTR`; returns the events that occurred (0 on timeout).
    func poll(events: Int16, timeoutMs: Int32) throws(V4L2Error) -> Int16 {
        guard let fd else { throw V4L2Error(call: "poll", errno: .badFileDescriptor) }
        while true {
            switch driver.poll(fd, events: events, timeoutMs: timeoutMs) {
            case .success(let revents): return revents
            case .failure(let errno) where errno == .interrupted: continue
            case .failure(let errno): throw V4L2Error(call: "poll", errno: errno)
            }
        }
    }

    /// Maps a driver buffer.
    func map(length: Int, offset: Int) throws(V4L2Error) -> UnsafeMutableRawPointer {
        guard let fd else { throw V4L2Error(call: "mmap", errno: .badFileDescriptor) }
        switch driver.mmap(fd, length: length, offset: offset) {
        case .success(let address): return address
        case .failure(let errno): throw V4L2Error(call: "mmap", errno: errno)
        }
    }
}
