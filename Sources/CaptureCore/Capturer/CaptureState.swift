/// The capturer's state. Transitions: idle → starting → running → stopping → idle; starting or running → failed
/// (on an error); failed → starting (a new start) or idle (stop). With
/// ``CameraVideoCapturer/automaticallyResumes`` on, running → paused when the camera is unplugged, and paused →
/// running when the same camera returns (or stopping, at a stop).
public enum CaptureState: Sendable, Hashable, CustomStringConvertible {
    /// Not capturing.
    case idle
    /// Opening and configuring the device.
    case starting
    /// Delivering frames.
    case running
    /// The camera went away (the error says how, normally `deviceDisconnected`) and the capturer waits for it to
    /// return, with the frame streams open.
    case paused(CaptureError)
    /// Releasing the device.
    case stopping
    /// Stopped by an error.
    case failed(CaptureError)

    /// `"running"`, `"failed(<error>)"`.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .starting: "starting"
        case .running: "running"
        case .paused(let error): "paused(\(error))"
        case .stopping: "stopping"
        case .failed(let error): "failed(\(error))"
        }
    }
}

/// What a running capture uses: the device, the format, and what the device granted.
public struct CaptureConfiguration: Sendable, Hashable, Codable {
    /// The device.
    public var device: CaptureDevice
    /// The format as the device lists it.
    public var format: CaptureFormat
    /// The size asked for.
    public var requestedDimensions: Dimensions
    /// The frame rate asked for.
    public var requestedFPS: Double
    /// What the device granted (size, rate, pixel format).
    public var granted: GrantedFormat
    /// The layout of delivered frames.
    public var output: OutputPixelFormat
}

/// Counters of a capturer since its last start.
public struct CaptureStatistics: Sendable, Hashable, Codable {
    /// Frames the backend produced.
    public var framesCaptured: Int = 0
    /// Frames handed to the delegate and the streams.
    public var framesDelivered: Int = 0
    /// Frames dropped before delivery because the driver flagged them corrupt.
    public var droppedCorrupt: Int = 0
    /// Frames dropped because the buffer was shorter than a full frame.
    public var droppedShort: Int = 0
    /// Frames dropped because they could not be converted.
    public var droppedConversion: Int = 0
    /// Frames dropped because every pooled buffer was still held by consumers.
    public var droppedPoolExhausted: Int = 0
    /// Frames dropped by output-rate adaptation.
    public var droppedRateAdaptation: Int = 0
    /// Frames whose timestamp was not after the previous one and was moved forward to keep the stream increasing.
    public var timestampsAdjusted: Int = 0
    /// Frames the device skipped before they reached the capturer (it had no free buffer, dropped them on purpose, or
    /// lost them): the gaps in a V4L2 driver's frame sequence numbers. Not part of ``framesDropped``, which counts
    /// frames the capturer received and could not deliver.
    public var framesSkippedByDevice: Int = 0

    /// All frames dropped before delivery.
    public var framesDropped: Int {
        droppedCorrupt + droppedShort + droppedConversion + droppedPoolExhausted + droppedRateAdaptation
    }

    mutating func count(_ reason: FrameDropReason) {
        switch reason {
        case .corruptBuffer: droppedCorrupt += 1
        case .shortBuffer: droppedShort += 1
        case .conversionFailed: droppedConversion += 1
        case .poolExhausted: droppedPoolExhausted += 1
        case .rateAdaptation: droppedRateAdaptation += 1
        }
    }
}
