public import CaptureDTLS
public import CaptureICE
public import CaptureNet
public import CaptureCall
public import CaptureVP8
internal import CaptureCore
internal import CaptureRTP
public import Logging

/// One WebRTC connection as a sans-IO state machine: ICE (with TURN), DTLS-SRTP, the RTP session of the video it
/// sends, its RTCP schedule and consent, driven forward by inputs and drained of outputs, with no sockets, no
/// threads, no locks and no clock of its own.
///
/// ## Inputs
/// - ``handle(datagram:from:to:at:)``: a datagram received on one of the local addresses (STUN, DTLS, SRTP, SRTCP
///   and TURN, told apart by RFC 7983);
/// - ``handleTimeout(at:)``: once ``nextTimeout`` has come;
/// - commands: ``start(remote:media:at:)``, ``addRemoteCandidate(_:at:)``, ``addICEServers(stun:turn:at:)``,
///   ``send(frame:at:)``, ``sendPictureLossIndication(mediaSSRC:at:)``, ``sendNACK(mediaSSRC:sequenceNumbers:at:)``
///   and ``close(at:)``.
///
/// ## Outputs
/// After any input, the owner drains ``pollTransmit()`` (datagrams to send, lent until the next call) and
/// ``pollEvent()`` (candidates, connected with the keys, state changes, key-frame requests, rate changes, failure),
/// then waits for a datagram or ``nextTimeout``, whichever comes first (str0m's `poll_output` loop).
///
/// ## State
/// ``state`` is derived from one enum whose cases carry their data: the DTLS endpoint exists only from
/// ``start(remote:media:at:)`` on, the SRTP sessions and the RTP session only once DTLS is connected, so nothing
/// can be read in a state where it means nothing.
///
/// ## Time
/// Every input carries its instant; the connection never reads a clock. ``MediaClock`` relates those instants to
/// the frames' capture clock and to NTP for sender reports. One exception is contained in `DTLSEndpoint`: OpenSSL
/// keeps its handshake retransmission timers on the real monotonic clock, so in virtual time a lost handshake flight
/// is resent only once that much real time has passed (``nextTimeout`` still reports OpenSSL's deadline, and the
/// handshake's 30 s limit runs on the given instants).
///
/// ## Threading
/// Not thread-safe and not `Sendable`: one owner (a driver thread, or a test) makes every call. OpenSSL's `SSL`
/// object and error queue require it.
///
/// ## Performance
/// ``send(frame:at:)`` and the ``pollTransmit()`` that follows allocate nothing per packet in steady state: the RTP
/// session packetizes in a reused buffer, the pacer holds the packets in a slab of reused slots, they are protected
/// in place as they leave, and the outgoing datagrams sit in a slab of reused slots (ChannelData framed in place on a
/// relayed path).
///
/// ## Pacing
/// What the stream sends waits in a pacer and leaves in short bursts at the pacing rate, retransmissions first, with
/// the estimator's probe clusters at their own rate (padding on the RTX stream when no media waits): a frame's
/// packets leave over the next few tens of milliseconds, after ``send(frame:at:)`` returns, as ``handleTimeout(at:)``
/// runs at ``nextTimeout``. See `Pacing` for the rates and when the encoder is told to drop frames
/// (``ConnectionEvent/frameDroppingChanged(_:)``).
///
/// ## Simulcast
/// With ``ConnectionMedia/simulcastLayers``, each layer is its own RTP stream (SSRC, RTX SSRC, `rid`) on the one
/// transport: ``send(frame:at:)`` routes a frame by its `EncodedFrame/simulcastIndex`; the peer's RTCP is unprotected
/// and parsed once, then each stream takes what names its SSRC (receiver reports, NACKs answered on its own RTX
/// stream, PLI and FIR as ``ConnectionEvent/keyFrameRequested(_:simulcastIndex:)`` of that layer only), and layer 0's
/// stream takes what concerns the whole transport (transport-wide feedback, REMB) once. One pacer, one transport-wide
/// sequence and one congestion controller serve every layer; its target is the sum the encoder's allocator divides.
///
/// ## Transport-wide congestion control
/// When negotiated (``ConnectionMedia``'s packetizer has the extension id), every RTP packet we send, RTX included,
/// carries the connection's next transport-wide sequence number, written before SRTP and recorded with its send
/// instant and RTP size; the peer's feedback becomes reports kept for a congestion controller and counted in
/// ``statistics`` (``TransportWideCCStatistics``). When the peer numbers what it sends
/// (``Remote/transportWideCCExtensionID``), we record each arrival and send feedback every 100 ms.
///
/// ## RFCs
/// ICE (RFC 8445), consent (RFC 7675), TURN (RFC 8656), DTLS-SRTP (RFC 5763, RFC 5764), demultiplexing (RFC 7983),
/// RTP/RTCP (RFC 3550, RFC 4585, RFC 5104), RTX (RFC 4588), VP8 payload (RFC 7741), transport-wide congestion
/// control (draft-holmer-rmcat-transport-wide-cc-extensions-01).
public final class WebRTCConnection {
    /// How the connection gathers and connects.
    public struct Configuration: Sendable {
        /// Our ICE role: controlling when we offer (a WHIP publisher), controlled when we answer (a WHEP endpoint).
        public var role: ICERole
        /// The local addresses candidates are gathered from, each with the port of the socket it is received on (one
        /// socket per address family).
        public var hostAddresses: [SocketAddress]
        /// STUN servers to learn server-reflexive candidates from.
        public var stunServers: [SocketAddress]
        /// TURN servers to gather relayed candidates from.
        public var turnServers: [TURNServer]
        /// Which candidates are offered and paired.
        public var transportPolicy: ICETransportPolicy
        /// The largest DTLS datagram.
        public var mtu: Int
        /// Our ICE credentials.
        public var credentials: ICECredentials

