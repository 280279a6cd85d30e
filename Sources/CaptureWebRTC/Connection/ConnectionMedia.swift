public import CaptureCall

/// The video stream a ``WebRTCConnection`` sends once DTLS is connected: how packets are built (payload type, SSRC,
/// header extensions, RTX), the RTCP CNAME and interval, and the rate range the connection steers the encoder in.
///
/// ``sender``'s `remote`, `rtcpMux`, `srtp` and `remoteSRTP` are not used: the connection sends on ICE's path, with
/// the keys DTLS agreed.
public struct ConnectionMedia: Sendable {
    /// Packetization, RTCP, retransmission and metrics settings: of the stream, or of simulcast layer 0 (the lowest
    /// resolution).
    public var sender: VideoSenderConfiguration
    /// The simulcast layers above ``sender``, lowest first (each its own SSRC, RTX SSRC and `rid`; RFC 8853): a frame
    /// whose `EncodedFrame/simulcastIndex` is *i* > 0 goes to `simulcastLayers[i - 1]`. Empty without simulcast.
    ///
    /// Every layer shares the transport: one transport-wide sequence, one pacer, one congestion controller whose
    /// target covers all of them (the encoder's allocator divides it). The first layer's stream takes the feedback
    /// that concerns the whole transport (transport-wide feedback, REMB) and protects our own RTCP feedback; each
    /// stream takes the receiver reports, NACKs, PLIs and FIRs that name its SSRC.
    public var simulcastLayers: [VideoSenderConfiguration] = []
    /// The lowest rate the connection asks of the encoder, in kbit/s.
    public var minBitrateKbps: Int
    /// The highest rate the connection asks of the encoder, in kbit/s.
    public var maxBitrateKbps: Int
    /// The encoder's rate at the start, in kbit/s (the loss-based estimate moves from it).
    public var startBitrateKbps: Int
    /// What steers the rate within the range.
    public var congestionControl: CongestionControlMode
    /// Whether the send-side estimate probes itself when it has gone untested (CaptureCongestion's
    /// `probesStaleEstimate`; off by default).
    public var probesStaleEstimate = false

    /// Every stream's configuration, layer 0 first.
    var streams: [VideoSenderConfiguration] { [sender] + simulcastLayers }

    /// Creates a description.
    public init(
        sender: VideoSenderConfiguration, minBitrateKbps: Int, maxBitrateKbps: Int, startBitrateKbps: Int,
        congestionControl: CongestionControlMode = .transportWide
    ) {
        self.sender = sender
        self.congestionControl = congestionControl
        self.minBitrateKbps = minBitrateKbps
        self.maxBitrateKbps = max(minBitrateKbps, maxBitrateKbps)
        self.startBitrateKbps = min(max(startBitrateKbps, minBitrateKbps), self.maxBitrateKbps)
    }
}
