internal import CV4L2
import CaptureCore
import SystemPackage

@testable import CaptureV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// A scripted V4L2 device behind the driver seam: it answers the ioctls the backend makes from a device model,
/// injects errors on request, plays a script of dequeue results, and counts every open/close/mmap/munmap so tests
/// can check that nothing leaks on any path.
final class FakeV4L2Driver: V4L2Driver {
    /// The sizes one fake pixel format offers.
    enum Sizes {
        case discrete([(Dimensions, Intervals)])
        case stepwise(min: Dimensions, max: Dimensions, step: Dimensions, Intervals)
        case continuous(min: Dimensions, max: Dimensions, Intervals)
    }
    /// The intervals at one size.
    enum Intervals {
        case discrete([FrameInterval])
        case stepwise(min: FrameInterval, max: FrameInterval, step: FrameInterval)
        case continuous(min: FrameInterval, max: FrameInterval)
    }
    struct Format {
        var pixelFormat: PixelFormat
        var description: String
        var flags: UInt32 = 0
        var bytesPerPixel = 2
        var sizes: Sizes
    }
    struct Device {
        var card = "Fake Camera"
        var driver = "fakecam"
        var bus = "usb-0000:00:14.0-1"
        /// `capabilities` (V4L2_CAP_DEVICE_CAPS is added when `deviceCaps` is set).
        var capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
        var deviceCaps: UInt32? = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
        var formats: [Format] = []
        var controls: [UInt32: Int32] = [:]
        /// Controls answered through the extended-control ioctls (`VIDIOC_QUERY_EXT_CTRL`, `VIDIOC_G/S/TRY_EXT_CTRLS`),
        /// with menu items for `VIDIOC_QUERYMENU`; values start at the defaults.
        var extendedControls: [ControlDescription] = []
        /// The interval S_PARM grants (nil: whatever was asked).
        var grantedInterval: FrameInterval?
        /// The size S_FMT sets (nil: whatever was asked).
        var grantedSize: Dimensions?
        var maxBuffers = 8

        /// Whether the node captures with multi-planar buffers only.
        var isMultiplanar: Bool { (deviceCaps ?? capabilities) & UInt32(V4L2_CAP_VIDEO_CAPTURE) == 0 }
    }
    /// One result of `VIDIOC_DQBUF`.
    enum Dequeue {
        /// A filled buffer: bytes used (nil = the full image), error flag, monotonic timestamp (nil: no flag), the
        /// byte to fill the buffer with, and the driver's sequence number (0 unless given).
        case frame(
            bytesUsed: Int? = nil, error: Bool = false, timestampNs: UInt64? = nil, fill: UInt8 = 0x80,
            sequence: UInt32 = 0)
        /// A filled buffer stamped `ageNs` before the moment it is dequeued (on the monotonic clock, in whole
        /// microseconds as a `timeval` carries it), however late that is; the stamps are kept in ``State/agedStamps``.
        case frameAged(ageNs: UInt64, fill: UInt8)
        /// `EAGAIN`: nothing ready.
        case again
        /// The call fails.
        case fail(Errno)
    }

    struct State {
        var devices: [String: Device] = [:]
        var links: [(name: String, target: String)] = []
        var openFailures: [String: Errno] = [:]
        /// Errors to return, in order, the next times a call (by name) is made.
        var failures: [String: [Errno]] = [:]
        /// A failure after a number of successes, by call name.
        var delayedFailures: [String: (successes: Int, error: Errno)] = [:]
        var dequeueScript: [Dequeue] = []
        /// The timestamps `frameAged` steps were given, in order.
        var agedStamps: [UInt64] = []
        var fds: [CInt: String] = [:]
        var nextFD: CInt = 100
        var opens = 0
        var closes = 0
        var mappings: [UInt: Int] = [:]  // Addresses as integers: the state stays Sendable.
        var mmaps = 0
        var munmaps = 0
        var calls: [String] = []
        /// Buffer state of the (single) streaming fd.
        var bufferCount = 0
        var bufferLength = 0
        var queued: [Int] = []
        var streaming = false
        var format = ImageFormat(
            pixelFormat: .yuyv, dimensions: Dimensions(width: 0, height: 0), bytesPerLine: 0, sizeImage: 0)
        var interval = FrameInterval(numerator: 1, denominator: 30)
        var offsets: [Int: UInt] = [:]
        /// The sizes ENUM_FRAMEINTERVALS was asked about.
        var intervalQueries: [Dimensions] = []
        /// Current values of the extended controls (numbers; strings separately).
        var extendedValues: [UInt32: Int64] = [:]
        var extendedStrings: [UInt32: String] = [:]
        /// One-shot failures of an extended-control call: the errno and the `error_idx` to report.
        var extendedFailures: [String: (errno: Errno, index: UInt32)] = [:]
    }

