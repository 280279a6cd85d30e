public import CaptureCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How ``VP8Encoder`` drives libvpx: WebRTC's real-time camera configuration by default, every field overridable.
///
/// The defaults are those of WebRTC's `LibvpxVp8Encoder` for a single camera stream on a desktop (x86) machine:
/// one pass, constant bit rate, no lag, quantizer 2…56, undershoot/overshoot 100/15 %, a 500/600/1000 ms
/// (initial/optimal/size) rate-control buffer, the adaptive denoiser, static threshold 1, one token partition,
/// frame dropping at a 30 % buffer level (but never more than 2 s without output), no internal resizing, a key frame every 3000 frames, and no error
/// resilience. Fields left `nil` follow WebRTC's rules for the frame size and the machine (see
/// ``resolvedCpuUsed(for:)``, ``resolvedThreads(for:cores:)`` and ``resolvedMaxIntraBitratePercent``).
public struct VP8EncoderConfiguration: Sendable, Hashable, Codable {
    /// Target bit rate in kbit/s (libvpx `rc_target_bitrate`).
    public var targetBitrateKbps: Int
    /// The frame rate the stream is encoded for; sets the frame duration `90000 / fps` and the intra-frame budget.
    public var framerate: Double
    /// Lowest quantizer, 0…63 (`rc_min_quantizer`; WebRTC: 2 for cameras).
    public var minQuantizer: Int
    /// Highest quantizer, 0…63 (`rc_max_quantizer`; WebRTC's default qpMax 56).
    public var maxQuantizer: Int
    /// How far below the target the rate control may go, in percent (`rc_undershoot_pct`).
    public var undershootPercent: Int
    /// How far above the target the rate control may go, in percent (`rc_overshoot_pct`).
    public var overshootPercent: Int
    /// Decoder buffer fullness at the start, in milliseconds (`rc_buf_initial_sz`).
    public var bufferInitialMs: Int
    /// Decoder buffer fullness the rate control aims for, in milliseconds (`rc_buf_optimal_sz`).
    public var bufferOptimalMs: Int
    /// Decoder buffer size, in milliseconds (`rc_buf_sz`).
    public var bufferSizeMs: Int
    /// Speed/quality trade-off (`VP8E_SET_CPUUSED`, −16…16; negative values are fixed real-time speeds).
    /// `nil`: WebRTC's desktop rule, −6, or −4 below the area of 352x288.
    public var cpuUsed: Int?
    /// Largest key frame, as a percentage of the average frame size (`VP8E_SET_MAX_INTRA_BITRATE_PCT`).
    /// `nil`: WebRTC's `max(300, 0.5 × 600 × fps / 10)`, 900 at 30 fps.
    public var maxIntraBitratePercent: Int?
    /// Denoiser mode (`VP8E_SET_NOISE_SENSITIVITY`): 0 off, 1 luma only, 4 adaptive (WebRTC on desktop).
    public var noiseSensitivity: Int
    /// Macroblocks whose change is below this are skipped (`VP8E_SET_STATIC_THRESHOLD`; WebRTC: 1 for cameras).
    public var staticThreshold: Int
    /// Number of DCT token partitions: 1, 2, 4 or 8 (`VP8E_SET_TOKEN_PARTITIONS`; WebRTC: 1).
    public var tokenPartitions: Int
    /// Buffer level, in percent, below which the encoder drops frames (`rc_dropframe_thresh`; 0 never drops).
    public var frameDropThreshold: Int
    /// When the encoder has produced nothing for this long (capture time), the next frame is encoded with frame
    /// dropping off, so a receiver never waits longer (WebRTC's `WebRTC-VP8-MaxFrameInterval`, 2 s). `nil`: never.
    public var maxFrameDropIntervalMs: Int?
    /// Whether libvpx may code frames at a lower resolution on its own (`rc_resize_allowed`; WebRTC: no).
    public var resizeAllowed: Bool
    /// Most frames between key frames (`kf_max_dist` with `VPX_KF_AUTO`); 0 or less disables automatic key frames.
    public var keyFrameInterval: Int
    /// Whether to code frames error-resiliently (`g_error_resilient`; WebRTC: only with temporal layers).
    public var errorResilient: Bool
    /// Encoder threads (`g_threads`). `nil`: WebRTC's rule for the frame size and this machine's cores.
    public var threads: Int?
    /// Temporal layers, 1 to 3 (L1T1, L1T2, L1T3; see ``VP8TemporalPattern``). With more than one, frames are coded
    /// error-resiliently and key frames come every ``keyFrameInterval`` frames from the encoder's own count, always
    /// on layer 0.
    public var temporalLayers: Int

