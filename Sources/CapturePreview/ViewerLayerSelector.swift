/// Chooses which simulcast layer one viewer of a shared simulcast encoder gets, as an SFU chooses a layer for each
/// subscriber: from the viewer's bandwidth estimate and what each layer needs, with hysteresis, switching only at a
/// key frame of the new layer.
///
/// ```swift
/// var selector = ViewerLayerSelector(estimateKbps: 300)
/// let ask = selector.update(layers: layers, at: now)  // the layer to ask a key frame of, if any
/// let decision = selector.frame(
///     simulcastIndex: frame.simulcastIndex, isKeyFrame: frame.isKeyFrame, rtpTimestamp: frame.rtpTimestamp,
///     layers: layers, at: now)
/// if decision.forward { /* send the frame, with decision.rtpTimestamp, on the viewer's one stream */ }
/// ```
///
/// Sans-IO: a value with no clock and no thread. Its owner gives it the time with every input and does what it
/// returns (asks the encoder for a key frame of a layer, forwards or skips a frame); one owner at a time.
///
/// ## The rules
/// - A layer *fits* when it is active and its need (``Layer/needKbps``) is at most the estimate.
/// - **At the start** the selector heads for the highest layer that fits (the lowest active one if none does).
/// - **Down, at once:** when the layer the viewer is on (or heading for) is off, or needs more than the estimate, it
///   heads for the highest lower layer that fits (else the lowest active one).
/// - **Up, after a hold:** when a higher active layer needs at most estimate ÷ ``Configuration/upMargin``, and that
///   has held without a break for ``Configuration/upHold``, it heads for the highest such layer. A move down, or a
///   congestion pause, starts the hold again.
/// - **The switch** happens at the next key frame of the layer it heads for (``pending``): until then the viewer keeps
///   getting its current layer, so the picture never stops for a switch. Heading for a layer asks a key frame of it;
///   the ask is repeated every ``Configuration/keyFrameRetry`` until one comes (an encoder turning a layer on may not
///   have it yet).
/// - **Congestion** (``setCongested(_:layers:at:)``: the viewer's transport cannot keep up) stops the viewer's frames
///   at once and heads one layer down; when it clears, the viewer resumes at a key frame of that layer, asked for then.
/// - **One stream:** frames are forwarded on the viewer's single RTP stream, so two frames of one capture instant (the
///   old layer's, then the new layer's key frame when switching up within an instant) would share an RTP timestamp.
///   The later one is given the previous timestamp + 1 (11 µs on the 90 kHz clock), as an SFU rewrites timestamps on
///   a switch.
///
/// ## What a layer needs
/// The owner says (``Layer``). The preview's fan-out uses each active layer's share of the encoder's target (what the
/// allocator gives it, so what it sends), and an inactive layer's target.
public struct ViewerLayerSelector: Sendable, Hashable {
    /// The hysteresis.
    public struct Configuration: Sendable, Hashable {
        /// How much more than a higher layer's need the estimate must be to move up (1.2: 20 % headroom).
        public var upMargin: Double
        /// How long a move up must stay possible before the selector heads for it.
        public var upHold: Duration
        /// How long the selector waits for a key frame of the layer it heads for before asking again.
        public var keyFrameRetry: Duration

        /// Creates a configuration. `upMargin` below 1 (or not finite) is taken as 1.
        public init(upMargin: Double = 1.2, upHold: Duration = .seconds(2), keyFrameRetry: Duration = .seconds(1)) {
            self.upMargin = upMargin.isFinite ? max(1, upMargin) : 1
            self.upHold = upHold
            self.keyFrameRetry = keyFrameRetry
        }
    }

    /// What the selector knows of one simulcast layer (index = `EncodedFrame.simulcastIndex`, 0 the lowest).
    public struct Layer: Sendable, Hashable {
        /// Whether the encoder sends the layer now.
        public var isActive: Bool
        /// The bit rate a viewer's link must carry for the layer, in kbit/s.
        public var needKbps: Int

        /// Creates a layer's figures.
        public init(isActive: Bool, needKbps: Int) {
            self.isActive = isActive
            self.needKbps = needKbps
        }
    }

