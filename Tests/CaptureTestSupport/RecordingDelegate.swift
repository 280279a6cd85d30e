package import CaptureCore

/// Records what a delegate sees, keeping no frame (holding frames would starve the capturer's buffer pool).
package final class RecordingDelegate: CameraVideoCapturerDelegate {
    package struct Seen: Sendable {
        package var timestampNs: UInt64
        package var dimensions: Dimensions
        package var format: OutputPixelFormat
        package var strides: [Int]
        package var offsets: [Int]
        package var rotation: VideoRotation
        package var firstLuma: UInt8
        /// When the delegate received the frame (monotonic clock).
        package var deliveredNs: UInt64
    }
    package let frames = Locked<[Seen]>([])
    package let stops = Locked<[CaptureError?]>([])
    package let drops = Locked<[FrameDropReason]>([])

    package init() {}

    package func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let luma = frame.buffer.withUnsafeBytes(plane: 0) { $0[0] }
        let seen = Seen(
            timestampNs: frame.timestampNs, dimensions: frame.dimensions, format: frame.buffer.format,
            strides: frame.buffer.planes.map(\.stride), offsets: frame.buffer.planes.map(\.offset),
            rotation: frame.rotation, firstLuma: luma, deliveredNs: MonotonicClock.nowNs())
        frames.withLock { $0.append(seen) }
    }
    package func capturer(_ capturer: CameraVideoCapturer, didDropFrameFor reason: FrameDropReason) {
        drops.withLock { $0.append(reason) }
    }
    package func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        stops.withLock { $0.append(error) }
    }
    package var count: Int { frames.withLock { $0.count } }
}
