/// What a connection steers in the encoder that feeds it: key frames, the target bit rate and congestion frame
/// dropping, as the peer's feedback and the congestion controller ask.
///
/// ``SendPipeline`` is one; a stand-in that shares one pipeline among several connections is another (the preview's
/// per-viewer control, which turns a viewer's requests into a choice of simulcast layer for that viewer). A
/// connection holds its control weakly: the owner keeps it alive.
///
/// ## Threading
/// Every method may be called from any thread (a connection's driver or RTCP thread), often several times a second:
/// each must be cheap and must not block.
public protocol EncoderControl: AnyObject, Sendable {
    /// Asks for a key frame: of every layer (`simulcastIndex` `nil`), or of one simulcast layer (0 is the lowest;
    /// without simulcast the one stream is layer 0).
    func requestKeyFrame(reason: KeyFrameRequestReason, simulcastIndex: Int?)

    /// Sets the target bit rate in kbit/s (the connection's estimate for what it carries).
    ///
    /// - Returns: The bit rate applied, in kbit/s.
    @discardableResult
    func setTargetBitrate(kbps: Int, reason: BitrateChangeReason) -> Int

    /// Turns frame dropping for congestion on (the connection's pacer queue or congestion window is full) or off.
    func setCongestionFrameDropping(_ drop: Bool)

    /// The rate, kbit/s, the connection should pad what it sends up to while its estimate allows (0: no padding); a
    /// ``SendPipeline``'s is its simulcast layout's (``SendPipeline/paddingTargetKbps``). Read again with every batch
    /// of frames the connection takes.
    var paddingTargetKbps: Int { get }
}

extension EncoderControl {
    /// No padding: what a stand-in that does not say otherwise wants.
    public var paddingTargetKbps: Int { 0 }
}

extension SendPipeline: EncoderControl {}

/// A weak reference to what a connection steers (a ``SendPipeline``, or a stand-in): the connection does not keep
/// its encoder alive, since the encoder holds the connection as its sink.
package struct WeakEncoderControl {
    /// The control: a ``SendPipeline``, as its name says, or a stand-in for one.
    package weak var pipeline: (any EncoderControl)?

    package init() {}
}
