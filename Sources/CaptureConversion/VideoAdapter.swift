public import CaptureCore

/// Adapts captured frames to a requested output format, as WebRTC's `VideoAdapter` does: crops the centre to the
/// requested aspect ratio, scales down to fit the requested size, and drops frames to the requested rate.
///
/// The request is orientation-agnostic: 640x480 also matches a portrait camera, giving 480x640. Frames are never
/// scaled up. Scaled frames come from a ``FrameBufferPool`` the adapter keeps for the output size (the same layout
/// as the input); a frame that needs no cropping or scaling is passed through untouched.
///
/// Frame-rate adaptation follows WebRTC's `FramerateController`: the first frame is kept and the next one is expected
/// half an interval later (a tolerance for jitter); a frame is kept when its timestamp has reached the expected time,
/// which then moves on by one interval. Timestamps far outside the expected range (a pause, a clock jump) restart
/// the schedule. Dropped frames are counted as ``FrameDropReason/rateAdaptation``.
///
/// Thread-safe: the request may change from any thread while another thread adapts frames.
public final class VideoAdapter: Sendable {
    /// What the consumer asked for.
    public struct OutputFormatRequest: Sendable, Hashable, Codable {
        /// Largest output width (or height, for a portrait input); 0 = no limit on size or aspect ratio.
        public var width: Int
        /// Largest output height (or width, for a portrait input); 0 = no limit on size or aspect ratio.
        public var height: Int
        /// Largest output frame rate; 0 = no limit.
        public var fps: Double

        /// Creates a request.
        public init(width: Int, height: Int, fps: Double) {
            self.width = width
            self.height = height
            self.fps = fps
        }
    }

    /// How a frame of a given input size is adapted.
    public struct Adaptation: Sendable, Hashable {
        /// The part of the input kept.
        public var crop: CropRect
        /// The size it is scaled to.
        public var output: Dimensions

        /// Whether the frame passes through unchanged.
        public func isIdentity(for input: Dimensions) -> Bool {
            crop == CropRect(input) && output == input
        }
    }

    /// The outcome for one frame.
    public enum AdaptedFrame: Sendable {
        /// The frame to deliver: the input itself, or a cropped and scaled copy from the adapter's pool.
        case frame(VideoFrameBuffer)
        /// The frame is not delivered, and why (``FrameDropReason/rateAdaptation`` or
        /// ``FrameDropReason/poolExhausted``).
        case dropped(FrameDropReason)
    }

    private struct State {
        var request: OutputFormatRequest?
        var nextFrameTimestampNs: Int64?
        var pool: FrameBufferPool?
        var drops: [FrameDropReason: Int] = [:]
    }

    private let state = Locked(State())
    /// The filter used for scaling.
    public let filter: ScalingFilter
    /// How many output buffers the pool keeps (frames still held by consumers count).
    public let poolCapacity: Int

    /// Creates an adapter with no request (frames pass through).
    public init(filter: ScalingFilter = .bilinear, poolCapacity: Int = 4) {
        self.filter = filter
        self.poolCapacity = max(1, poolCapacity)
    }

    /// The largest width or height a request keeps (larger values mean the same: frames are never scaled up).
    static let maximumDimension = 1 << 16
    /// The lowest frame rate a request keeps; lower positive rates are raised to it.
    static let minimumFPS = 0.001

    /// Requests frames of at most `width` × `height` (either orientation) at most `fps` per second. Zero (or less)
    /// means no limit for that part; a non-finite `fps` means no limit, a positive one below 0.001 is raised to
    /// 0.001. Restarts the frame-rate schedule.
    public func adaptOutputFormat(width: Int, height: Int, fps: Double) {
        let request = OutputFormatRequest(
            width: min(max(0, width), Self.maximumDimension), height: min(max(0, height), Self.maximumDimension),
            fps: fps.isFinite && fps > 0 ? max(fps, Self.minimumFPS) : 0)
        state.withLock {
            $0.request = request
            $0.nextFrameTimestampNs = nil
        }
    }

    /// Removes any request: frames pass through.
    public func resetOutputFormat() {
        state.withLock {
            $0.request = nil
            $0.nextFrameTimestampNs = nil
        }
    }

    /// The current request, if any.
    public var request: OutputFormatRequest? { state.withLock { $0.request } }

