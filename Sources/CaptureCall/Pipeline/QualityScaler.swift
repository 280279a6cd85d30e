/// Why the sent video is below the requested resolution or frame rate (W3C webrtc-stats
/// `RTCQualityLimitationReason`).
public enum QualityLimitationReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing limits the video.
    case none
    /// The bandwidth estimate (or the encoder's quantizer at that rate) limits it.
    case bandwidth
    /// Encoding takes too much of the frame interval.
    case cpu
    /// Something else limits it.
    case other
}

/// How a ``SendPipeline`` lowers the resolution, and then the frame rate, when the target bit rate is too low for
/// the size it sends, and raises them again when the rate allows (libwebrtc's `QualityScaler` for VP8 with the
/// resolution bit-rate limits of `encoder_info_settings.cc`).
///
/// Three rules, checked on every frame the encoder thread handles:
/// - **Rate.** When the target stays below ``downFactor`` × the min-start bit rate of the current resolution (scaled
///   by the frame-rate fraction when the frame rate is lowered) for ``rateDownDelay``, step down. Until the first
///   frame that passes this check (at most ``initialSteps`` frames), step down at once without waiting: the stream
///   starts at the resolution the start rate allows.
/// - **Quantizer.** Over windows of at least ``window`` and ``minimumFrames`` frames: an average QP above
///   ``highQP``, or at least ``dropPercent`` % of the frames dropped by libvpx's rate control, steps down; an
///   average QP at or below ``lowQP`` steps up, but only when the target is at least ``upFactor`` × the min-start
///   bit rate of the next resolution (or frame rate) up. A step down within ``oscillationWindow`` of a step up doubles
///   the low-QP windows the next step up needs (up to ``maxLowQPWindows``).
/// - **Frame rate.** At the lowest resolution a step down halves the frame rate instead (up to
///   ``maxFrameRateSteps`` times: 30 → 15 → 7.5); a step up restores the frame rate before the resolution.
///
/// ## Where this differs from libwebrtc
/// libwebrtc lowers the resolution for bandwidth only through the quantizer (and the initial frame dropper, which
/// drops up to 4 frames at start); the bit-rate limits only forbid a step up. Here a target clearly below the current
/// resolution's min-start rate also steps down after ``rateDownDelay``, so the resolution follows a falling estimate in
/// about a second whatever the content. libwebrtc counts 60 frames before deciding (``minimumFrames`` is 30 here, so
/// a halved frame rate still decides every 2 s), steps the frame rate only in its "balanced" mode, and has no
/// 1920×1080 limit (1080p: 2000 kbit/s here, extrapolated).
public struct QualityScalerConfiguration: Sendable, Hashable, Codable {
    /// Whether bandwidth adaptation runs at all.
    public var enabled: Bool
    /// Average QP (libvpx's 0…127 scale) at or below which a window may step up (libwebrtc VP8: 29).
    public var lowQP: Int
    /// Average QP above which a window steps down (libwebrtc VP8: 95).
    public var highQP: Int
    /// The shortest QP window (libwebrtc: 2 s).
    public var window: Duration
    /// The fewest frames (encoded or dropped) in a QP window.
    public var minimumFrames: Int
    /// The share of frames dropped by rate control, in percent, that steps down (libwebrtc: 60).
    public var dropPercent: Int
    /// A step up needs a target of at least this × the next resolution's min-start bit rate.
    public var upFactor: Double
    /// A target below this × the current resolution's min-start bit rate steps down after ``rateDownDelay``.
    public var downFactor: Double
    /// How long the target must stay below the current resolution's limit before a step down.
    public var rateDownDelay: Duration
    /// The most steps the start rule takes, one a frame (libwebrtc's initial frame dropper: 4 frames).
    public var initialSteps: Int
    /// How many times the frame rate may be halved at the lowest resolution.
    public var maxFrameRateSteps: Int
    /// A step down this soon after a step up counts as an oscillation.
    public var oscillationWindow: Duration
    /// The most consecutive low-QP windows a step up may require after oscillations.
    public var maxLowQPWindows: Int
    /// Min-start bit rate by frame size: a frame of `pixels` uses the first entry with at least as many pixels (the
    /// last entry above them). Sorted by pixels.
    public var bitrateLimits: [BitrateLimit]

    /// The lowest target a resolution starts at (libwebrtc's `ResolutionBitrateLimits.min_start_bitrate_bps`).
    public struct BitrateLimit: Sendable, Hashable, Codable {
        /// The frame size, in pixels.
        public var pixels: Int
        /// The min-start bit rate, in kbit/s.
        public var minStartKbps: Int

        /// Creates a limit.
        public init(pixels: Int, minStartKbps: Int) {
            self.pixels = pixels
            self.minStartKbps = minStartKbps
        }
    }

