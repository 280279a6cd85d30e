internal import CV4L2
import Foundation
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The real ``V4L2Driver``: the kernel through libv4l2.
///
/// A node is opened with `open(O_RDWR | O_NONBLOCK | O_CLOEXEC)` and then handed to
/// `v4l2_fd_open(fd, V4L2_DISABLE_CONVERSION)`. With conversion disabled, `VIDIOC_ENUM_FMT` lists the driver's
/// native formats only (no `V4L2_FMT_FLAG_EMULATED` entries), so the formats we report and select are what the
/// camera really sends, and our own libyuv conversion does the work libv4l2's emulation layer would otherwise do
/// (GStreamer and FFmpeg avoid that layer by default for its bugs). libv4l2 still loads its plugins for the
/// device, which some cameras need to work at all. Every ioctl goes through `v4l2_ioctl`, every mapping through
/// `v4l2_mmap`/`v4l2_munmap`, and the descriptor is released with `v4l2_close`.
struct LibV4L2Driver: V4L2Driver {
    func open(_ path: String) -> Result<CInt, Errno> {
        let fd = path.withCString { Glibc.open($0, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { return .failure(Errno(rawValue: Glibc.errno)) }
        // Only video4linux character devices go on to libv4l2, which would otherwise print its own complaints about a
        // regular file or /dev/null on standard error before failing.
        guard Self.isVideo4LinuxNode(fd) else {
            _ = Glibc.close(fd)
            return .failure(.inappropriateIOCTLForDevice)
        }
        guard v4l2_fd_open(fd, CV4L2_DISABLE_CONVERSION) >= 0 else {
            let error = Errno(rawValue: Glibc.errno)
            _ = Glibc.close(fd)
            return .failure(error)
        }
        return .success(fd)
    }

    /// The major number of video4linux character devices (`/dev/video*`, `/dev/v4l-subdev*`, …).
    static let video4LinuxMajor: UInt64 = 81

    /// Whether `fd` is a character device of the video4linux major number.
    static func isVideo4LinuxNode(_ fd: CInt) -> Bool {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFCHR else { return false }
        let device = UInt64(status.st_rdev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))  // glibc's gnu_dev_major
        return major == video4LinuxMajor
    }

    func close(_ fd: CInt) {
        _ = v4l2_close(fd)
    }

    func ioctl(_ fd: CInt, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Errno? {
        cv4l2_ioctl(fd, numericCast(request), argument) == -1 ? Errno(rawValue: Glibc.errno) : nil
    }

    func mmap(_ fd: CInt, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, Errno> {
        let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(offset))
        guard let address, address != MAP_FAILED else { return .failure(Errno(rawValue: Glibc.errno)) }
        return .success(address)
    }

    func munmap(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = v4l2_munmap(address, length)
    }

    func poll(_ fd: CInt, events: Int16, timeoutMs: Int32) -> Result<Int16, Errno> {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let result = Glibc.poll(&descriptor, 1, timeoutMs)
        guard result >= 0 else { return .failure(Errno(rawValue: Glibc.errno)) }
        return .success(result == 0 ? 0 : descriptor.revents)
    }

    func videoNodes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { name in
            name.hasPrefix("video") && name.count > 5 && name.dropFirst(5).allSatisfy(\.isNumber)
        }.map { "/dev/" + $0 }
    }

    func symbolicLinks(in directory: String) -> [(name: String, target: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name in
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)
            else { return nil }
            let absolute = destination.hasPrefix("/") ? destination : directory + "/" + destination
            return (name, URL(fileURLWithPath: absolute).standardizedFileURL.path)
        }
    }
}
