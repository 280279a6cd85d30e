public import SystemPackage

/// An error from capture: what went wrong, on which device, in which call, and the system error where there is one.
///
/// Match on ``code``: `catch let error as CaptureError where error.code == .deviceBusy`.
public struct CaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; switch with a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case deviceNotFound, notACaptureDevice, permissionDenied, deviceBusy, bandwidthExceeded
            case deviceDisconnected, noUsableFormat, formatNotSupported, invalidArgument, invalidState
            case streamStalled, malformedFormatList, malformedControlList, malformedFile, endOfStream, ioFailure,
                conversionFailed
            case driverError
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No device with that path or id exists.
        public static let deviceNotFound = Code(.deviceNotFound)
        /// The node exists but is not a video-capture device with streaming I/O.
        public static let notACaptureDevice = Code(.notACaptureDevice)
        /// The process may not open the device (on Linux: add the user to the `video` group).
        public static let permissionDenied = Code(.permissionDenied)
        /// Another process is using the device (`EBUSY`).
        public static let deviceBusy = Code(.deviceBusy)
        /// Not enough USB bandwidth for this format (`ENOSPC` at `VIDIOC_STREAMON`).
        public static let bandwidthExceeded = Code(.bandwidthExceeded)
        /// The device went away while streaming (`ENODEV`/`EIO`).
        public static let deviceDisconnected = Code(.deviceDisconnected)
        /// The device offers no format the capturer can convert.
        public static let noUsableFormat = Code(.noUsableFormat)
        /// The requested format is not one the device offers or the driver accepts.
        public static let formatNotSupported = Code(.formatNotSupported)
        /// An argument is out of range.
        public static let invalidArgument = Code(.invalidArgument)
        /// The call is not allowed in the capturer's current state.
        public static let invalidState = Code(.invalidState)
        /// No frame arrived for several frame intervals, even after restarting the stream.
        public static let streamStalled = Code(.streamStalled)
        /// A `v4l2-ctl --list-formats-ext` dump could not be parsed.
        public static let malformedFormatList = Code(.malformedFormatList)
        /// A `v4l2-ctl --list-ctrls-menus` dump could not be parsed.
        public static let malformedControlList = Code(.malformedControlList)
        /// A media file (Y4M, IVF) is malformed or truncated.
        public static let malformedFile = Code(.malformedFile)
        /// A file camera reached the end of its file.
        public static let endOfStream = Code(.endOfStream)
        /// Reading or writing a file or device failed.
        public static let ioFailure = Code(.ioFailure)
        /// A frame could not be converted.
        public static let conversionFailed = Code(.conversionFailed)
        /// The driver failed a call for another reason.
        public static let driverError = Code(.driverError)

        /// The code's name, for example `deviceBusy`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in a sentence.
    public var message: String
    /// The device node, id or file concerned.
    public var device: String?
    /// The system call or ioctl that failed, for example `VIDIOC_S_FMT`.
    public var call: String?
    /// The system error, where there is one.
    public var errno: Errno?
    /// For ``Code-swift.struct/deviceBusy``: the processes that hold the device node open, as far as this process
    /// may see (`/proc/<pid>/fd` of another user's process is unreadable unless running as root); empty when none
    /// was found.
    public var holders: [DeviceHolder]
    /// For ``Code-swift.struct/permissionDenied``: who may open the node, from its owner, group and mode.
    public var access: DeviceAccess?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, device: String? = nil, call: String? = nil, errno: Errno? = nil,
        holders: [DeviceHolder] = [], access: DeviceAccess? = nil
    ) {
        self.code = code
        self.message = message
        self.device = device
        self.call = call
        self.errno = errno
        self.holders = holders
        self.access = access
    }

    /// `"<device>: <message> (<call>: <errno>)"`.
    public var description: String {
        var text = device.map { "\($0): \(message)" } ?? message
        switch (call, errno) {
        case let (call?, errno?): text += " (\(call): \(errno))"
        case let (call?, nil): text += " (\(call))"
        case let (nil, errno?): text += " (\(errno))"
        case (nil, nil): break
        }
        return text
    }
}
