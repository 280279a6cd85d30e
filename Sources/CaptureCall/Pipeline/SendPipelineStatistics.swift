public import CaptureCore

/// What a ``SendPipeline`` has done so far.
public struct SendPipelineStatistics: Sendable, Hashable, Codable {
    /// Frames the capturer handed to the pipeline (before ``SendPipeline/stop()``).
    public var framesReceived = 0
    /// Frames the video adapter dropped (frame-rate adaptation, or its buffer pool exhausted).
    public var droppedByAdapter = 0
    /// Frames replaced in the one-slot mailbox by a newer frame before the encoder took them.
    public var droppedAtEncoderQueue = 0
    /// Frames libvpx produced output for (each handed to every sink); with simulcast, every layer's frames together.
    public var framesEncoded = 0
    /// Frames libvpx's rate control dropped; with simulcast, every layer's together.
    public var droppedByRateControl = 0
    /// Encoded frames that are key frames; with simulcast, every layer's together.
    public var keyFrames = 0
    /// Key-frame requests, by reason.
    public var keyFramesRequested: [KeyFrameRequestReason: Int] = [:]
    /// Changes of the target bit rate.
    public var bitrateChanges = 0
    /// Resolution steps down for CPU overuse.
    public var resolutionStepsDown = 0
    /// Resolution steps up after CPU underuse.
    public var resolutionStepsUp = 0
    /// The target bit rate in force, in kbit/s.
    public var currentTargetKbps = 0
    /// The size of the last encoded frame, if any; with simulcast, that of the highest layer encoded last.
    public var currentOutputSize: Dimensions?
    /// Mean time spent encoding a frame (including any rotation).
    public var meanEncodeTime: Duration = .zero
    /// Longest time spent encoding a frame.
    public var maxEncodeTime: Duration = .zero
    /// Time spent encoding, all frames together (W3C `totalEncodeTime`).
    public var totalEncodeTime: Duration = .zero
    /// Frames that failed to adapt, rotate or encode.
    public var encodeFailures = 0
    /// Frames the encoder thread dropped unencoded while ``SendPipeline/setCongestionFrameDropping(_:)`` was on.
    public var droppedForCongestion = 0
    /// What limits the sent resolution or frame rate now (W3C `qualityLimitationReason`): ``QualityLimitationReason/cpu``
    /// when the CPU level is the lower resolution, else ``QualityLimitationReason/bandwidth`` when bandwidth lowered the
    /// resolution or the frame rate (a tie counts as bandwidth).
    public var qualityLimitationReason = QualityLimitationReason.none
    /// Time spent in each limitation, measured on the capture times of the frames the encoder handled (W3C
    /// `qualityLimitationDurations`).
    public var qualityLimitationDurations: [QualityLimitationReason: Duration] = [
        .none: .zero, .bandwidth: .zero, .cpu: .zero, .other: .zero,
    ]
    /// Changes of the requested resolution for CPU or bandwidth (W3C `qualityLimitationResolutionChanges`).
    public var qualityLimitationResolutionChanges = 0
    /// Resolution or frame-rate steps down for bandwidth.
    public var bandwidthStepsDown = 0
    /// Resolution or frame-rate steps up for bandwidth.
    public var bandwidthStepsUp = 0
    /// The frame rate sent when bandwidth adaptation lowered it, else `nil`.
    public var limitedFrameRate: Double?
    /// With simulcast, each layer of the current layout, lowest resolution first: its size, whether it is sent, its
    /// bit rate and its counters (see ``SimulcastLayerStatistics``). Empty without simulcast and before the first
    /// frame. Updated by the encoder thread: a bit-rate change shows here once the next frame has been taken.
    public var layers: [SimulcastLayerStatistics] = []
    /// Frames timed (encoded or dropped by rate control).
    var timedFrames: UInt64 = 0

    /// Creates zeroed statistics.
    public init() {}

    mutating func addEncodeTime(_ ns: UInt64) {
        let time = Duration.nanoseconds(Int64(clamping: ns))
        totalEncodeTime += time
        timedFrames += 1
        meanEncodeTime = totalEncodeTime / Int(clamping: timedFrames)
        maxEncodeTime = max(maxEncodeTime, time)
    }
}