    /// libwebrtc's VP8 singlecast limits (`EncoderInfoSettings::GetDefaultSinglecastBitrateLimits`), plus 1080p.
    public static let vp8BitrateLimits: [BitrateLimit] = [
        BitrateLimit(pixels: 320 * 180, minStartKbps: 0), BitrateLimit(pixels: 480 * 270, minStartKbps: 200),
        BitrateLimit(pixels: 640 * 360, minStartKbps: 300), BitrateLimit(pixels: 960 * 540, minStartKbps: 500),
        BitrateLimit(pixels: 1280 * 720, minStartKbps: 900), BitrateLimit(pixels: 1920 * 1080, minStartKbps: 2000),
    ]

    /// Creates a configuration; the defaults are libwebrtc's VP8 figures and the rules above.
    public init(
        enabled: Bool = true, lowQP: Int = 29, highQP: Int = 95, window: Duration = .seconds(2),
        minimumFrames: Int = 30, dropPercent: Int = 60, upFactor: Double = 1.2, downFactor: Double = 0.8,
        rateDownDelay: Duration = .seconds(1), initialSteps: Int = 4, maxFrameRateSteps: Int = 2,
        oscillationWindow: Duration = .seconds(10), maxLowQPWindows: Int = 8,
        bitrateLimits: [BitrateLimit] = QualityScalerConfiguration.vp8BitrateLimits
    ) {
        self.enabled = enabled
        self.lowQP = lowQP
        self.highQP = highQP
        self.window = window
        self.minimumFrames = minimumFrames
        self.dropPercent = dropPercent
        self.upFactor = upFactor
        self.downFactor = downFactor
        self.rateDownDelay = rateDownDelay
        self.initialSteps = initialSteps
        self.maxFrameRateSteps = maxFrameRateSteps
        self.oscillationWindow = oscillationWindow
        self.maxLowQPWindows = maxLowQPWindows
        self.bitrateLimits = bitrateLimits
    }

    /// The min-start bit rate for frames of `pixels`, in kbit/s (0 without limits).
    public func minStartKbps(pixels: Int) -> Int {
        for limit in bitrateLimits where limit.pixels >= pixels { return limit.minStartKbps }
        return bitrateLimits.last?.minStartKbps ?? 0
    }
}

