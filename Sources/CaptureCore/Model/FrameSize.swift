/// The frame sizes a device offers for one pixel format, as `VIDIOC_ENUM_FRAMESIZES` reports them.
public enum FrameSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// One size.
    case discrete(Dimensions)
    /// Any size from `min` to `max` whose width and height are on a grid of `step` counted from `min`.
    case stepwise(min: Dimensions, max: Dimensions, step: Dimensions)
    /// Any size from `min` to `max`.
    case continuous(min: Dimensions, max: Dimensions)

    /// The size in this entry nearest to `target`: each side is clamped into the range, then snapped to the
    /// step grid counted from the minimum, a tie going to the smaller. A discrete entry returns its size.
    public func nearest(to target: Dimensions) -> Dimensions {
        switch self {
        case .discrete(let size):
            return size
        case .continuous(let min, let max):
            return Dimensions(
                width: Self.snap(target.width, min: min.width, max: max.width, step: 1),
                height: Self.snap(target.height, min: min.height, max: max.height, step: 1))
        case .stepwise(let min, let max, let step):
            return Dimensions(
                width: Self.snap(target.width, min: min.width, max: max.width, step: step.width),
                height: Self.snap(target.height, min: min.height, max: max.height, step: step.height))
        }
    }

    /// Whether `size` is one of the sizes this entry offers.
    public func contains(_ size: Dimensions) -> Bool {
        switch self {
        case .discrete(let only):
            return only == size
        case .continuous(let min, let max):
            return (min.width...max.width).contains(size.width) && (min.height...max.height).contains(size.height)
        case .stepwise(let min, let max, let step):
            guard (min.width...max.width).contains(size.width), (min.height...max.height).contains(size.height)
            else { return false }
            return (step.width <= 0 || (size.width - min.width) % step.width == 0)
                && (step.height <= 0 || (size.height - min.height) % step.height == 0)
        }
    }

    /// The largest size offered.
    public var maximum: Dimensions {
        switch self {
        case .discrete(let size): size
        case .stepwise(_, let max, _), .continuous(_, let max): max
        }
    }

    /// `"640x480"`, `"16x16 - 1920x1080 with step 2/2"` or `"16x16 - 1920x1080"`.
    public var description: String {
        switch self {
        case .discrete(let size): "\(size)"
        case .stepwise(let min, let max, let step): "\(min) - \(max) with step \(step.width)/\(step.height)"
        case .continuous(let min, let max): "\(min) - \(max)"
        }
    }

    /// Clamps `value` into `min...max`, then snaps it to the grid `min + k*step`; a tie goes to the smaller.
    static func snap(_ value: Int, min: Int, max: Int, step: Int) -> Int {
        guard max >= min else { return min }
        let clamped = Swift.min(Swift.max(value, min), max)
        guard step > 1 else { return clamped }
        let below = min + (clamped - min) / step * step
        let above = below + step
        if above > max || clamped - below <= above - clamped { return below }
        return above
    }
}