        /// Creates a configuration (fresh random credentials unless given).
        public init(
            role: ICERole, hostAddresses: [SocketAddress], stunServers: [SocketAddress] = [],
            turnServers: [TURNServer] = [], transportPolicy: ICETransportPolicy = .all, mtu: Int = 1_200,
            credentials: ICECredentials = .random()
        ) {
            self.role = role
            self.hostAddresses = hostAddresses
            self.stunServers = stunServers
            self.turnServers = turnServers
            self.transportPolicy = transportPolicy
            self.mtu = mtu
            self.credentials = credentials
        }
    }

    /// What the peer said about itself (from its SDP).
    public struct Remote: Sendable {
        /// Its ICE credentials.
        public var credentials: ICECredentials
        /// Its candidates (more may be added with ``WebRTCConnection/addRemoteCandidate(_:at:)``).
        public var candidates: [ICECandidate]
        /// Its certificate's fingerprint.
        public var fingerprint: DTLSFingerprint
        /// Our DTLS role, from its `a=setup`.
        public var dtlsRole: DTLSRole
        /// Whether it said `a=end-of-candidates` (then ICE fails as soon as every pair has).
        public var endOfCandidates: Bool
        /// The RFC 8285 id under which the peer's RTP carries the transport-wide sequence number (its `a=extmap` of
        /// the draft-holmer URI, when the descriptions also agreed `transport-cc`), or `nil`. With it, each packet
        /// that arrives is recorded and transport-wide feedback (RTCP RTPFB 15) goes back every 100 ms, protected
        /// with SRTCP like our other RTCP. (What we send is numbered when ``ConnectionMedia``'s packetizer has an
        /// id: in a BUNDLE the two are the same negotiated id.)
        public var transportWideCCExtensionID: UInt8?

        /// Creates a description of the peer.
        public init(
            credentials: ICECredentials, candidates: [ICECandidate], fingerprint: DTLSFingerprint, dtlsRole: DTLSRole,
            endOfCandidates: Bool = false, transportWideCCExtensionID: UInt8? = nil
        ) {
            self.endOfCandidates = endOfCandidates
            self.transportWideCCExtensionID = transportWideCCExtensionID
            self.credentials = credentials
            self.candidates = candidates
            self.fingerprint = fingerprint
            self.dtlsRole = dtlsRole
        }
    }

    /// The connection's state as its owner sees it.
    public enum State: Sendable, Hashable {
        /// Gathering; waiting for the peer's description.
        case new
        /// ICE checks and the DTLS handshake are under way.
        case connecting
        /// DTLS is connected: the SRTP keys are known and media may flow.
        case connected(DTLSSRTPKeys)
        /// ICE or DTLS failed, or consent was lost.
        case failed(WebRTCTransportError)
        /// Closed.
        case closed
    }

    /// The handshake under way: the DTLS endpoint and what to send once it is done.
    struct Handshake {
        let dtls: DTLSEndpoint
        let dtlsRole: DTLSRole
        let media: ConnectionMedia?
        var dtlsStarted: Bool
    }

