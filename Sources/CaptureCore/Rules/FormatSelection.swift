/// What the capturer asks for when it picks a format: a target size, a frame-rate limit and a pixel-format preference.
public struct FormatRequest: Sendable, Hashable, Codable {
    /// The size wanted.
    public var target: Dimensions
    /// The highest frame rate wanted (default 30).
    public var fpsLimit: Double
    /// Pixel formats in order of preference, used to break ties (default NV12, YU12, YUYV, UYVY, MJPG).
    public var preference: [PixelFormat]

    /// Creates a request.
    public init(target: Dimensions, fpsLimit: Double = 30, preference: [PixelFormat] = PixelFormat.defaultPreference) {
        self.target = target
        self.fpsLimit = fpsLimit
        self.preference = preference
    }
}

/// The rule that decided a selection, for explaining it.
public enum SelectionRule: String, Sendable, Hashable, Codable {
    /// Only one candidate was left.
    case onlyCandidate
    /// The nearest size, by `|Δw| + |Δh|`.
    case distance
    /// Equal distance: the higher frame rate.
    case frameRate
    /// Equal distance and rate: the earlier pixel format in the preference list.
    case preference
    /// All else equal: the earlier entry in the device's list.
    case enumerationOrder
}

/// A format the rules picked: the listed format, the size taken from it, and the frame rate to use.
public struct FormatSelection: Sendable, Hashable, Codable {
    /// The format as the device lists it.
    public var format: CaptureFormat
    /// Its index in the device's format list.
    public var formatIndex: Int
    /// The size to capture (for a size range, the size in the range nearest the target).
    public var dimensions: Dimensions
    /// The frame rate to ask for.
    public var fps: Double
    /// `|Δw| + |Δh|` from the target.
    public var distance: Int
    /// The rule that set this candidate apart from the runner-up.
    public var decidingRule: SelectionRule
    /// How many candidates (convertible formats) were compared.
    public var candidateCount: Int
    /// One line per rule applied, in order, for people.
    public var explanation: [String]

    /// The pixel format.
    public var pixelFormat: PixelFormat { format.pixelFormat }
}

/// The selection and rotation rules of the capturer: pure functions, no state.
public enum CaptureRules {
    /// The frame rate the capturer uses for `rates` under a limit: the highest listed rate ≤ `limit`; if every listed
    /// rate is above `limit`, the lowest listed; for a range, `limit` clamped into the range; with no rate, `limit`.
    public static func frameRate(for rates: FrameRates, limit: Double) -> Double {
        switch rates {
        case .discrete(let intervals):
            let listed = intervals.map(\.fps).filter { $0 > 0 }
            guard !listed.isEmpty else { return limit }
            if let best = listed.filter({ $0 <= limit + 1e-9 }).max() { return best }
            return listed.min() ?? limit
        case .stepwise(let min, let max, _), .continuous(let min, let max):
            let high = min.fps, low = max.fps
            guard high > 0 else { return limit }
            return Swift.min(Swift.max(limit, low), high)
        }
    }

