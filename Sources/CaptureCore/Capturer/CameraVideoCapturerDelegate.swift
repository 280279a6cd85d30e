/// Receives frames and lifecycle events from a ``CameraVideoCapturer``.
///
/// Frames arrive on the capture thread, one at a time, in order; return quickly (hand heavy work to another queue)
/// or the camera's buffers back up and frames are dropped.
public protocol CameraVideoCapturerDelegate: AnyObject, Sendable {
    /// A new frame.
    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame)
    /// A frame was dropped before delivery, and why.
    func capturer(_ capturer: CameraVideoCapturer, didDropFrameFor reason: FrameDropReason)
    /// Capture stopped: `error` is `nil` after ``CameraVideoCapturer/stopCapture()`` or at the end of a finite
    /// source, else the failure that stopped it (for example ``CaptureError/Code-swift.struct/deviceDisconnected``).
    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?)
    /// The camera went away and the capturer waits for it to return
    /// (``CameraVideoCapturer/automaticallyResumes``); the frame streams stay open.
    func capturer(_ capturer: CameraVideoCapturer, didPauseWith error: CaptureError)
    /// The same camera returned and capture resumed in the same format; `configuration` is what it uses now (the
    /// node may differ).
    func capturer(_ capturer: CameraVideoCapturer, didResumeWith configuration: CaptureConfiguration)
}

extension CameraVideoCapturerDelegate {
    /// Does nothing.
    public func capturer(_ capturer: CameraVideoCapturer, didDropFrameFor reason: FrameDropReason) {}
    /// Does nothing.
    public func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {}
    /// Does nothing.
    public func capturer(_ capturer: CameraVideoCapturer, didPauseWith error: CaptureError) {}
    /// Does nothing.
    public func capturer(_ capturer: CameraVideoCapturer, didResumeWith configuration: CaptureConfiguration) {}
}