    /// A connected connection: the keys, the SRTP sessions and the stream it sends.
    struct Established {
        let dtls: DTLSEndpoint
        let keys: DTLSSRTPKeys
        /// The streams we send, simulcast layer 0 first (empty for a connection that only receives).
        let streams: [RTPSendSession]
        /// Every stream's SSRC (for the first stream, which takes the feedback for all of them).
        let ssrcs: Set<UInt32>
        let range: ClosedRange<Int>
        /// The rate the encoder was last asked for.
        var targetKbps: Int
        /// Unprotects the peer's SRTP.
        let srtpIn: SRTPSession
        /// The SSRC our own RTCP feedback is sent from.
        let feedbackSSRC: UInt32
        /// Protects our own RTCP feedback when there is no stream of ours to send it with (the stream's session does
        /// otherwise: two senders on one key would reuse SRTCP indexes).
        let feedbackSRTCP: SRTPSession?

        /// The stream (or simulcast layer 0) that takes the transport's shared feedback; `nil` when receiving only.
        var media: RTPSendSession? { streams.first }
    }

    /// Where the connection is; each case carries what is meaningful in it.
    enum Phase {
        case new
        case connecting(Handshake)
        case connected(Established)
        case failed(WebRTCTransportError)
        case closed
    }

    /// Where media to the peer goes: straight, or through our TURN allocation (ChannelData once the channel is bound).
    struct Route {
        var pair: ICECandidatePair
        var relayServer: SocketAddress?
        var channel: UInt16?
    }

    /// Our ICE credentials (for the offer).
    public var localCredentials: ICECredentials { configuration.credentials }
    /// Our certificate (its fingerprint goes in the offer).
    public let certificate: DTLSCertificate
    /// How the connection was configured.
    public let configuration: Configuration
    /// How instants relate to the frames' clock and NTP.
    public let clock: MediaClock

    let ice: ICEAgent
    var phase = Phase.new
    /// The host address of each family (the socket a datagram leaves from), looked up once.
    let hostIPv4: SocketAddress?
    let hostIPv6: SocketAddress?
    /// The route media takes (the selected pair while consent holds), worked out after each input rather than per
    /// packet: ICE changes it only in its own inputs and timeouts.
    var mediaPath: Route?
    /// The selected pair's remote address, worked out after each input like ``mediaPath`` (whatever consent says):
    /// what a received datagram is compared with to count the pair's traffic, without a pair lookup per datagram.
    var selectedRemote: SocketAddress?
    let transmits: TransmitQueue
    var events: [ConnectionEvent] = []
    var startNs: UInt64 = 0
    var counters = WebRTCTransportStatistics()
    /// Everything received, and what the selected pair carried, for the W3C stats (the transport's sent figures are
    /// the transmit queue's).
    var received = TrafficCount()
    var pairSent = TrafficCount()
    var pairReceived = TrafficCount()
    var selectedPairChanges = 0
    /// Our DTLS role, from the peer's description.
    var dtlsRole: DTLSRole?
    /// The streams' SSRCs and last figures, kept when the connection leaves ``Phase/connected`` (closed or failed).
    var finalStreams: [SentStream] = []
    /// The id the peer's packets carry the transport-wide sequence number under (from ``Remote``).
    var receiveTransportWideID: UInt8?
    /// Numbers what we send and reads the peer's transport-wide feedback: the connection's one counter, shared with
    /// the stream's RTP session (`nil` unless negotiated). Kept after the connected phase, for its figures.
    var transportWide: TransportWideSender?
    /// Records the peer's transport-wide numbers and makes our feedback (`nil` unless the peer numbers its packets).
    /// A stored property, not part of ``phase``: it is mutated in place per packet, never copied.
    var feedbackGenerator: TransportFeedbackGenerator?
    /// The send-side congestion controller (`nil` unless transport-wide feedback is negotiated and we send a stream).
    /// A stored property, not part of ``phase``: it is mutated in place per feedback, never copied.
    var congestion: CongestionControl?
    /// The pacer and the packets it holds (`nil` until connected with a stream to send). A stored property, not part
    /// of ``phase``: it is mutated in place per packet, never copied.
    var pacing: Pacing?
    /// What the owner asked padding to fill up to (``setPaddingTarget(kbps:)``), kbit/s.
    var paddingTargetKbps = 0
    /// The last transport-wide feedback reports (see `onTransportFeedback(_:at:)`).
    var transportReports = TransportReportBuffer(capacity: 16)
    /// Transport-wide feedback messages we sent.
    var transportFeedbackSent = 0
    let logger: Logger

