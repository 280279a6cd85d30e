public import CaptureNet
public import CaptureRTP

/// How a ``VideoReceiver`` receives: where it listens, how it reassembles, RTCP, SRTP, simulated loss and output.
public struct VideoReceiverConfiguration: Sendable {
    /// Where RTP arrives (`0.0.0.0:P`, `127.0.0.1:P`, `[::1]:P`).
    public var local: SocketAddress
    /// Whether RTCP shares the RTP port (`a=rtcp-mux`); otherwise it is received on the next port up and sent to the
    /// port above the sender's RTP port (RFC 3550 §11).
    public var rtcpMux: Bool
    /// How frames are reassembled (payload type, reorder window, PLI pacing).
    public var assembler: RTPReceiverConfiguration
    /// The receiver's own SSRC, used in its reports and PLIs.
    public var ssrc: UInt32
    /// The canonical name sent in SDES with every receiver report.
    public var cname: String
    /// The nominal RTCP report interval.
    public var rtcpInterval: Duration
    /// SRTP keys, or `nil` for plain RTP. Packets that fail authentication are counted and never decoded.
    public var srtp: SRTPKeyingMaterial?
    /// Simulated loss of arriving RTP packets, or `nil` for none.
    public var loss: SimulatedLoss?
    /// An IVF file to write the received (complete, decodable) frames to, or `nil`.
    public var outputPath: String?
    /// The RFC 8285 id (1...14) under which the sender's packets carry the transport-wide sequence number
    /// (`TransportSequenceNumberExtension`), or `nil`. With it, the receiver records each arriving packet's number
    /// and sends transport-wide feedback (RTCP RTPFB 15) to the sender every 100 ms, for its congestion control.
    public var transportSequenceNumberExtensionID: UInt8?

    /// Creates a configuration.
    public init(
        local: SocketAddress, rtcpMux: Bool = false, assembler: RTPReceiverConfiguration = .init(),
        ssrc: UInt32 = .random(in: .min ... .max), cname: String = "capturer-probe-receiver",
        rtcpInterval: Duration = .seconds(1), srtp: SRTPKeyingMaterial? = nil, loss: SimulatedLoss? = nil,
        outputPath: String? = nil, transportSequenceNumberExtensionID: UInt8? = nil
    ) {
        self.local = local
        self.rtcpMux = rtcpMux
        self.assembler = assembler
        self.ssrc = ssrc
        self.cname = cname
        self.rtcpInterval = rtcpInterval
        self.srtp = srtp
        self.loss = loss
        self.outputPath = outputPath
        self.transportSequenceNumberExtensionID = transportSequenceNumberExtensionID
    }
}