    /// Frames dropped so far, by reason.
    public var droppedFrames: [FrameDropReason: Int] { state.withLock { $0.drops } }

    /// How a frame of `input` size is cropped and scaled under the current request.
    public func adaptation(for input: Dimensions) -> Adaptation {
        Self.adaptation(for: input, request: request)
    }

    /// Decides whether the frame captured at `timestampNs` (monotonic nanoseconds) is kept under the requested
    /// frame rate; a dropped frame is counted. ``adapt(_:timestampNs:)`` calls this.
    public func shouldKeepFrame(timestampNs: UInt64) -> Bool {
        state.withLock { state in
            let keep = Self.keep(timestampNs: Int64(clamping: timestampNs), state: &state)
            if !keep { state.drops[.rateAdaptation, default: 0] += 1 }
            return keep
        }
    }

    /// Adapts one frame: drops it for the frame rate, passes it through, or crops and scales it into a pooled buffer.
    ///
    /// - Throws: ``CaptureError`` only if libyuv rejects the scaling (not expected for valid buffers).
    public func adapt(_ buffer: VideoFrameBuffer, timestampNs: UInt64) throws(CaptureError) -> AdaptedFrame {
        guard shouldKeepFrame(timestampNs: timestampNs) else { return .dropped(.rateAdaptation) }
        let (adaptation, output): (Adaptation, VideoFrameBuffer?) = state.withLock { state in
            let adaptation = Self.adaptation(for: buffer.dimensions, request: state.request)
            guard !adaptation.isIdentity(for: buffer.dimensions) else { return (adaptation, nil) }
            if state.pool?.dimensions != adaptation.output || state.pool?.format != buffer.format {
                state.pool = FrameBufferPool(
                    format: buffer.format, dimensions: adaptation.output, capacity: poolCapacity)
            }
            let output = state.pool?.take()
            if output == nil { state.drops[.poolExhausted, default: 0] += 1 }
            return (adaptation, output)
        }
        if adaptation.isIdentity(for: buffer.dimensions) { return .frame(buffer) }
        guard let output else { return .dropped(.poolExhausted) }
        try FrameTransformer.cropAndScale(buffer, crop: adaptation.crop, into: output, filter: filter)
        return .frame(output)
    }

    /// WebRTC's `FramerateController::ShouldDropFrame`, inverted.
    private static func keep(timestampNs: Int64, state: inout State) -> Bool {
        guard let fps = state.request?.fps, fps > 0 else { return true }
        let interval = Int64(1_000_000_000 / fps)
        guard interval > 0 else { return true }
        // Wrapping arithmetic: timestamps are the caller's, and a wild one must restart the schedule, not trap.
        if let next = state.nextFrameTimestampNs {
            let untilNext = next &- timestampNs
            if untilNext.magnitude < UInt64(2 * interval) {
                if untilNext > 0 { return false }
                state.nextFrameTimestampNs = next &+ interval
                return true
            }
        }
        // First frame, or far off schedule: restart, expecting the next frame half an interval from now.
        state.nextFrameTimestampNs = timestampNs &+ interval / 2
        return true
    }

    /// The crop and output size for `input` under `request`.
    static func adaptation(for input: Dimensions, request: OutputFormatRequest?) -> Adaptation {
        guard let request, request.width > 0, request.height > 0 else {
            return Adaptation(crop: CropRect(input), output: input)
        }
        var target = Dimensions(width: request.width, height: request.height)
        let inputPortrait = input.height > input.width, targetPortrait = target.height > target.width
        if inputPortrait != targetPortrait, input.width != input.height, target.width != target.height {
            target = Dimensions(width: target.height, height: target.width)
        }
        let crop = FrameTransformer.centeredCrop(of: input, aspectRatio: target)
        var output = crop.dimensions
        if output.width > target.width || output.height > target.height {
            if crop.width * target.height >= crop.height * target.width {
                output = Dimensions(
                    width: target.width, height: max(1, (crop.height * target.width + crop.width / 2) / crop.width))
            } else {
                output = Dimensions(
                    width: max(1, (crop.width * target.height + crop.height / 2) / crop.height), height: target.height)
            }
        }
        return Adaptation(crop: crop, output: output)
    }
}