    let state = Locked(State())

    init(devices: [String: Device] = [:]) {
        state.withLock { $0.devices = devices }
    }

    // MARK: - Test controls

    func script(_ entries: [Dequeue]) { state.withLock { $0.dequeueScript += entries } }
    func fail(_ call: String, with errors: Errno...) { state.withLock { $0.failures[call, default: []] += errors } }
    /// Lets `call` succeed `successes` times, then fail once with `error`.
    func failAfter(_ call: String, successes: Int, with error: Errno) {
        state.withLock { $0.delayedFailures[call] = (successes, error) }
    }
    /// Makes the next `call` (`VIDIOC_S_EXT_CTRLS`, …) fail with `error`, reporting `errorIndex` as `error_idx`.
    func failExtended(_ call: String, with error: Errno, errorIndex: UInt32) {
        state.withLock { $0.extendedFailures[call] = (error, errorIndex) }
    }
    /// The current value of extended control `id`.
    func extendedValue(_ id: UInt32) -> Int64? { state.withLock { $0.extendedValues[id] } }
    func failOpen(_ node: String, with error: Errno) { state.withLock { $0.openFailures[node] = error } }
    var calls: [String] { state.withLock { $0.calls } }
    /// The sizes `VIDIOC_ENUM_FRAMEINTERVALS` was asked about (first entry of each enumeration).
    var intervalQueries: [Dimensions] { state.withLock { $0.intervalQueries } }
    /// Adds a `/dev/v4l/by-id` link.
    func link(_ name: String, to target: String) { state.withLock { $0.links.append((name, target)) } }
    func count(_ call: String) -> Int { state.withLock { $0.calls.filter { $0 == call }.count } }

    /// Opens, closes, maps and unmaps so far: (opens, closes, mmaps, munmaps, open descriptors, live mappings).
    var accounting: (opens: Int, closes: Int, mmaps: Int, munmaps: Int, openFDs: Int, liveMappings: Int) {
        state.withLock { ($0.opens, $0.closes, $0.mmaps, $0.munmaps, $0.fds.count, $0.mappings.count) }
    }

    /// Whether every descriptor is closed and every mapping unmapped.
    var nothingLeaked: Bool {
        let a = accounting
        return a.openFDs == 0 && a.liveMappings == 0 && a.opens == a.closes && a.mmaps == a.munmaps
    }

    // MARK: - V4L2Driver

    func open(_ path: String) -> Result<CInt, Errno> {
        state.withLock { state in
            if let error = state.openFailures[path] { return .failure(error) }
            guard state.devices[path] != nil else { return .failure(.noSuchFileOrDirectory) }
            let fd = state.nextFD
            state.nextFD += 1
            state.fds[fd] = path
            state.opens += 1
            return .success(fd)
        }
    }

    func close(_ fd: CInt) {
        state.withLock { state in
            if state.fds.removeValue(forKey: fd) != nil { state.closes += 1 }
        }
    }

