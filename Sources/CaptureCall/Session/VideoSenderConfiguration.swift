public import CaptureNet
public import CaptureRTP

/// How a ``VideoSender`` sends: where to, how packets are built, RTCP and SRTP.
public struct VideoSenderConfiguration: Sendable {
    /// Where RTP goes.
    public var remote: SocketAddress
    /// Whether RTCP shares the RTP port (`a=rtcp-mux`); otherwise it goes to the next port up, as RFC 3550 §11 has it,
    /// from a local port one above the RTP socket's.
    public var rtcpMux: Bool
    /// How packets are built (size, payload type, SSRC, CVO extension). The SRTP trailer room is added as needed.
    public var packetizer: RTPPacketizerConfiguration
    /// The canonical name sent in SDES with every sender report.
    public var cname: String
    /// The nominal RTCP report interval (RFC 3550 randomises each to 0.5…1.5 times it).
    public var rtcpInterval: Duration
    /// SRTP keys and profile, or `nil` for plain RTP.
    public var srtp: SRTPKeyingMaterial?
    /// The peer's SRTP keys, which its SRTCP is protected with; `nil` means the same as ``srtp`` (SDES as
    /// `capturer-probe send` uses it). DTLS-SRTP gives each direction its own.
    public var remoteSRTP: SRTPKeyingMaterial?
    /// Answer generic NACKs from a history of sent packets (RTX when it has a payload type), or `nil` to only count
    /// them.
    public var retransmission: RetransmissionConfiguration?
    /// Steer the encoder by the loss receivers report too (``LossBasedBitrateEstimator``: WebRTC's classic rule),
    /// with REMB and TMMBR as a ceiling over it; off, only REMB and TMMBR set the rate.
    public var lossBasedRateControl: Bool
    /// Drops this share of first transmissions on the way out, never retransmissions, reproducibly (the kernel's
    /// netem is not always available): exercises the receiver's NACKs and our answers. `nil` drops nothing.
    public var firstTransmissionLoss: SimulatedLoss?
    /// The camera's id, the `device` dimension of the sender's metrics (`camera_rtp_sender_*`, reported through
    /// swift-metrics once the app bootstraps a backend).
    public var metricsDeviceID: String

    /// Creates a configuration.
    public init(
        remote: SocketAddress, rtcpMux: Bool = false, packetizer: RTPPacketizerConfiguration = .init(),
        cname: String = "capturer-probe", rtcpInterval: Duration = .seconds(1), srtp: SRTPKeyingMaterial? = nil,
        remoteSRTP: SRTPKeyingMaterial? = nil, retransmission: RetransmissionConfiguration? = nil,
        firstTransmissionLoss: SimulatedLoss? = nil, lossBasedRateControl: Bool = false,
        metricsDeviceID: String = "unknown"
    ) {
        self.lossBasedRateControl = lossBasedRateControl
        self.remote = remote
        self.rtcpMux = rtcpMux
        self.packetizer = packetizer
        self.cname = cname
        self.rtcpInterval = rtcpInterval
        self.srtp = srtp
        self.remoteSRTP = remoteSRTP
        self.retransmission = retransmission
        self.firstTransmissionLoss = firstTransmissionLoss
        self.metricsDeviceID = metricsDeviceID
    }
}
