/// A width and height in pixels.
public struct Dimensions: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates dimensions from a width and a height.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `"WIDTHxHEIGHT"` (for example `"1280x720"`). Returns `nil` for anything else, including
    /// zero or negative sides.
    public init?(parsing text: some StringProtocol) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    /// `"WIDTHxHEIGHT"`.
    public var description: String { "\(width)x\(height)" }

    /// Width × height.
    public var area: Int { width * height }

    /// The L1 distance `|Δw| + |Δh|` to another size (WebRTC's ARDCaptureController metric).
    public func distance(to other: Dimensions) -> Int {
        abs(width - other.width) + abs(height - other.height)
    }

    /// The dimensions a renderer sees after applying `rotation`: width and height swap for 90 and 270.
    public func applying(_ rotation: VideoRotation) -> Dimensions {
        switch rotation {
        case .degrees0, .degrees180: self
        case .degrees90, .degrees270: Dimensions(width: height, height: width)
        }
    }
}