    /// Creates a connection that gathers from `configuration`'s addresses and servers (from the first
    /// ``handleTimeout(at:)`` on), with `certificate` (a fresh one unless given).
    public init(
        configuration: Configuration, certificate: DTLSCertificate, clock: MediaClock,
        logger: Logger = Logger(label: "capture.webrtc.connection")
    ) {
        self.configuration = configuration
        self.certificate = certificate
        self.clock = clock
        self.logger = logger
        // Room for an RTP packet, its SRTP trailer and a ChannelData header (or a Send indication's attributes).
        hostIPv4 = configuration.hostAddresses.first { $0.family == .ipv4 }
        hostIPv6 = configuration.hostAddresses.first { $0.family == .ipv6 }
        transmits = TransmitQueue(slots: 64, slotSize: max(2_048, configuration.mtu + 256))
        events.reserveCapacity(16)
        ice = ICEAgent(
            configuration: ICEAgent.Configuration(
                role: configuration.role, localCredentials: configuration.credentials,
                hostAddresses: configuration.hostAddresses, stunServers: configuration.stunServers,
                turnServers: configuration.turnServers, transportPolicy: configuration.transportPolicy))
    }

    // MARK: State

    /// The state now.
    public var state: State {
        switch phase {
        case .new: .new
        case .connecting: .connecting
        case .connected(let established): .connected(established.keys)
        case .failed(let error): .failed(error)
        case .closed: .closed
        }
    }

    /// Our local candidates so far (for the offer).
    public var localCandidates: [ICECandidate] { ice.localCandidates }
    /// Whether every STUN and TURN server answered or gave up.
    public var isGatheringComplete: Bool { ice.isGatheringComplete }
    /// The figures so far.
    public var statistics: WebRTCTransportStatistics {
        var statistics = counters
        statistics.transportWideCC = transportWideStatistics
        statistics.pacer = pacerStatistics
        return statistics
    }
    /// ICE's state now.
    public var iceState: ICEState { ice.state }
    /// The ICE agent's figures.
    public var iceStatistics: ICEStatistics { ice.statistics }
    /// The TURN allocations' figures, one per TURN server.
    public var turnAllocations: [TURNAllocationStatistics] { ice.turnAllocations }
    /// The selected ICE pair, if any.
    public var selectedPair: ICECandidatePair? { ice.selectedPair }
    /// The sent stream's figures (simulcast layer 0's), once connected with a stream.
    public var mediaStatistics: VideoSenderStatistics? {
        sentStreams.first?.statistics
    }

    /// Each sent stream's figures, simulcast layer 0 first (one entry without simulcast), once connected.
    public var layerStatistics: [VideoSenderStatistics] {
        sentStreams.map(\.statistics)
    }
    /// Whether `address` is one of our TURN servers.
    public func isTURNServer(_ address: SocketAddress) -> Bool { ice.isTURNServer(address) }

    // MARK: Commands

    /// Takes the peer's description and starts checking pairs; DTLS starts once ICE has a pair (at once as the
    /// server, which waits for the peer's ClientHello). Once DTLS is connected, `media` (if any) is sent with
    /// ``send(frame:at:)``.
    public func start(remote: Remote, media: ConnectionMedia?, at now: ContinuousClock.Instant) {
        guard case .new = phase else { return }
        let nowNs = clock.nanoseconds(at: now)
        startNs = nowNs
        dtlsRole = remote.dtlsRole
        receiveTransportWideID = remote.transportWideCCExtensionID.flatMap { (1...14).contains($0) ? $0 : nil }
        ice.setRemote(credentials: remote.credentials)
        for candidate in remote.candidates { ice.addRemoteCandidate(candidate) }
        if remote.endOfCandidates { ice.endOfCandidates() }
        do {
            let dtls = try DTLSEndpoint(
                role: remote.dtlsRole, certificate: certificate, remoteFingerprint: remote.fingerprint,
                mtu: configuration.mtu)
            phase = .connecting(Handshake(dtls: dtls, dtlsRole: remote.dtlsRole, media: media, dtlsStarted: false))
        } catch {
            fail(WebRTCTransportError(.dtlsFailed, "DTLS setup failed: \(error)"))
        }
        ice.handleTimeout(nowNs: nowNs)
        advance(nowNs: nowNs)
    }