    /// The RTP clock rate and libvpx time base denominator: 90 kHz (`g_timebase` = 1/90000).
    public static let clockRate = 90_000

    /// WebRTC's real-time camera configuration with `targetBitrateKbps` and `framerate`; other fields overridable.
    public init(
        targetBitrateKbps: Int = 1_000, framerate: Double = 30,
        minQuantizer: Int = 2, maxQuantizer: Int = 56,
        undershootPercent: Int = 100, overshootPercent: Int = 15,
        bufferInitialMs: Int = 500, bufferOptimalMs: Int = 600, bufferSizeMs: Int = 1_000,
        cpuUsed: Int? = nil, maxIntraBitratePercent: Int? = nil,
        noiseSensitivity: Int = 4, staticThreshold: Int = 1, tokenPartitions: Int = 1,
        frameDropThreshold: Int = 30, maxFrameDropIntervalMs: Int? = 2_000, resizeAllowed: Bool = false,
        keyFrameInterval: Int = 3_000,
        errorResilient: Bool = false, threads: Int? = nil, temporalLayers: Int = 1
    ) {
        self.targetBitrateKbps = targetBitrateKbps
        self.framerate = framerate
        self.minQuantizer = minQuantizer
        self.maxQuantizer = maxQuantizer
        self.undershootPercent = undershootPercent
        self.overshootPercent = overshootPercent
        self.bufferInitialMs = bufferInitialMs
        self.bufferOptimalMs = bufferOptimalMs
        self.bufferSizeMs = bufferSizeMs
        self.cpuUsed = cpuUsed
        self.maxIntraBitratePercent = maxIntraBitratePercent
        self.noiseSensitivity = noiseSensitivity
        self.staticThreshold = staticThreshold
        self.tokenPartitions = tokenPartitions
        self.frameDropThreshold = frameDropThreshold
        self.maxFrameDropIntervalMs = maxFrameDropIntervalMs
        self.resizeAllowed = resizeAllowed
        self.keyFrameInterval = keyFrameInterval
        self.errorResilient = errorResilient
        self.threads = threads
        self.temporalLayers = temporalLayers
    }

    /// The temporal pattern of ``temporalLayers``.
    public var temporalPattern: VP8TemporalPattern { VP8TemporalPattern(layers: temporalLayers) }

    /// Whether frames are coded error-resiliently: ``errorResilient``, or always with temporal layers (as libwebrtc).
    public var resolvedErrorResilient: Bool { errorResilient || temporalLayers > 1 }

    /// The whole frame rate WebRTC configures libvpx with (`maxFramerate = fps + 0.5`), at least 1.
    public var roundedFramerate: Int {
        guard framerate.isFinite else { return 1 }
        return max(1, Int(min(framerate, 1_000) + 0.5))
    }

    /// One frame's duration in 90 kHz ticks (`90000 / fps`): what libvpx is told and how far its pts advances.
    public var frameDuration: Int { max(1, Self.clockRate / roundedFramerate) }

