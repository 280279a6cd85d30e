public import SystemPackage

/// Why a control could not be read or written.
///
/// Values outside a control's range or off its step are refused, never clamped: ``outOfRange(control:value:range:nearest:)``
/// and ``offStep(control:value:range:nearest:)`` carry the valid range and the nearest valid value, so a caller that
/// wants clamping can retry with `nearest` deliberately.
public enum ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device has no control with this name or id.
    case noSuchControl(String)
    /// The value is below the minimum or above the maximum.
    case outOfRange(control: String, value: Int64, range: ControlRange, nearest: Int64)
    /// The value is within the range but not a whole number of steps above the minimum.
    case offStep(control: String, value: Int64, range: ControlRange, nearest: Int64)
    /// The value does not fit the control at all (text for a number, a menu index the driver does not list, a
    /// string of the wrong length, bits outside a bitmask).
    case invalidValue(control: String, value: String, reason: String)
    /// The control can only be read.
    case readOnly(String)
    /// The control can only be written (buttons, write-only controls).
    case writeOnly(String)
    /// The control has no effect now (its automatic mode is on); turn the automatic mode off first.
    case inactive(String)
    /// The control cannot change now, typically while the device streams (`EBUSY`, `V4L2_CTRL_FLAG_GRABBED`).
    case grabbed(String)
    /// The device or backend does not offer this (no controls at all, or not this facade feature).
    case notSupported(String)
    /// The driver failed the call: which control (when the driver says), which call, and the system error.
    case failed(control: String?, call: String, errno: Errno)
    /// The device could not be opened.
    case device(CaptureError)

    /// The control concerned, where there is one.
    public var control: String? {
        switch self {
        case .noSuchControl(let name), .readOnly(let name), .writeOnly(let name), .inactive(let name),
            .grabbed(let name):
            name
        case .outOfRange(let control, _, _, _), .offStep(let control, _, _, _), .invalidValue(let control, _, _):
            control
        case .failed(let control, _, _): control
        case .notSupported, .device: nil
        }
    }

    /// A sentence saying what went wrong and what is allowed.
    public var description: String {
        switch self {
        case .noSuchControl(let name): "no control named '\(name)'"
        case .outOfRange(let control, let value, let range, let nearest):
            "\(control): \(value) is out of range (\(range)); the nearest valid value is \(nearest)"
        case .offStep(let control, let value, let range, let nearest):
            "\(control): \(value) is not on the step (\(range)); the nearest valid value is \(nearest)"
        case .invalidValue(let control, let value, let reason): "\(control): invalid value '\(value)': \(reason)"
        case .readOnly(let name): "\(name) is read-only"
        case .writeOnly(let name): "\(name) is write-only (it has no value to read)"
        case .inactive(let name): "\(name) is inactive: it has no effect now (for example, its automatic mode is on)"
        case .grabbed(let name): "\(name) cannot change now (the device is streaming or the control is grabbed)"
        case .notSupported(let what): what
        case .failed(let control, let call, let errno):
            (control.map { "\($0): " } ?? "") + "\(call) failed: \(errno) (\(errno.rawValue))"
        case .device(let error): error.description
        }
    }
}
