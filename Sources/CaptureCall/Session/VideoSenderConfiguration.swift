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
    /// The nominal RTCP report interval in nanoseconds (RFC 3550 randomises each to 0.5…1.5 times it).
    public var rtcpIntervalNs: UInt64
    /// SRTP keys and profile, or `nil` for plain RTP.
    public var srtp: SRTPKeyingMaterial?
    /// The camera's id, the `device` dimension of the sender's metrics (`camera_rtp_sender_*`, reported through
    /// swift-metrics once the app bootstraps a backend).
    public var metricsDeviceID: String

    /// Creates a configuration.
    public init(
        remote: SocketAddress, rtcpMux: Bool = false, packetizer: RTPPacketizerConfiguration = .init(),
        cname: String = "capturer-probe", rtcpIntervalNs: UInt64 = 1_000_000_000, srtp: SRTPKeyingMaterial? = nil,
        metricsDeviceID: String = "unknown"
    ) {
        self.remote = remote
        self.rtcpMux = rtcpMux
        self.packetizer = packetizer
        self.cname = cname
        self.rtcpIntervalNs = rtcpIntervalNs
        self.srtp = srtp
        self.metricsDeviceID = metricsDeviceID
    }
}