    /// What to do with one encoded frame.
    public struct FrameDecision: Sendable, Hashable {
        /// Whether the viewer gets the frame.
        public var forward: Bool
        /// The RTP timestamp to send it with (the frame's own, unless that would repeat the last one forwarded).
        public var rtpTimestamp: UInt32
        /// A layer to ask a key frame of now, if any.
        public var keyFrameRequest: Int?
        /// Whether the viewer switched to the frame's layer at this (key) frame.
        public var switched: Bool
    }

    /// What the selector has done so far.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Switches to a higher layer.
        public var switchesUp = 0
        /// Switches to a lower layer.
        public var switchesDown = 0
        /// Frames forwarded.
        public var framesForwarded = 0
        /// Key frames asked for (heading for a layer, retries, the viewer's own requests, resuming).
        public var keyFrameRequests = 0
        /// Times the viewer's transport said it was congested.
        public var congestionPauses = 0

        /// Zero counts.
        public init() {}
    }

    /// The hysteresis.
    public let configuration: Configuration
    /// The viewer's bandwidth estimate, in kbit/s.
    public private(set) var estimateKbps: Int
    /// The layer the viewer gets now; `nil` before its first key frame, and from a congestion pause until the key
    /// frame it resumes at.
    public private(set) var current: Int?
    /// The layer the viewer switches to at its next key frame, if a switch is under way.
    public private(set) var pending: Int?
    /// Whether the viewer's transport is congested (it gets no frames meanwhile).
    public private(set) var isPaused = false
    /// The counts.
    public private(set) var statistics = Statistics()
    /// Since when a move up has been possible without a break.
    private var upSince: ContinuousClock.Instant?
    /// When a key frame of ``pending`` was last asked for.
    private var requestedAt: ContinuousClock.Instant?
    /// The last layer forwarded (for counting switches up and down across a pause).
    private var lastForwardedLayer: Int?
    /// The RTP timestamp of the last frame forwarded.
    private var lastTimestamp: UInt32?

    /// Creates a selector for a viewer whose estimate starts at `estimateKbps`; the first
    /// ``update(layers:at:)`` picks its first layer.
    public init(configuration: Configuration = Configuration(), estimateKbps: Int) {
        self.configuration = configuration
        self.estimateKbps = max(0, estimateKbps)
    }

    /// The layer the viewer gets now or will at its next key frame: ``pending``, else ``current``.
    public var target: Int? { pending ?? current }

    /// Takes a new estimate and applies the rules.
    ///
    /// - Returns: A layer to ask a key frame of now, if any.
    public mutating func setEstimate(_ kbps: Int, layers: [Layer], at now: ContinuousClock.Instant) -> Int? {
        estimateKbps = max(0, kbps)
        return evaluate(layers, at: now)
    }

    /// Applies the rules at `now` with the layers' latest figures (time passing, layers turned on or off).
    ///
    /// - Returns: A layer to ask a key frame of now, if any.
    public mutating func update(layers: [Layer], at now: ContinuousClock.Instant) -> Int? {
        evaluate(layers, at: now)
    }

    /// Applies the rules, then decides about one encoded frame: forwarded when it is of the current layer, or a key
    /// frame of the pending one (the switch happens there); never while paused.
    public mutating func frame(
        simulcastIndex: Int, isKeyFrame: Bool, rtpTimestamp: UInt32, layers: [Layer], at now: ContinuousClock.Instant
    ) -> FrameDecision {
        var decision = FrameDecision(
            forward: false, rtpTimestamp: rtpTimestamp, keyFrameRequest: evaluate(layers, at: now), switched: false)
        guard !isPaused else { return decision }
        if simulcastIndex == pending, isKeyFrame {
            if let previous = lastForwardedLayer, previous != simulcastIndex {
                if simulcastIndex > previous {
                    statistics.switchesUp += 1
                } else {
                    statistics.switchesDown += 1
                }
            }
            current = simulcastIndex
            pending = nil
            requestedAt = nil
            decision.switched = true
        }
        guard simulcastIndex == current else { return decision }
        if let last = lastTimestamp, Int32(bitPattern: rtpTimestamp &- last) <= 0 {
            decision.rtpTimestamp = last &+ 1
        }
        lastTimestamp = decision.rtpTimestamp
        lastForwardedLayer = simulcastIndex
        decision.forward = true
        statistics.framesForwarded += 1
        return decision
    }

    /// The viewer asked for a key frame (PLI, FIR, or its transport dropped frames): the layer to ask it of, the one
    /// it is heading for or else the one it is on.
    public mutating func keyFrameWanted(at now: ContinuousClock.Instant) -> Int {
        statistics.keyFrameRequests += 1
        if pending != nil { requestedAt = now }
        return pending ?? current ?? 0
    }

    /// The viewer's transport is congested (its pacer queue is full), or no longer.
    ///
    /// Congested: the viewer gets no more frames, and heads one active layer down (when there is one). Clear: it
    /// resumes at the next key frame of the layer it heads for.
    ///
    /// - Returns: A layer to ask a key frame of now (when the congestion clears), if any.
    public mutating func setCongested(
        _ congested: Bool, layers: [Layer], at now: ContinuousClock.Instant
    ) -> Int? {
        guard congested != isPaused else { return nil }
        isPaused = congested
        upSince = nil
        if congested {
            statistics.congestionPauses += 1
            let base = pending ?? current ?? 0
            pending = (0..<base).last { Self.isActive($0, in: layers) } ?? base
            current = nil
            requestedAt = nil
            return nil
        }
        // The rules may head elsewhere now (and ask for that layer's key frame themselves).
        if let asked = evaluate(layers, at: now) { return asked }
        let layer = pending ?? current ?? 0
        if current == nil { pending = layer }
        requestedAt = now
        statistics.keyFrameRequests += 1
        return layer
    }

    // MARK: The rules

    private static func isActive(_ index: Int, in layers: [Layer]) -> Bool {
        layers.isEmpty ? index == 0 : layers.indices.contains(index) && layers[index].isActive
    }

    private mutating func evaluate(_ layers: [Layer], at now: ContinuousClock.Instant) -> Int? {
        let count = max(1, layers.count)
        let estimate = estimateKbps
        let margin = configuration.upMargin
        func need(_ index: Int) -> Int { layers.indices.contains(index) ? layers[index].needKbps : 0 }
        func fits(_ index: Int) -> Bool { Self.isActive(index, in: layers) && need(index) <= estimate }
        func roomy(_ index: Int) -> Bool {
            Self.isActive(index, in: layers) && Double(need(index)) * margin <= Double(estimate)
        }
        let lowestActive = (0..<count).first { Self.isActive($0, in: layers) } ?? 0
        guard let base = pending ?? current else {
            upSince = nil
            return head(for: (0..<count).last(where: fits) ?? lowestActive, at: now)
        }
        if !fits(base) {
            upSince = nil
            let fallback = Self.isActive(base, in: layers) ? min(base, lowestActive) : lowestActive
            let lower = (0..<min(base, count)).last(where: fits) ?? fallback
            return lower != base ? head(for: lower, at: now) : retry(at: now)
        }
        guard !isPaused, base + 1 < count, let higher = (base + 1..<count).last(where: roomy) else {
            upSince = nil
            return retry(at: now)
        }
        let since = upSince ?? now
        upSince = since
        guard since.duration(to: now) >= configuration.upHold else { return retry(at: now) }
        upSince = nil
        return head(for: higher, at: now)
    }

    /// Heads for `layer`: cancels a switch when it is the current layer, else makes it pending and asks a key frame
    /// of it (not while paused: resuming asks).
    private mutating func head(for layer: Int, at now: ContinuousClock.Instant) -> Int? {
        if layer == current {
            pending = nil
            requestedAt = nil
            return nil
        }
        guard layer != pending else { return retry(at: now) }
        pending = layer
        guard !isPaused else {
            requestedAt = nil
            return nil
        }
        requestedAt = now
        statistics.keyFrameRequests += 1
        return layer
    }

    /// Asks again for a key frame of the pending layer when the last ask is older than the retry interval.
    private mutating func retry(at now: ContinuousClock.Instant) -> Int? {
        guard !isPaused, let pending, let requestedAt,
            requestedAt.duration(to: now) >= configuration.keyFrameRetry
        else { return nil }
        self.requestedAt = now
        statistics.keyFrameRequests += 1
        return pending
    }
}
