internal import CaptureCall

/// One viewer's stand-in for the shared simulcast encoder: what the viewer's transport is attached to
/// (`WebRTCTransport.attach(to:)`), so that its estimate, key-frame requests and congestion frame dropping reach
/// the ``ViewerFanout`` as that viewer's, not the pipeline directly.
///
/// - ``setTargetBitrate(kbps:reason:)``: the viewer's estimate, for its layer selector; the encoder's target becomes
///   the largest estimate of the viewers. Returns that target.
/// - ``requestKeyFrame(reason:simulcastIndex:)``: a key frame of the viewer's own layer (its connection has one
///   stream, so the index it names is ignored).
/// - ``setCongestionFrameDropping(_:)``: pauses this viewer and moves it a layer down; the encoder goes on.
///
/// Immutable; every method may be called from any thread (the viewer's driver thread) and only takes the fan-out's
/// locks briefly. The session keeps it alive (the transport holds it weakly).
final class ViewerEncoderControl<Viewer: EncodedFrameSink>: EncoderControl {
    let fanout: ViewerFanout<Viewer>
    let viewerID: String

    init(fanout: ViewerFanout<Viewer>, viewerID: String) {
        self.fanout = fanout
        self.viewerID = viewerID
    }

    func requestKeyFrame(reason: KeyFrameRequestReason, simulcastIndex: Int?) {
        fanout.keyFrameWanted(reason: reason, viewer: viewerID)
    }

    @discardableResult
    func setTargetBitrate(kbps: Int, reason: BitrateChangeReason) -> Int {
        fanout.setEstimate(kbps, reason: reason, viewer: viewerID)
    }

    func setCongestionFrameDropping(_ drop: Bool) {
        fanout.setCongested(drop, viewer: viewerID)
    }
}
