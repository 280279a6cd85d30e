/// How a ``SendPipeline`` adapts the encoded resolution to CPU load (WebRTC's `CpuOveruseOptions` and the
/// resolution steps of its `VideoStreamAdapter`).
///
/// Usage is encode time ÷ frame interval, averaged over a window of ``windowFrames`` frames. A window above
/// ``highThreshold`` is an overuse window, one below ``lowThreshold`` an underuse window. After
/// ``overuseWindows`` consecutive overuse windows the resolution steps down; after ``underuseWindows`` consecutive
/// underuse windows it steps up again. When a step down follows a step up within ``oscillationWindows`` windows,
/// the number of underuse windows needed doubles (up to ``maxUnderuseWindows``), so the resolution does not oscillate.
public struct OveruseConfiguration: Sendable, Hashable, Codable {
    /// Whether CPU-overuse adaptation runs at all.
    public var enabled: Bool
    /// The usage (fraction of the frame interval spent encoding) above which a window counts as overuse.
    public var highThreshold: Double
    /// The usage below which a window counts as underuse.
    public var lowThreshold: Double
    /// Frames per measurement window.
    public var windowFrames: Int
    /// Consecutive overuse windows before stepping down.
    public var overuseWindows: Int
    /// Consecutive underuse windows before stepping up (doubled after an oscillation).
    public var underuseWindows: Int
    /// The most underuse windows the back-off may require.
    public var maxUnderuseWindows: Int
    /// A step down within this many windows of a step up counts as an oscillation.
    public var oscillationWindows: Int
    /// The fewest pixels a step down may produce (WebRTC: 320x180).
    public var minimumPixels: Int

    /// Creates a configuration; the defaults follow WebRTC (85 % / 50 % of the frame interval, 320x180 minimum).
    public init(
        enabled: Bool = true, highThreshold: Double = 0.85, lowThreshold: Double = 0.50, windowFrames: Int = 30,
        overuseWindows: Int = 2, underuseWindows: Int = 3, maxUnderuseWindows: Int = 24, oscillationWindows: Int = 10,
        minimumPixels: Int = 320 * 180
    ) {
        self.enabled = enabled
        self.highThreshold = highThreshold
        self.lowThreshold = lowThreshold
        self.windowFrames = windowFrames
        self.overuseWindows = overuseWindows
        self.underuseWindows = underuseWindows
        self.maxUnderuseWindows = maxUnderuseWindows
        self.oscillationWindows = oscillationWindows
        self.minimumPixels = minimumPixels
    }

    /// The scale of each resolution level, per side: level 0 is full size, then 3/4, 1/2, 3/8, 1/4, … (WebRTC's
    /// alternating 3/4 and 2/3 steps).
    public static func scale(level: Int) -> (numerator: Int, denominator: Int) {
        let level = max(0, min(level, 20))
        let halvings = level / 2
        return level % 2 == 0 ? (1, 1 << halvings) : (3, 4 << halvings)
    }
}
