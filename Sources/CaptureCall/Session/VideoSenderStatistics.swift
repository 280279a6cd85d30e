/// What a ``VideoSender`` has done so far.
public struct VideoSenderStatistics: Sendable, Hashable, Codable {
    /// Encoded frames packetized and sent.
    public var frames = 0
    /// RTP packets handed to the socket.
    public var packets = 0
    /// Bytes handed to the socket in RTP packets (headers, payload descriptors and SRTP tags included).
    public var bytes = 0
    /// The part of ``bytes`` that is not VP8 payload: RTP headers, extensions, payload descriptors, SRTP tags.
    public var overheadBytes = 0
    /// Key frames sent.
    public var keyFramesSent = 0
    /// Key frames asked of the pipeline (after a PLI or a new FIR).
    public var keyFramesRequested = 0
    /// PLIs and new FIRs within 300 ms of the last request passed on: answered by that key frame, not another
    /// (WebRTC's minimum key-frame send interval).
    public var keyFrameRequestsThrottled = 0
    /// Picture loss indications received.
    public var plisReceived = 0
    /// Full intra requests naming this stream received (repeated FIR sequence numbers included).
    public var firsReceived = 0
    /// REMB messages received.
    public var rembsReceived = 0
    /// TMMBR messages received.
    public var tmmbrsReceived = 0
    /// Generic NACKs (RFC 4585) received for our SSRC.
    public var nacksReceived = 0
    /// Packets those NACKs asked for (each sequence number once per NACK).
    public var packetsRequested = 0
    /// Packets sent again in answer (as RTX when negotiated).
    public var retransmissions = 0
    /// Bytes sent in retransmissions (protected, as on the wire).
    public var retransmittedBytes = 0
    /// Requests for packets older than the history keeps (or than the maximum age): not served.
    public var retransmissionsTooOld = 0
    /// Requests for sequence numbers we never sent: not served.
    public var retransmissionsUnknown = 0
    /// First transmissions dropped on purpose by ``VideoSenderConfiguration/firstTransmissionLoss``.
    public var firstTransmissionsDropped = 0
    /// The loss-based estimate in kbit/s (with loss-based rate control; `nil` before the first report).
    public var lossBasedEstimateKbps: Int?
    /// The last bit rate a REMB or TMMBR asked for, in kbit/s (0 before any).
    public var lastRequestedBitrateKbps = 0
    /// Receiver reports (report blocks about our SSRC) received.
    public var receiverReports = 0
    /// The last round-trip time computed from a report block (`nil` before any).
    public var roundTripTime: Duration?
    /// The sum of every round-trip time computed from a report block (W3C `totalRoundTripTime`).
    public var totalRoundTripTime: Duration = .zero
    /// How many round-trip times ``totalRoundTripTime`` sums.
    public var roundTripTimeMeasurements = 0
    /// The fraction of our packets the receiver last reported lost (0…1).
    public var remoteFractionLost = 0.0
    /// The receiver's cumulative count of our packets lost, from its last report (RFC 3550 §6.4.1; negative when
    /// duplicates outnumber losses).
    public var remotePacketsLost = 0
    /// The receiver's last interarrival jitter estimate (RFC 3550 §6.4.1), converted from RTP timestamp units at the
    /// video clock rate (90 kHz); `nil` before any report.
    public var remoteJitter: Duration?
    /// RTCP compound packets sent (sender reports with SDES).
    public var rtcpSent = 0
    /// RTCP packets from the peer that did not parse (counted and ignored).
    public var rtcpMalformed = 0
    /// SRTCP packets from the peer that failed authentication or replay checks (counted and ignored).
    public var srtcpFailures = 0
    /// Packets the socket refused (ECONNREFUSED after an ICMP port unreachable, ENOBUFS…): counted, never fatal.
    public var sendErrors = 0
    /// Padding-only packets sent to probe the path (paced sending: see ``RTPSendSession``), on the RTX stream.
    public var paddingPackets = 0
    /// Their bytes, protected.
    public var paddingBytes = 0
    /// Packets the pacer could not take (its store full): lost to the peer, counted, never fatal.
    public var pacerRefused = 0
    /// Glass-to-wire latency: from the frame's capture timestamp to its last packet handed to the socket.
    public var glassToWire = LatencyRecorder.Summary()
    /// Whether the peer has reported on the media SSRC (a report block naming it): from then on packets carry no mid
    /// or rid (RFC 8843, RFC 8852), which the peer needs only to bind the SSRC.
    public var ssrcAcknowledged = false
    /// Whether the peer has reported on the RTX SSRC: until then retransmissions and padding carry the mid and the
    /// repaired rid.
    public var rtxSSRCAcknowledged = false

    /// Creates empty statistics.
    public init() {}
}
