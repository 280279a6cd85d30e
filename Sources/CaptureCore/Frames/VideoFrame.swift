/// A captured frame: its pixels, size, the rotation a renderer must apply, and when it was captured.
public struct VideoFrame: Sendable {
    /// The pixels (NV12 or I420).
    public var buffer: VideoFrameBuffer
    /// The clockwise rotation to apply for display.
    public var rotation: VideoRotation
    /// Capture time on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds; strictly increasing within a stream.
    public var timestampNs: UInt64
    /// The frame's position in its stream, from 0.
    public var sequenceNumber: UInt64

    /// Creates a frame.
    public init(buffer: VideoFrameBuffer, rotation: VideoRotation, timestampNs: UInt64, sequenceNumber: UInt64 = 0) {
        self.buffer = buffer
        self.rotation = rotation
        self.timestampNs = timestampNs
        self.sequenceNumber = sequenceNumber
    }

    /// Width in pixels (before rotation).
    public var width: Int { buffer.width }
    /// Height in pixels (before rotation).
    public var height: Int { buffer.height }
    /// Width and height (before rotation).
    public var dimensions: Dimensions { buffer.dimensions }
}
