import CaptureCore

/// The exit status of `capturer-probe`, one per class of failure.
struct ExitStatus: RawRepresentable, Hashable, Sendable {
    var rawValue: Int32

    static let success = ExitStatus(rawValue: 0)
    /// Any other failure.
    static let failure = ExitStatus(rawValue: 1)
    /// Bad arguments (the argument parser's own status, `EX_USAGE`).
    static let usage = ExitStatus(rawValue: 64)
    /// No such device, file or id.
    static let deviceNotFound = ExitStatus(rawValue: 3)
    /// The path is not a video-capture device (a regular file, `/dev/null`, a metadata node).
    static let notACaptureDevice = ExitStatus(rawValue: 4)
    /// The device is in use by another process.
    static let deviceBusy = ExitStatus(rawValue: 5)
    /// Not allowed to open the device or file.
    static let permissionDenied = ExitStatus(rawValue: 6)
    /// A malformed format-list dump or media file.
    static let malformedInput = ExitStatus(rawValue: 7)
    /// The output file cannot be written.
    static let outputNotWritable = ExitStatus(rawValue: 8)
    /// Capturing, encoding or decoding failed once started.
    static let captureFailed = ExitStatus(rawValue: 9)
    /// The device offers no format the capturer can use.
    static let noUsableFormat = ExitStatus(rawValue: 10)
    /// A malformed or unreachable network address (`send --to`).
    static let badAddress = ExitStatus(rawValue: 11)
    /// The UDP port is in use by another socket (`receive --port`).
    static let portInUse = ExitStatus(rawValue: 12)
    /// A malformed session description (SDP) file.
    static let malformedSessionDescription = ExitStatus(rawValue: 13)
    /// SRTP: a malformed key, or every packet failed authentication (the wrong key).
    static let srtpKeyRejected = ExitStatus(rawValue: 14)
    /// `controls`: no control has that name or id.
    static let unknownControl = ExitStatus(rawValue: 15)
    /// `controls`: the value is out of range, off the step, or not a value of that control.
    static let invalidControlValue = ExitStatus(rawValue: 16)
    /// `controls`: the control cannot be written (read-only, inactive, grabbed) or read (write-only) now.
    static let controlNotWritable = ExitStatus(rawValue: 17)
    /// `publish`: the WHIP endpoint refused the offer (4xx/5xx), could not be reached, or answered unusably.
    static let signallingFailed = ExitStatus(rawValue: 18)
    /// `publish`: ICE found no path or DTLS failed (a certificate that does not match its fingerprint, timeout).
    static let transportFailed = ExitStatus(rawValue: 19)

    /// The status for a ``CaptureError`` code.
    init(_ code: CaptureError.Code) {
        switch code {
        case .deviceNotFound: self = .deviceNotFound
        case .notACaptureDevice: self = .notACaptureDevice
        case .deviceBusy: self = .deviceBusy
        case .permissionDenied: self = .permissionDenied
        case .malformedFormatList, .malformedControlList, .malformedFile: self = .malformedInput
        case .noUsableFormat, .formatNotSupported: self = .noUsableFormat
        case .invalidArgument: self = .usage
        default: self = .captureFailed
        }
    }

    init(rawValue: Int32) { self.rawValue = rawValue }

    /// What to do about `error`: the generic advice for its code, unless the error already says it (a busy node whose
    /// holders are named, a permission error that names the node's group).
    static func hint(for error: CaptureError) -> String? {
        switch error.code {
        case .deviceBusy where !error.holders.isEmpty:
            "stop " + error.holders.map(\.description).joined(separator: ", ") + " and retry"
        case .permissionDenied where error.access != nil: nil
        default: hint(for: error.code)
        }
    }

    /// What to do about an error with `code`.
    static func hint(for code: CaptureError.Code) -> String? {
        switch code {
        case .deviceNotFound: "run 'capturer-probe list' to see the cameras"
        case .notACaptureDevice:
            "pass a /dev/videoN capture node, an id from 'capturer-probe list', 'synthetic' or a .y4m file"
        case .deviceBusy: "another program is using the camera; close it and retry"
        case .permissionDenied: "add your user to the 'video' group (sudo usermod -aG video $USER) and log in again"
        case .malformedFormatList: "pass the unmodified output of 'v4l2-ctl --list-formats-ext'"
        case .malformedControlList: "pass the unmodified output of 'v4l2-ctl --list-ctrls-menus'"
        case .malformedFile: "check the file is complete and in the expected format"
        case .noUsableFormat, .formatNotSupported: "see 'capturer-probe formats' for what the device offers"
        default: nil
        }
    }

    /// The table printed in `--help` and the README.
    static let table = """
          0  success
          1  other failure
          3  device not found (no such node, id or file)
          4  not a capture device (a regular file, /dev/null, a metadata node)
          5  device busy (another program is capturing)
          6  permission denied (not in the 'video' group)
          7  malformed input file (format-list dump, Y4M file)
          8  output file not writable (checked before capturing)
          9  capture, encoding or decoding failed
         10  no usable format on the device
         11  bad network address (malformed or unreachable HOST:PORT)
         12  UDP port in use
         13  malformed session description (SDP) file
         14  SRTP key rejected (malformed, or packets failed authentication: the wrong key)
         15  unknown control name or id (controls)
         16  invalid control value: out of range, off the step, or not a value of the control (controls)
         17  control not writable or readable now: read-only, write-only, inactive, grabbed (controls)
         18  WHIP endpoint refused (4xx/5xx), unreachable, or answered unusable SDP (publish)
         19  ICE or DTLS failed, e.g. a certificate that does not match its fingerprint (publish)
         64  usage error (bad or missing argument, e.g. --target 0x0)
        """
}

/// A failure of the tool itself (not of the capture library), with its exit status.
struct ProbeFailure: Error {
    var status: ExitStatus
    var message: String
    var hint: String?
}