    func mmap(_ fd: CInt, length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, Errno> {
        state.withLock { state in
            if let error = Self.delayedFailure("mmap", &state) { return .failure(error) }
            if var queue = state.failures["mmap"], !queue.isEmpty {
                let error = queue.removeFirst()
                state.failures["mmap"] = queue
                return .failure(error)
            }
            let memory = UnsafeMutableRawPointer.allocate(byteCount: max(length, 1), alignment: 64)
            memory.initializeMemory(as: UInt8.self, repeating: 0, count: max(length, 1))
            state.mappings[UInt(bitPattern: memory)] = length
            state.offsets[offset] = UInt(bitPattern: memory)
            state.mmaps += 1
            return .success(memory)
        }
    }

    func munmap(_ address: UnsafeMutableRawPointer, length: Int) {
        let key = UInt(bitPattern: address)
        let known = state.withLock { state in
            guard state.mappings.removeValue(forKey: key) != nil else { return false }
            state.offsets = state.offsets.filter { $0.value != key }
            state.munmaps += 1
            return true
        }
        if known { address.deallocate() }
    }

    func poll(_ fd: CInt, events: Int16, timeoutMs: Int32) -> Result<Int16, Errno> {
        let ready: Int16? = state.withLock { state in
            if var queue = state.failures["poll"], !queue.isEmpty {
                let error = queue.removeFirst()
                state.failures["poll"] = queue
                if error == .interrupted { return -1 }
            }
            guard state.streaming, let next = state.dequeueScript.first else { return nil }
            if case .fail = next { return Int16(POLLIN | POLLERR) }
            return Int16(POLLIN)
        }
        if ready == -1 { return .failure(.interrupted) }
        if let ready { return .success(ready) }
        // blocking: poll() is called on the session's capture thread, which this stands in for a driver's wait on.
        usleep(UInt32(min(timeoutMs, 20)) * 1000)
        return .success(0)
    }

    func videoNodes() -> [String] { state.withLock { Array($0.devices.keys) } }

    func symbolicLinks(in directory: String) -> [(name: String, target: String)] {
        directory == "/dev/v4l/by-id" ? state.withLock { $0.links } : []
    }

    func ioctl(_ fd: CInt, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Errno? {
        let address = UInt(bitPattern: argument)  // Passed as an integer so the lock's state stays disconnected.
        return state.withLock { state in
            guard let argument = UnsafeMutableRawPointer(bitPattern: address) else { return .badAddress }
            let name = Self.names[request] ?? "ioctl(\(request))"
            state.calls.append(name)
            if let error = Self.delayedFailure(name, &state) { return error }
            if var queue = state.failures[name], !queue.isEmpty {
                let error = queue.removeFirst()
                state.failures[name] = queue
                return error
            }
            guard let node = state.fds[fd], let device = state.devices[node] else { return .badFileDescriptor }
            return Self.handle(name, argument, device, &state)
        }
    }

    static let names: [UInt: String] = [
        CV4L2_VIDIOC_QUERYCAP: "VIDIOC_QUERYCAP", CV4L2_VIDIOC_ENUM_FMT: "VIDIOC_ENUM_FMT",
        CV4L2_VIDIOC_ENUM_FRAMESIZES: "VIDIOC_ENUM_FRAMESIZES",
        CV4L2_VIDIOC_ENUM_FRAMEINTERVALS: "VIDIOC_ENUM_FRAMEINTERVALS", CV4L2_VIDIOC_S_FMT: "VIDIOC_S_FMT",
        CV4L2_VIDIOC_TRY_FMT: "VIDIOC_TRY_FMT", CV4L2_VIDIOC_G_PARM: "VIDIOC_G_PARM",
        CV4L2_VIDIOC_S_PARM: "VIDIOC_S_PARM", CV4L2_VIDIOC_REQBUFS: "VIDIOC_REQBUFS",
        CV4L2_VIDIOC_QUERYBUF: "VIDIOC_QUERYBUF", CV4L2_VIDIOC_QBUF: "VIDIOC_QBUF", CV4L2_VIDIOC_DQBUF: "VIDIOC_DQBUF",
        CV4L2_VIDIOC_STREAMON: "VIDIOC_STREAMON", CV4L2_VIDIOC_STREAMOFF: "VIDIOC_STREAMOFF",
        CV4L2_VIDIOC_QUERYCTRL: "VIDIOC_QUERYCTRL", CV4L2_VIDIOC_G_CTRL: "VIDIOC_G_CTRL",
        CV4L2_VIDIOC_S_CTRL: "VIDIOC_S_CTRL", CV4L2_VIDIOC_QUERYMENU: "VIDIOC_QUERYMENU",
        CV4L2_VIDIOC_QUERY_EXT_CTRL: "VIDIOC_QUERY_EXT_CTRL", CV4L2_VIDIOC_G_EXT_CTRLS: "VIDIOC_G_EXT_CTRLS",
        CV4L2_VIDIOC_S_EXT_CTRLS: "VIDIOC_S_EXT_CTRLS", CV4L2_VIDIOC_TRY_EXT_CTRLS: "VIDIOC_TRY_EXT_CTRLS",
    ]

    private static func handle(
        _ name: String, _ argument: UnsafeMutableRawPointer, _ device: Device, _ state: inout State
    ) -> Errno? {
        switch name {
        case "VIDIOC_QUERYCAP":
            let cap = argument.assumingMemoryBound(to: v4l2_capability.self)
            cap.pointee = v4l2_capability()
            setCString(&cap.pointee.driver, device.driver)
            setCString(&cap.pointee.card, device.card)
            setCString(&cap.pointee.bus_info, device.bus)
            cap.pointee.capabilities =
                device.capabilities | (device.deviceCaps == nil ? 0 : UInt32(V4L2_CAP_DEVICE_CAPS))
            cap.pointee.device_caps = device.deviceCaps ?? 0
        case "VIDIOC_ENUM_FMT":
            let desc = argument.assumingMemoryBound(to: v4l2_fmtdesc.self)
            guard desc.pointee.index < device.formats.count else { return .invalidArgument }
            let format = device.formats[Int(desc.pointee.index)]
            desc.pointee.pixelformat = format.pixelFormat.rawValue
            desc.pointee.flags = format.flags
            setCString(&desc.pointee.description, format.description)
        case "VIDIOC_ENUM_FRAMESIZES":
            let entry = argument.assumingMemoryBound(to: v4l2_frmsizeenum.self)
            guard let format = device.formats.first(where: { $0.pixelFormat.rawValue == entry.pointee.pixel_format })
            else { return .invalidArgument }
            let index = Int(entry.pointee.index)
            switch format.sizes {
            case .discrete(let sizes):
                guard index < sizes.count else { return .invalidArgument }
                entry.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
                entry.pointee.discrete = v4l2_frmsize_discrete(
                    width: UInt32(sizes[index].0.width), height: UInt32(sizes[index].0.height))
            case .stepwise(let min, let max, let step, _) where index == 0:
                entry.pointee.type = V4L2_FRMSIZE_TYPE_STEPWISE.rawValue
                entry.pointee.stepwise = stepwise(min, max, step)
            case .continuous(let min, let max, _) where index == 0:
                entry.pointee.type = V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue
                entry.pointee.stepwise = stepwise(min, max, Dimensions(width: 1, height: 1))
            default:
                return .invalidArgument
            }
        case "VIDIOC_ENUM_FRAMEINTERVALS":
            let entry = argument.assumingMemoryBound(to: v4l2_frmivalenum.self)
            let size = Dimensions(width: Int(entry.pointee.width), height: Int(entry.pointee.height))
            if entry.pointee.index == 0 { state.intervalQueries.append(size) }
            guard let format = device.formats.first(where: { $0.pixelFormat.rawValue == entry.pointee.pixel_format }),
                let intervals = intervals(format.sizes, at: size)
            else { return .invalidArgument }
            let index = Int(entry.pointee.index)
            switch intervals {
            case .discrete(let list):
                guard index < list.count else { return .invalidArgument }
                entry.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
                entry.pointee.discrete = list[index].fraction
            case .stepwise(let min, let max, let step) where index == 0:
                entry.pointee.type = V4L2_FRMIVAL_TYPE_STEPWISE.rawValue
                entry.pointee.stepwise = v4l2_frmival_stepwise(
                    min: min.fraction, max: max.fraction, step: step.fraction)
            case .continuous(let min, let max) where index == 0:
                entry.pointee.type = V4L2_FRMIVAL_TYPE_CONTINUOUS.rawValue
                entry.pointee.stepwise = v4l2_frmival_stepwise(
                    min: min.fraction, max: max.fraction, step: FrameInterval(numerator: 1, denominator: 1).fraction)
            default:
                return .invalidArgument
            }
        case "VIDIOC_S_FMT", "VIDIOC_TRY_FMT":
            let format = argument.assumingMemoryBound(to: v4l2_format.self)
            let multiplanar = device.isMultiplanar
            let expectedType = multiplanar ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : V4L2_BUF_TYPE_VIDEO_CAPTURE
            guard format.pointee.type == expectedType.rawValue else { return .invalidArgument }
            let requested = multiplanar ? format.pointee.fmt.pix_mp.pixelformat : format.pointee.fmt.pix.pixelformat
            guard let fake = device.formats.first(where: { $0.pixelFormat.rawValue == requested }) else {
                return .invalidArgument
            }
            let size =
                device.grantedSize
                ?? (multiplanar
                    ? Dimensions(
                        width: Int(format.pointee.fmt.pix_mp.width), height: Int(format.pointee.fmt.pix_mp.height))
                    : Dimensions(width: Int(format.pointee.fmt.pix.width), height: Int(format.pointee.fmt.pix.height)))
            let bytesPerLine = size.width * fake.bytesPerPixel + 64  // Padded rows, to check bytes per line is used.
            if multiplanar {
                format.pointee.fmt.pix_mp.width = UInt32(size.width)
                format.pointee.fmt.pix_mp.height = UInt32(size.height)
                format.pointee.fmt.pix_mp.num_planes = 1
                format.pointee.fmt.pix_mp.plane_fmt.0.bytesperline = UInt32(bytesPerLine)
                format.pointee.fmt.pix_mp.plane_fmt.0.sizeimage = UInt32(bytesPerLine * size.height)
            } else {
                format.pointee.fmt.pix.width = UInt32(size.width)
                format.pointee.fmt.pix.height = UInt32(size.height)
                format.pointee.fmt.pix.bytesperline = UInt32(bytesPerLine)
                format.pointee.fmt.pix.sizeimage = UInt32(bytesPerLine * size.height)
            }
            if name == "VIDIOC_S_FMT" {
                state.format = ImageFormat(
                    pixelFormat: fake.pixelFormat, dimensions: size, bytesPerLine: bytesPerLine,
                    sizeImage: bytesPerLine * size.height)
            }
        case "VIDIOC_G_PARM", "VIDIOC_S_PARM":
            let parm = argument.assumingMemoryBound(to: v4l2_streamparm.self)
            if name == "VIDIOC_S_PARM" {
                state.interval = device.grantedInterval ?? FrameInterval(parm.pointee.parm.capture.timeperframe)
            }
            parm.pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
            parm.pointee.parm.capture.timeperframe = state.interval.fraction
        case "VIDIOC_REQBUFS":
            let request = argument.assumingMemoryBound(to: v4l2_requestbuffers.self)
            guard request.pointee.memory == V4L2_MEMORY_MMAP.rawValue else { return .invalidArgument }
            let count = min(Int(request.pointee.count), device.maxBuffers)
            state.bufferCount = count
            state.bufferLength = state.format.sizeImage
            state.queued = []
            request.pointee.count = UInt32(count)
        case "VIDIOC_QUERYBUF":
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            guard buffer.pointee.index < state.bufferCount else { return .invalidArgument }
            if device.isMultiplanar {
                guard buffer.pointee.length == 1, let plane = buffer.pointee.m.planes else { return .invalidArgument }
                plane.pointee.m.mem_offset = buffer.pointee.index * 0x100000
                plane.pointee.length = UInt32(state.bufferLength)
            } else {
                buffer.pointee.m.offset = buffer.pointee.index * 0x100000
                buffer.pointee.length = UInt32(state.bufferLength)
            }
        case "VIDIOC_QBUF":
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            let index = Int(buffer.pointee.index)
            guard index < state.bufferCount, !state.queued.contains(index) else { return .invalidArgument }
            state.queued.append(index)
        case "VIDIOC_DQBUF":
            guard state.streaming else { return .invalidArgument }
            guard var next = state.dequeueScript.first else { return .resourceTemporarilyUnavailable }
            if case .frameAged(let ageNs, let fill) = next {
                let stamp = (MonotonicClock.nowNs() - ageNs) / 1000 * 1000
                next = .frame(timestampNs: stamp, fill: fill)
                state.dequeueScript[0] = next
                state.agedStamps.append(stamp)
            }
            switch next {
            case .frameAged:
                return .invalidArgument  // Replaced just above.
            case .again:
                state.dequeueScript.removeFirst()
                return .resourceTemporarilyUnavailable
            case .fail(let error):
                state.dequeueScript.removeFirst()
                return error
            case .frame(let bytesUsed, let error, let timestampNs, let fill, let sequence):
                guard !state.queued.isEmpty else { return .resourceTemporarilyUnavailable }
                state.dequeueScript.removeFirst()
                let index = state.queued.removeFirst()
                let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
                buffer.pointee.index = UInt32(index)
                buffer.pointee.sequence = sequence
                if device.isMultiplanar {
                    guard buffer.pointee.length == 1, let plane = buffer.pointee.m.planes else {
                        return .invalidArgument
                    }
                    plane.pointee.bytesused = UInt32(bytesUsed ?? state.bufferLength)
                } else {
                    buffer.pointee.bytesused = UInt32(bytesUsed ?? state.bufferLength)
                }
                buffer.pointee.flags =
                    (error ? UInt32(V4L2_BUF_FLAG_ERROR) : 0)
                    | (timestampNs == nil ? 0 : UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC))
                if let timestampNs {
                    buffer.pointee.timestamp = timeval(
                        tv_sec: Int(timestampNs / 1_000_000_000), tv_usec: Int(timestampNs % 1_000_000_000 / 1000))
                }
                if let memory = state.offsets[index * 0x100000].flatMap(UnsafeMutableRawPointer.init(bitPattern:)) {
                    memory.initializeMemory(as: UInt8.self, repeating: fill, count: state.bufferLength)
                }
            }
        case "VIDIOC_STREAMON":
            state.streaming = true
        case "VIDIOC_STREAMOFF":
            state.streaming = false
            state.queued = []
        case "VIDIOC_QUERYCTRL":
            let query = argument.assumingMemoryBound(to: v4l2_queryctrl.self)
            guard let value = device.controls[query.pointee.id] else { return .invalidArgument }
            query.pointee.type = V4L2_CTRL_TYPE_INTEGER.rawValue
            query.pointee.default_value = value
            setCString(&query.pointee.name, "Control \(query.pointee.id)")
        case "VIDIOC_G_CTRL":
            let control = argument.assumingMemoryBound(to: v4l2_control.self)
            guard let value = device.controls[control.pointee.id] else { return .invalidArgument }
            control.pointee.value = value
        case "VIDIOC_QUERY_EXT_CTRL":
            let query = argument.assumingMemoryBound(to: v4l2_query_ext_ctrl.self)
            let requested = query.pointee.id
            let next = CV4L2_CTRL_FLAG_NEXT_CTRL | CV4L2_CTRL_FLAG_NEXT_COMPOUND
            let base = requested & ~next
            let found =
                requested & next != 0
                ? device.extendedControls.filter { $0.id > base }.min { $0.id < $1.id }
                : device.extendedControls.first { $0.id == base }
            guard let control = found else { return .invalidArgument }
            var answer = v4l2_query_ext_ctrl()
            answer.id = control.id
            answer.type = control.type.rawValue
            setCString(&answer.name, control.name)
            answer.minimum = control.minimum
            answer.maximum = control.maximum
            answer.step = control.step
            answer.default_value = control.defaultValue
            answer.flags = control.flags.rawValue
            answer.elem_size = control.elementSize
            answer.elems = control.elementCount
            answer.nr_of_dims = UInt32(control.dimensions.count)
            withUnsafeMutableBytes(of: &answer.dims) { dims in
                for (index, size) in control.dimensions.prefix(4).enumerated() {
                    dims.storeBytes(of: size, toByteOffset: index * 4, as: UInt32.self)
                }
            }
            query.pointee = answer
        case "VIDIOC_QUERYMENU":
            let menu = argument.assumingMemoryBound(to: v4l2_querymenu.self)
            guard let control = device.extendedControls.first(where: { $0.id == menu.pointee.id }),
                let item = control.menuItem(Int64(menu.pointee.index))
            else { return .invalidArgument }
            if control.type == .menu {
                setCString(&menu.pointee.name, item.name ?? "")
            } else {
                menu.pointee.value = item.value ?? 0
            }
        case "VIDIOC_G_EXT_CTRLS", "VIDIOC_S_EXT_CTRLS", "VIDIOC_TRY_EXT_CTRLS":
            return extendedControls(name, argument.assumingMemoryBound(to: v4l2_ext_controls.self), device, &state)
        default:
            return .inappropriateIOCTLForDevice
        }
        return nil
    }

    /// G/S/TRY_EXT_CTRLS on the packed `v4l2_ext_control` array, read and written as bytes at CV4L2's offsets.
    private static func extendedControls(
        _ name: String, _ header: UnsafeMutablePointer<v4l2_ext_controls>, _ device: Device, _ state: inout State
    ) -> Errno? {
        if let failure = state.extendedFailures.removeValue(forKey: name) {
            header.pointee.error_idx = failure.index
            return failure.errno
        }
        let count = Int(header.pointee.count)
        guard let array = UnsafeMutableRawPointer(header.pointee.controls) else { return .badAddress }
        let stride = Int(CV4L2_EXT_CONTROL_SIZE)
        var pending: [(UInt32, Int64, String?)] = []
        for index in 0..<count {
            let base = index * stride
            let id = array.loadUnaligned(fromByteOffset: base + Int(CV4L2_EXT_CONTROL_ID_OFFSET), as: UInt32.self)
            let valueOffset = base + Int(CV4L2_EXT_CONTROL_VALUE_OFFSET)
            guard let control = device.extendedControls.first(where: { $0.id == id }) else {
                header.pointee.error_idx = name == "VIDIOC_G_EXT_CTRLS" ? UInt32(index) : UInt32(count)
                return .invalidArgument
            }
            let isString = control.type == .string
            if name == "VIDIOC_G_EXT_CTRLS" {
                if isString {
                    let size = Int(
                        array.loadUnaligned(fromByteOffset: base + Int(CV4L2_EXT_CONTROL_SIZE_OFFSET), as: UInt32.self))
                    let pointer = array.loadUnaligned(fromByteOffset: valueOffset, as: UInt.self)
                    guard let payload = UnsafeMutableRawPointer(bitPattern: pointer) else { return .badAddress }
                    let bytes = Array((state.extendedStrings[id] ?? "").utf8.prefix(max(0, size - 1))) + [0]
                    payload.copyMemory(from: bytes, byteCount: bytes.count)
                } else {
                    let value = state.extendedValues[id] ?? control.defaultValue
                    if control.type == .integer64 {
                        array.storeBytes(of: value, toByteOffset: valueOffset, as: Int64.self)
                    } else {
                        array.storeBytes(
                            of: Int32(truncatingIfNeeded: value), toByteOffset: valueOffset, as: Int32.self)
                    }
                }
                continue
            }
            if control.flags.contains(.readOnly) {
                header.pointee.error_idx = name == "VIDIOC_TRY_EXT_CTRLS" ? UInt32(index) : UInt32(count)
                return .permissionDenied
            }
            if isString {
                let pointer = array.loadUnaligned(fromByteOffset: valueOffset, as: UInt.self)
                guard let payload = UnsafeRawPointer(bitPattern: pointer) else { return .badAddress }
                pending.append((id, 0, String(cString: payload.assumingMemoryBound(to: CChar.self))))
            } else {
                let value =
                    control.type == .integer64
                    ? array.loadUnaligned(fromByteOffset: valueOffset, as: Int64.self)
                    : Int64(array.loadUnaligned(fromByteOffset: valueOffset, as: Int32.self))
                pending.append((id, value, nil))
            }
        }
        if name == "VIDIOC_S_EXT_CTRLS" {
            for (id, value, text) in pending {
                if let text { state.extendedStrings[id] = text } else { state.extendedValues[id] = value }
            }
        }
        return nil
    }

    private static func delayedFailure(_ call: String, _ state: inout State) -> Errno? {
        guard let pending = state.delayedFailures[call] else { return nil }
        if pending.successes > 0 {
            state.delayedFailures[call] = (pending.successes - 1, pending.error)
            return nil
        }
        state.delayedFailures[call] = nil
        return pending.error
    }

    private static func stepwise(_ min: Dimensions, _ max: Dimensions, _ step: Dimensions) -> v4l2_frmsize_stepwise {
        v4l2_frmsize_stepwise(
            min_width: UInt32(min.width), max_width: UInt32(max.width), step_width: UInt32(step.width),
            min_height: UInt32(min.height), max_height: UInt32(max.height), step_height: UInt32(step.height))
    }

    private static func intervals(_ sizes: Sizes, at size: Dimensions) -> Intervals? {
        switch sizes {
        case .discrete(let list): list.first { $0.0 == size }?.1
        case .stepwise(_, let max, _, let intervals), .continuous(_, let max, let intervals):
            size == max ? intervals : nil
        }
    }
}

/// Copies `text` into a fixed-size C `char`/`__u8` array field, NUL-terminated and truncated to fit.
func setCString<T>(_ field: inout T, _ text: String) {
    withUnsafeMutableBytes(of: &field) { bytes in
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        for (index, byte) in text.utf8.prefix(max(0, bytes.count - 1)).enumerated() { bytes[index] = byte }
    }
}
