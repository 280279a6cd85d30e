public import CaptureVP8

/// Where a ``SendPipeline`` delivers encoded frames: an RTP sender, an IVF file, a test recorder.
///
/// The pipeline calls ``consume(_:)`` on its encoder thread, one frame at a time, in encoding order, and
/// ``finish()`` once when it stops, after the last ``consume(_:)`` has returned. A sink must not block for long: the
/// encoder waits for it. Errors stay inside the sink (count or keep them); they never stop the pipeline.
public protocol EncodedFrameSink: AnyObject, Sendable {
    /// Takes one encoded frame (on the encoder thread, in order).
    func consume(_ frame: EncodedFrame)
    /// The pipeline stopped: no frame follows. Called once.
    func finish()
}
