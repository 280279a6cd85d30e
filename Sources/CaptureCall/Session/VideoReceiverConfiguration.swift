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
    /// The nominal RTCP report interval in nanoseconds.
    public var rtcpIntervalNs: UInt64
    /// SRTP keys, or `nil` for plain RTP. Packets that fail authentication are counted and never decoded.
    public var srtp: SRTPKeyingMaterial?
    /// Simulated loss of arriving RTP packets, or `nil` for none.
    public var loss: PacketLossSimulator?
    /// An IVF file to write the received (complete, decodable) frames to, or `nil`.
    public var outputPath: String?

    /// Creates a configuration.
    public init(
        local: SocketAddress, rtcpMux: Bool = false, assembler: RTPReceiverConfiguration = .init(),
        ssrc: UInt32 = .random(in: .min ... .max), cname: String = "capturer-probe-receiver",
        rtcpIntervalNs: UInt64 = 1_000_000_000, srtp: SRTPKeyingMaterial? = nil, loss: PacketLossSimulator? = nil,
        outputPath: String? = nil
    ) {
        self.local = local
        self.rtcpMux = rtcpMux
        self.assembler = assembler
        self.ssrc = ssrc
        self.cname = cname
        self.rtcpIntervalNs = rtcpIntervalNs
        self.srtp = srtp
        self.loss = loss
        self.outputPath = outputPath
    }
}

/// What a ``VideoReceiver`` has seen so far.
public struct VideoReceiverStatistics: Sendable, Hashable, Codable {
    /// Datagrams that arrived on the RTP socket (before simulated loss).
    public var datagrams = 0
    /// RTP packets dropped on purpose by the loss simulator.
    public var packetsDroppedBySimulation = 0
    /// RTP packets passed to the reassembler.
    public var packets = 0
    /// Bytes of those packets.
    public var bytes = 0
    /// Packets lost (sequence gaps the reorder window did not fill).
    public var packetsLost = 0
    /// Frames the reassembler finished or gave up: ``framesComplete`` + ``framesLost``.
    public var framesReceived = 0
    /// Frames complete and decodable.
    public var framesComplete = 0
    /// Frames given up (missing packets, or a delta frame while waiting for a key frame).
    public var framesLost = 0
    /// Frames the VP8 decoder turned into pictures.
    public var framesDecoded = 0
    /// Key frames among the decoded frames.
    public var keyFramesDecoded = 0
    /// Frames the decoder rejected (counted; the receiver then waits for a key frame).
    public var decodeErrors = 0
    /// Picture loss indications sent.
    public var plisSent = 0
    /// Receiver reports sent.
    public var receiverReportsSent = 0
    /// Sender reports received.
    public var senderReportsReceived = 0
    /// Interarrival jitter (RFC 3550 §6.4.1), in milliseconds.
    public var jitterMs = 0.0
    /// The received RTP bit rate since the first packet, in kbit/s.
    public var bitrateKbps = 0.0
    /// Packets that failed SRTP/SRTCP authentication or replay checks (never decoded).
    public var srtpFailures = 0
    /// RTP or RTCP packets that did not parse (counted and ignored).
    public var malformed = 0
    /// RTCP packets the socket refused to send (counted; never fatal).
    public var sendErrors = 0

    /// Creates empty statistics.
    public init() {}
}