    /// Adds a candidate the peer trickled.
    public func addRemoteCandidate(_ candidate: ICECandidate, at now: ContinuousClock.Instant) {
        ice.addRemoteCandidate(candidate)
        advance(nowNs: clock.nanoseconds(at: now))
    }

    /// The peer trickled end-of-candidates.
    public func endOfRemoteCandidates(at now: ContinuousClock.Instant) {
        ice.endOfCandidates()
        advance(nowNs: clock.nanoseconds(at: now))
    }

    /// Adds STUN and TURN servers after the start; returns how many are new (see
    /// `ICEAgent/add(stunServers:turnServers:)`). Their candidates come as ``ConnectionEvent/localCandidate(_:)``,
    /// then ``ConnectionEvent/gatheringComplete``.
    public func addICEServers(stun: [SocketAddress], turn: [TURNServer], at now: ContinuousClock.Instant) -> Int {
        let nowNs = clock.nanoseconds(at: now)
        let added = ice.add(stunServers: stun, turnServers: turn)
        ice.handleTimeout(nowNs: nowNs)
        advance(nowNs: nowNs)
        return added
    }

    /// Sends one encoded frame on the selected pair (packetized, SRTP-protected), on the stream of its
    /// `EncodedFrame/simulcastIndex` (see ``ConnectionMedia/simulcastLayers``). Without a path (not connected, no
    /// stream configured, consent lost), its packets are counted as blocked; a frame of a layer that was not
    /// configured is counted in ``WebRTCTransportStatistics/framesForUnknownLayer`` and dropped.
    public func send(frame: EncodedFrame, at now: ContinuousClock.Instant) {
        let nowNs = clock.nanoseconds(at: now)
        guard case .connected(let established) = phase, !established.streams.isEmpty else {
            counters.mediaBlocked += 1
            return
        }
        guard established.streams.indices.contains(frame.simulcastIndex) else {
            counters.framesForUnknownLayer += 1
            return
        }
        let stream = established.streams[frame.simulcastIndex]
        guard pacing != nil else {
            let path = mediaPath
            stream.send(frame, nowNs: nowNs) { packet in sendMedia(packet, route: path) }
            return
        }
        let index = frame.simulcastIndex
        stream.packetize(frame, nowNs: nowNs) { enqueuePaced($0, kind: .media, stream: index, nowNs: nowNs) }
        drainPacer(nowNs: nowNs)
    }

    /// Asks the peer for a key frame of `mediaSSRC` (RTCP PLI, RFC 4585 §6.3.1): what a receiving connection sends
    /// when it cannot decode.
    public func sendPictureLossIndication(mediaSSRC: UInt32, at now: ContinuousClock.Instant) {
        guard case .connected(let established) = phase else { return }
        sendFeedback([.pictureLossIndication(senderSSRC: established.feedbackSSRC, mediaSSRC: mediaSSRC)])
    }

    /// Sets the rate, kbit/s, that the pacer pads what it sends up to (RTP padding on the RTX stream), at most the
    /// current target and never while the congestion window is full: what lets the estimate grow when the encoder
    /// sends less than it could use, as a simulcast encoder does while its top layer is off (libwebrtc's
    /// `max_padding_bitrate`; ``SendPipeline/paddingTargetKbps`` gives it). 0 (the default) pads only for probes.
    /// Only with transport-wide congestion control (the estimate it lets grow is that one's); taken at the next
    /// pacing step.
    public func setPaddingTarget(kbps: Int) {
        paddingTargetKbps = max(0, kbps)
    }

    /// Asks the peer for a key frame of `mediaSSRC` with a Full Intra Request (RTCP FIR, RFC 5104 §4.3.1): a new
    /// request takes the next `sequenceNumber` (per media source, modulo 256); sending the same number again repeats a
    /// request the peer may already have answered.
    public func sendFullIntraRequest(mediaSSRC: UInt32, sequenceNumber: UInt8, at now: ContinuousClock.Instant) {
        guard case .connected(let established) = phase else { return }
        sendFeedback([
            .fullIntraRequest(
                senderSSRC: established.feedbackSSRC,
                entries: [RTCPFIREntry(ssrc: mediaSSRC, sequenceNumber: sequenceNumber)])
        ])
    }

