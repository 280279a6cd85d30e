/// The time between two frames, as a fraction of a second (`struct v4l2_fract`).
public struct FrameInterval: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Numerator, in seconds.
    public var numerator: UInt32
    /// Denominator.
    public var denominator: UInt32

    /// Creates an interval of `numerator / denominator` seconds.
    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The interval for a whole number of frames per second (`1/fps`).
    public init(fps: UInt32) { self.init(numerator: 1, denominator: fps) }

    /// The interval in seconds; 0 when the denominator is 0.
    public var seconds: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }

    /// Frames per second (`denominator / numerator`); 0 when the numerator is 0.
    public var fps: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }

    /// `"1/30"`.
    public var description: String { "\(numerator)/\(denominator)" }
}

/// The frame intervals a device offers for one pixel format and size, as `VIDIOC_ENUM_FRAMEINTERVALS` reports them.
public enum FrameRates: Sendable, Hashable, Codable {
    /// A list of intervals, in the device's order.
    case discrete([FrameInterval])
    /// Any interval from `min` to `max` in steps of `step`.
    case stepwise(min: FrameInterval, max: FrameInterval, step: FrameInterval)
    /// Any interval from `min` to `max`.
    case continuous(min: FrameInterval, max: FrameInterval)

    /// No rates reported (an empty discrete list).
    public static let none = FrameRates.discrete([])

    /// The highest rate offered, in frames per second, or `nil` when none is listed.
    public var maximumFPS: Double? {
        switch self {
        case .discrete(let intervals): intervals.map(\.fps).max()
        case .stepwise(let min, _, _), .continuous(let min, _): min.fps
        }
    }

    /// The lowest rate offered, in frames per second, or `nil` when none is listed.
    public var minimumFPS: Double? {
        switch self {
        case .discrete(let intervals): intervals.map(\.fps).min()
        case .stepwise(_, let max, _), .continuous(_, let max): max.fps
        }
    }
}