    /// ``maxIntraBitratePercent``, or WebRTC's `max(300, 0.5 × 600 × fps / 10)` (900 at 30 fps).
    public var resolvedMaxIntraBitratePercent: Int {
        maxIntraBitratePercent ?? max(300, Int(0.5 * 600 * Double(roundedFramerate) / 10))
    }

    /// ``cpuUsed``, or WebRTC's desktop rule: −6, and −4 (`max(-6, -4)`) when the area is below 352x288.
    public func resolvedCpuUsed(for dimensions: Dimensions) -> Int {
        if let cpuUsed { return cpuUsed }
        return dimensions.area < 352 * 288 ? max(-6, -4) : -6
    }

    /// ``threads``, or WebRTC's rule (`NumberOfThreads`): 8 at 1920x1080 and more with over 8 cores; 3 above
    /// 1280x960 with 6 cores or more; above 640x480 with 3 cores or more, 3 (6+ cores) or 2; otherwise 1.
    ///
    /// On 2 cores the rule always gives 1, and it should: on a 2-vCPU VM, libvpx 1.12 with `--threads=2` encoded
    /// 640x480 at 16 fps against 273 fps with one thread, and 1280x720 at 6–8 fps against 76–127 fps
    /// (vpxenc, real-time settings; see the package's research notes).
    public func resolvedThreads(for dimensions: Dimensions, cores: Int = Self.onlineCores) -> Int {
        if let threads { return max(1, threads) }
        let area = dimensions.area
        if area >= 1920 * 1080 && cores > 8 { return 8 }
        if area > 1280 * 960 && cores >= 6 { return 3 }
        if area > 640 * 480 && cores >= 3 { return cores >= 6 ? 3 : 2 }
        return 1
    }

    /// The number of processors online (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    public static var onlineCores: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Checks the ranges libvpx accepts, so a bad value is a clear error rather than a failed `vpx_codec_enc_init`.
    ///
    /// - Throws: `CaptureError` with code `invalidArgument` naming the first bad field.
    public func validate() throws(CaptureError) {
        func check(_ ok: Bool, _ what: @autoclosure () -> String) throws(CaptureError) {
            if !ok { throw CaptureError(.invalidArgument, "VP8 configuration: \(what())") }
        }
        try check(targetBitrateKbps > 0, "target bit rate must be positive, got \(targetBitrateKbps) kbit/s")
        try check(framerate.isFinite && framerate >= 1, "frame rate must be at least 1, got \(framerate)")
        try check(
            (0...63).contains(minQuantizer) && (0...63).contains(maxQuantizer),
            "quantizers must be within 0…63, got \(minQuantizer)…\(maxQuantizer)")
        try check(minQuantizer <= maxQuantizer, "min quantizer \(minQuantizer) exceeds max \(maxQuantizer)")
        try check(undershootPercent >= 0 && overshootPercent >= 0, "undershoot/overshoot must not be negative")
        try check(
            bufferInitialMs >= 0 && bufferOptimalMs >= 0 && bufferSizeMs > 0, "buffer sizes must be positive")
        try check((-16...16).contains(cpuUsed ?? 0), "cpu-used must be within -16…16, got \(cpuUsed ?? 0)")
        try check(resolvedMaxIntraBitratePercent >= 0, "max intra bit rate must not be negative")
        try check((0...6).contains(noiseSensitivity), "noise sensitivity must be within 0…6")
        try check(staticThreshold >= 0, "static threshold must not be negative")
        try check([1, 2, 4, 8].contains(tokenPartitions), "token partitions must be 1, 2, 4 or 8")
        try check((0...100).contains(frameDropThreshold), "frame-drop threshold must be within 0…100")
        try check((maxFrameDropIntervalMs ?? 0) >= 0, "max frame-drop interval must not be negative")
        try check((1...64).contains(threads ?? 1), "threads must be within 1…64")
        try check((1...3).contains(temporalLayers), "temporal layers must be 1, 2 or 3, got \(temporalLayers)")
    }
}