    /// Picks the format for `request` among `formats`, considering only pixel formats `canConvert` accepts.
    ///
    /// Candidates are ranked by (1) `|Δw| + |Δh|` to the target, smaller first; (2) the frame rate
    /// ``frameRate(for:limit:)`` gives, higher first; (3) the pixel format's place in the preference list (formats not
    /// in it after those in it); (4) enumeration order. Returns `nil` when no format is convertible.
    public static func selectFormat(
        from formats: [CaptureFormat], for request: FormatRequest, canConvert: (PixelFormat) -> Bool
    ) -> FormatSelection? {
        struct Candidate {
            var index: Int
            var format: CaptureFormat
            var size: Dimensions
            var distance: Int
            var fps: Double
            var preferenceRank: Int
        }
        let candidates = formats.enumerated().compactMap { index, format -> Candidate? in
            guard canConvert(format.pixelFormat) else { return nil }
            let size = format.size.nearest(to: request.target)
            return Candidate(
                index: index, format: format, size: size, distance: size.distance(to: request.target),
                fps: frameRate(for: format.frameRates, limit: request.fpsLimit),
                preferenceRank: request.preference.firstIndex(of: format.pixelFormat) ?? request.preference.count)
        }
        func rule(_ a: Candidate, before b: Candidate) -> SelectionRule? {
            if a.distance != b.distance { return a.distance < b.distance ? .distance : nil }
            if a.fps != b.fps { return a.fps > b.fps ? .frameRate : nil }
            if a.preferenceRank != b.preferenceRank { return a.preferenceRank < b.preferenceRank ? .preference : nil }
            return a.index < b.index ? .enumerationOrder : nil
        }
        let ranked = candidates.sorted { rule($0, before: $1) != nil }
        guard let best = ranked.first else { return nil }
        let target = request.target
        var explanation = [
            "candidates: \(ranked.count) (pixel formats the capturer can convert)",
            "target \(target), fps limit \(formatFPS(request.fpsLimit))",
        ]
        let decided: SelectionRule
        if ranked.count > 1 {
            let runnerUp = ranked[1]
            decided = rule(best, before: runnerUp) ?? .enumerationOrder
            let vs = "\(best.format.pixelFormat) \(best.size) vs \(runnerUp.format.pixelFormat) \(runnerUp.size)"
            switch decided {
            case .distance:
                explanation.append("distance: \(best.distance) < \(runnerUp.distance) (\(vs))")
            case .frameRate:
                explanation.append("distance: tie at \(best.distance)")
                explanation.append("frame rate: \(formatFPS(best.fps)) > \(formatFPS(runnerUp.fps)) (\(vs))")
            case .preference:
                explanation.append("distance: tie at \(best.distance); frame rate: tie at \(formatFPS(best.fps))")
                explanation.append(
                    "preference: \(best.format.pixelFormat) ranks before \(runnerUp.format.pixelFormat)")
            case .enumerationOrder, .onlyCandidate:
                explanation.append("distance, frame rate and preference tie (\(vs))")
                explanation.append("enumeration order: entry \(best.index) comes before entry \(runnerUp.index)")
            }
        } else {
            decided = .onlyCandidate
            explanation.append("only one candidate")
        }
        explanation.append("frame rate: \(formatFPS(best.fps)) (\(rateRule(best.format.frameRates, request.fpsLimit)))")
        return FormatSelection(
            format: best.format, formatIndex: best.index, dimensions: best.size, fps: best.fps,
            distance: best.distance, decidingRule: decided, candidateCount: ranked.count, explanation: explanation)
    }

    /// Picks the device: the first (in enumeration order) whose position is `position`, else the first device;
    /// devices without a convertible format are skipped. Returns `nil` when no device is usable.
    public static func selectDevice(
        from devices: [CaptureDevice], position: CameraPosition = .front, canConvert: (PixelFormat) -> Bool
    ) -> CaptureDevice? {
        let usable = devices.filter { $0.formats.contains { canConvert($0.pixelFormat) } }
        return usable.first { $0.position == position } ?? usable.first
    }

    /// The rotation for frames from a camera at `position` when the device is held in `orientation`
    /// (WebRTC's RTCCameraVideoCapturer table). Face up, face down and unknown keep `previous`. External and
    /// unspecified cameras count as back cameras.
    public static func rotation(
        for orientation: DeviceOrientation, position: CameraPosition, previous: VideoRotation
    ) -> VideoRotation {
        let front = position == .front
        switch orientation {
        case .portrait: return .degrees90
        case .portraitUpsideDown: return .degrees270
        case .landscapeLeft: return front ? .degrees180 : .degrees0
        case .landscapeRight: return front ? .degrees0 : .degrees180
        case .faceUp, .faceDown, .unknown: return previous
        }
    }

    private static func rateRule(_ rates: FrameRates, _ limit: Double) -> String {
        switch rates {
        case .discrete(let intervals) where intervals.isEmpty: "no rate listed: the limit"
        case .discrete(let intervals):
            intervals.contains { $0.fps > 0 && $0.fps <= limit + 1e-9 }
                ? "highest listed rate <= \(formatFPS(limit))" : "every listed rate is above the limit: the lowest"
        case .stepwise, .continuous: "the limit clamped into the listed range"
        }
    }

    /// `30`, `12.5`.
    static func formatFPS(_ fps: Double) -> String {
        fps == fps.rounded() ? String(Int(fps)) : String((fps * 1000).rounded() / 1000)
    }
}