/// Decides, frame by frame, when the bandwidth calls for a lower or higher resolution or frame rate (see
/// ``QualityScalerConfiguration``), deterministically: it sees only what it is fed, never a clock.
///
/// Feed every frame the encoder handled with ``addFrame(_:)``; apply a returned step (through the video adapter)
/// and report it with ``didApply(_:)``. Not thread-safe: the encoder thread owns it. No allocation per frame.
package struct QualityScaler: Sendable, Hashable {
    /// What the caller should do.
    package enum Decision: String, Sendable, Hashable, Codable {
        /// Keep the resolution and frame rate.
        case keep
        /// Lower the resolution one step.
        case resolutionDown
        /// Raise the resolution one step.
        case resolutionUp
        /// Halve the frame rate (at the lowest resolution).
        case frameRateDown
        /// Double the frame rate again.
        case frameRateUp
    }

    /// Which rule made the last step.
    package enum Trigger: String, Sendable, Hashable, Codable {
        case none, start, rate, quantizer, drops
    }

    /// One frame as the encoder handled it, with where the bandwidth level stands.
    package struct Frame: Sendable, Hashable {
        /// The encoded frame's QP (0…127), or `nil` when libvpx's rate control dropped the frame.
        package var qp: Int?
        /// The capture time, in nanoseconds.
        package var timestampNs: UInt64
        /// The encoder's target bit rate, in kbit/s.
        package var targetKbps: Int
        /// The pixels of the bandwidth level's resolution.
        package var pixels: Int
        /// The pixels one step up, or `nil` at full resolution.
        package var stepUpPixels: Int?
        /// Whether one more step down stays above the minimum size.
        package var canStepDown: Bool

        package init(
            qp: Int?, timestampNs: UInt64, targetKbps: Int, pixels: Int, stepUpPixels: Int?, canStepDown: Bool
        ) {
            self.qp = qp
            self.timestampNs = timestampNs
            self.targetKbps = targetKbps
            self.pixels = pixels
            self.stepUpPixels = stepUpPixels
            self.canStepDown = canStepDown
        }
    }

    package let configuration: QualityScalerConfiguration
    /// How many times the frame rate is halved now.
    package private(set) var frameRateLevel = 0
    /// The rule behind the last step.
    package private(set) var lastTrigger = Trigger.none
    /// The average QP of the last complete window, if it had encoded frames.
    package private(set) var lastAverageQP: Int?
    /// The drop percentage of the last complete window.
    package private(set) var lastDropPercent = 0
    /// Consecutive low-QP windows a step up needs now.
    package private(set) var requiredLowQPWindows = 1

    private var startStepsLeft: Int
    private var windowStartNs: UInt64?
    private var windowFrames = 0
    private var windowDrops = 0
    private var windowQPSum = 0
    private var windowQPCount = 0
    private var lowQPRun = 0
    private var rateLowSinceNs: UInt64?
    private var lastStepUpNs: UInt64?
    private var lastTimestampNs: UInt64 = 0

    package init(configuration: QualityScalerConfiguration = QualityScalerConfiguration()) {
        self.configuration = configuration
        startStepsLeft = max(0, configuration.initialSteps)
    }

    /// The fraction of the full frame rate sent at frame-rate level `level` (1, 1/2, 1/4, …).
    package static func frameRateFraction(level: Int) -> Double {
        1 / Double(1 << max(0, min(level, 16)))
    }

    /// Adds one frame; returns the step to take now.
    package mutating func addFrame(_ frame: Frame) -> Decision {
        guard configuration.enabled else { return .keep }
        let now = frame.timestampNs
        lastTimestampNs = now
        let target = Double(max(0, frame.targetKbps))
        let canLowerFrameRate = frameRateLevel < max(0, configuration.maxFrameRateSteps)
        let down: Decision = frame.canStepDown ? .resolutionDown : (canLowerFrameRate ? .frameRateDown : .keep)
        let limit = Double(configuration.minStartKbps(pixels: max(0, frame.pixels)))
        let currentLimit = limit * Self.frameRateFraction(level: frameRateLevel)

        // Start: the first frames step down at once while the target is below the resolution's min-start rate.
        if startStepsLeft > 0 {
            if frame.canStepDown, target < limit {
                startStepsLeft -= 1
                return step(.resolutionDown, trigger: .start)
            }
            startStepsLeft = 0
        }

        // Rate: a target clearly below the current limit for rateDownDelay.
        if target < configuration.downFactor * currentLimit {
            if let since = rateLowSinceNs, since <= now {
                if now - since >= Self.nanoseconds(configuration.rateDownDelay), down != .keep {
                    return step(down, trigger: .rate)
                }
            } else {
                rateLowSinceNs = now
            }
        } else {
            rateLowSinceNs = nil
        }

        // Quantizer and drops, per window.
        guard let start = windowStartNs, start <= now else {
            resetWindow(at: now)
            count(frame)
            return .keep
        }
        count(frame)
        guard now - start >= Self.nanoseconds(configuration.window), windowFrames >= max(1, configuration.minimumFrames)
        else { return .keep }
        let average = windowQPCount > 0 ? windowQPSum / windowQPCount : nil
        lastAverageQP = average
        lastDropPercent = windowDrops * 100 / windowFrames
        resetWindow(at: now)
        if lastDropPercent >= configuration.dropPercent {
            lowQPRun = 0
            return down == .keep ? .keep : step(down, trigger: .drops)
        }
        guard let average else { return .keep }
        if average > configuration.highQP {
            lowQPRun = 0
            return down == .keep ? .keep : step(down, trigger: .quantizer)
        }
        guard average <= configuration.lowQP else {
            lowQPRun = 0
            return .keep
        }
        lowQPRun += 1
        guard lowQPRun >= requiredLowQPWindows else { return .keep }
        if frameRateLevel > 0 {
            let needed = limit * Self.frameRateFraction(level: frameRateLevel - 1) * configuration.upFactor
            return target >= needed ? step(.frameRateUp, trigger: .quantizer) : .keep
        }
        guard let upPixels = frame.stepUpPixels else { return .keep }
        let needed = Double(configuration.minStartKbps(pixels: max(0, upPixels))) * configuration.upFactor
        return target >= needed ? step(.resolutionUp, trigger: .quantizer) : .keep
    }

    /// Tells the scaler the caller applied `decision` (or, for a step it returned, could not: pass ``Decision/keep``).
    /// Starts a new window; a step down soon after a step up doubles the low-QP windows the next step up needs.
    package mutating func didApply(_ decision: Decision) {
        switch decision {
        case .keep:
            return
        case .resolutionDown, .frameRateDown:
            if let up = lastStepUpNs, lastTimestampNs >= up,
                lastTimestampNs - up <= Self.nanoseconds(configuration.oscillationWindow)
            {
                requiredLowQPWindows = min(
                    requiredLowQPWindows * 2, max(requiredLowQPWindows, configuration.maxLowQPWindows))
            }
            lastStepUpNs = nil
            if decision == .frameRateDown { frameRateLevel += 1 }
        case .resolutionUp, .frameRateUp:
            lastStepUpNs = lastTimestampNs
            if decision == .frameRateUp { frameRateLevel = max(0, frameRateLevel - 1) }
        }
        lowQPRun = 0
        rateLowSinceNs = nil
        resetWindow(at: lastTimestampNs)
    }

    private mutating func step(_ decision: Decision, trigger: Trigger) -> Decision {
        lastTrigger = trigger
        return decision
    }

    private mutating func count(_ frame: Frame) {
        windowFrames += 1
        if let qp = frame.qp {
            guard qp >= 0 else { return }
            windowQPSum += min(qp, 127)
            windowQPCount += 1
        } else {
            windowDrops += 1
        }
    }

    private mutating func resetWindow(at timestampNs: UInt64) {
        windowStartNs = timestampNs
        windowFrames = 0
        windowDrops = 0
        windowQPSum = 0
        windowQPCount = 0
    }

    /// A non-negative duration in nanoseconds (saturating).
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}