    /// Asks the peer to send `sequenceNumbers` of `mediaSSRC` again (RTCP generic NACK, RFC 4585 §6.2.1).
    public func sendNACK(mediaSSRC: UInt32, sequenceNumbers: [UInt16], at now: ContinuousClock.Instant) {
        guard case .connected(let established) = phase, !sequenceNumbers.isEmpty else { return }
        sendFeedback([
            .genericNACK(
                senderSSRC: established.feedbackSSRC, mediaSSRC: mediaSSRC,
                entries: RTCPNACKEntry.entries(for: sequenceNumbers))
        ])
    }

    /// Ends the connection: a last sender report with BYE (when sending), DTLS close_notify, the TURN allocations
    /// released (Refresh with LIFETIME 0); then ``ConnectionEvent/closed``. Idempotent.
    public func close(at now: ContinuousClock.Instant) {
        let nowNs = clock.nanoseconds(at: now)
        switch phase {
        case .closed: return
        case .connected(let established):
            let route = mediaPath
            for stream in established.streams {
                stream.sendReport(nowNs: nowNs, bye: true) { sendMedia($0, route: route) }
            }
            established.dtls.close()
            drainDTLS(established.dtls)
        case .connecting(let handshake):
            handshake.dtls.close()
            drainDTLS(handshake.dtls)
        case .new, .failed: break
        }
        keepFinalMediaFigures()
        stopPacing()
        phase = .closed
        ice.close(nowNs: nowNs)
        drainICE()
        events.append(.closed)
    }

    // MARK: Inputs

    /// Handles a datagram received from `source` on local address `destination`. Never traps on any input; what is
    /// not understood is counted and dropped.
    public func handle(
        datagram: UnsafeMutableRawBufferPointer, from source: SocketAddress, to destination: SocketAddress,
        at now: ContinuousClock.Instant
    ) {
        let nowNs = clock.nanoseconds(at: now)
        received.count(datagram.count)
        if ice.isTURNServer(source) {
            handleFromTURNServer(datagram, from: source, nowNs: nowNs)
        } else {
            route(datagram, from: source, relay: nil, nowNs: nowNs)
        }
        advance(nowNs: nowNs)
    }

    /// Runs the timers due at `now`: ICE's checks, consent and TURN refreshes, DTLS retransmissions, the next sender
    /// report and the next transport-wide feedback.
    public func handleTimeout(at now: ContinuousClock.Instant) {
        let nowNs = clock.nanoseconds(at: now)
        ice.handleTimeout(nowNs: nowNs)
        switch phase {
        case .connecting(let handshake): handshake.dtls.handleTimeout(nowNs: Int64(clamping: nowNs))
        case .connected(let established):
            established.dtls.handleTimeout(nowNs: Int64(clamping: nowNs))
            let route = mediaRoute()
            for stream in established.streams {
                stream.reportIfDue(nowNs: nowNs) { sendMedia($0, route: route) }
            }
            sendTransportFeedbackIfDue(nowNs: nowNs)
            estimateIfDue(nowNs: nowNs)
            drainPacer(nowNs: nowNs)
        case .new, .failed, .closed: break
        }
        advance(nowNs: nowNs)
    }

    // MARK: Outputs

    /// The next datagram to send, oldest first, lent until the next call into the connection; `nil` when none.
    public func pollTransmit() -> Transmit? { transmits.pop() }

    /// The next event, oldest first; `nil` when none.
    public func pollEvent() -> ConnectionEvent? { events.isEmpty ? nil : events.removeFirst() }

    /// When ``handleTimeout(at:)`` is next due (in the past: at once); `nil` when nothing waits.
    public var nextTimeout: ContinuousClock.Instant? {
        var next: UInt64?
        func consider(_ time: UInt64?) {
            guard let time else { return }
            next = min(next ?? time, time)
        }
        consider(ice.nextTimeoutNs)
        switch phase {
        case .connecting(let handshake): consider(handshake.dtls.nextTimeoutNs.map { UInt64(max(0, $0)) })
        case .connected(let established):
            consider(established.dtls.nextTimeoutNs.map { UInt64(max(0, $0)) })
            for stream in established.streams { consider(stream.nextReportNs) }
            consider(feedbackGenerator?.nextDeadlineNs)
            consider(nextEstimateNs)
            consider(nextPacerNs)
        case .new, .failed, .closed: break
        }
        return next.map { clock.instant(atNanoseconds: $0) }
    }
}
