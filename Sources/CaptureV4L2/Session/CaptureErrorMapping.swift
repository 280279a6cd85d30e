import CaptureCore
import SystemPackage

extension Errno {
    /// `ENODEV` (swift-system spells it after its BSD message, "Operation not supported by device").
    static var noDevice: Errno { .operationNotSupportedByDevice }
}

extension CaptureError {
    /// The capture error a failed V4L2 call means, naming `device` and the call.
    ///
    /// `ENOENT`/`ENXIO`/`ENODEV` at `open` → not found; `ENOTTY`/`EISDIR` at `open` (a regular file, a directory,
    /// another kind of device) → not a capture device; `EACCES`/`EPERM` → permission denied (with the fix);
    /// `EBUSY` → busy; `ENOSPC` at `VIDIOC_STREAMON` → USB bandwidth; `EINVAL` at `VIDIOC_S_FMT` or
    /// `VIDIOC_TRY_FMT` →
    /// format not supported; `EINVAL`/`ENOTTY` at `VIDIOC_QUERYCAP` → not a V4L2 device; `ENODEV`/`EIO` elsewhere →
    /// disconnected; anything else → a driver error.
    ///
    /// A busy node's error names the processes holding it (``holders``, from `/proc/*/fd`): "in use by pid 1234
    /// (chromium)"; a permission error says who may open the node (``access``, from its owner, group and mode) and
    /// which group to join. Both look at the node named by `device` as it is when the error is made, so callers make
    /// the error after closing their own descriptor on it.
    init(_ error: V4L2Error, device: String) {
        let errno = error.errno
        let code: Code
        let message: String
        switch (error.call, errno) {
        case ("open", .noSuchFileOrDirectory), ("open", .noSuchAddressOrDevice), ("open", .noDevice):
            (code, message) = (.deviceNotFound, "no such video device")
        case (_, .permissionDenied), (_, .notPermitted):
            let access = device.hasPrefix("/") ? NodeDiagnosis.access(of: device) : nil
            self.init(
                .permissionDenied, Self.permissionMessage(access), device: device, call: error.call, errno: errno,
                access: access)
            return
        case (_, .resourceBusy):
            let holders = device.hasPrefix("/") ? NodeDiagnosis.holders(of: device) : []
            self.init(
                .deviceBusy, Self.busyMessage(holders), device: device, call: error.call, errno: errno,
                holders: holders)
            return
        case ("VIDIOC_STREAMON", .noSpace):
            (code, message) = (
                .bandwidthExceeded,
                "not enough USB bandwidth for this format: choose a smaller size, a lower rate, or a compressed format"
            )
        case ("VIDIOC_S_FMT", .invalidArgument), ("VIDIOC_TRY_FMT", .invalidArgument):
            (code, message) = (.formatNotSupported, "the driver rejected the format")
        case ("open", .inappropriateIOCTLForDevice), ("open", .isDirectory):
            (code, message) = (.notACaptureDevice, "not a video4linux device node")
        case ("VIDIOC_QUERYCAP", .invalidArgument), ("VIDIOC_QUERYCAP", .inappropriateIOCTLForDevice):
            (code, message) = (.notACaptureDevice, "not a V4L2 device")
        case (_, .noDevice), (_, .ioError):
            (code, message) = (.deviceDisconnected, "the device was disconnected")
        default:
            (code, message) = (.driverError, "\(error.call) failed")
        }
        self.init(code, message, device: device, call: error.call, errno: errno)
    }

    /// `"the device is in use by pid 1234 (chromium)"`, or without a pid when none could be found.
    static func busyMessage(_ holders: [DeviceHolder]) -> String {
        guard !holders.isEmpty else {
            return "the device is in use by another process (none of the processes this user may inspect holds it)"
        }
        return "the device is in use by " + holders.map(\.description).joined(separator: ", ")
    }

    /// `"permission denied: the node belongs to group 'video' (gid 44), mode 660: join group 'video' (…)"`.
    static func permissionMessage(_ access: DeviceAccess?) -> String {
        guard let access else {
            return
                "permission denied: add the user to the 'video' group (sudo usermod -aG video $USER) and log in again"
        }
        return "permission denied: the node belongs to group '\(access.groupDisplayName)' (gid \(access.gid)), mode "
            + String(access.mode, radix: 8) + ": " + access.remedy
    }
}
