public import CaptureNet
internal import CaptureRTP
public import CaptureVP8
internal import CaptureCore
public import CoreMetrics
internal import Foundation
public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The RTP end of a ``SendPipeline``: packetizes each encoded frame for VP8 (RFC 7741), protects it with SRTP when
/// configured, and sends it over UDP or a ``PacketTransport``; sends RTCP sender reports with SDES about once a second;
/// and answers the peer's RTCP: receiver reports give the round-trip time, PLI and (new) FIR ask the pipeline for a key
/// frame, REMB and TMMBR set its target bit rate, and generic NACKs are answered from a history of sent packets (RTX,
/// RFC 4588, when configured). Malformed or unauthentic RTCP is counted and ignored.
///
/// ``consume(_:)`` runs on the pipeline's encoder thread and, in steady state, allocates nothing per packet: the
/// packetizer lends one reusable buffer with SRTP trailer room, the retransmission history is a fixed ring, protection
/// happens in place, and the statistics are updated once per frame.
public final class VideoSender: EncodedFrameSink {
    /// The configuration the sender was created with.
    public let configuration: VideoSenderConfiguration
    /// The sender's SSRC.
    public var ssrc: UInt32 { configuration.packetizer.ssrc }
    /// The local address of the RTP socket (or of the transport).
    public let localAddress: SocketAddress

    struct SendState {
        var statistics = VideoSenderStatistics()
        var latency = LatencyRecorder()
        var finished = false
        /// When the last PLI or FIR was passed to the pipeline (monotonic), for the 300 ms rate limit.
        var lastKeyFrameRequestNs: UInt64?
        /// The loss-based estimate (with ``VideoSenderConfiguration/lossBasedRateControl``).
        var lossEstimator = LossBasedBitrateEstimator()
        /// The last REMB or TMMBR, a ceiling over the loss-based estimate.
        var requestedCeilingKbps: Int?
    }

    /// What the encoder thread uses (``consume(_:)``, ``finish()``) and NACK answers share; behind a lock taken once
    /// per frame (and once per NACK) so that the sender is `Sendable` without an unchecked claim.
    struct Wire {
        var packetizer: VP8Packetizer
        /// Sent packets, unprotected, for NACKs (`nil` without retransmission).
        var history: RetransmissionHistory?
        /// The buffer RTX packets are built and protected in (allocated once, with the history).
        var rtxBuffer: UnsafeMutableRawBufferPointer?
        /// The RTX stream's next sequence number.
        var rtxSequenceNumber = UInt16.random(in: .min ... .max)
        var loss: PacketLossSimulator?
    }

    /// Where datagrams go: the sender's own sockets, or a transport it was given.
    enum Output: Sendable {
        case sockets(rtp: UDPSocket, rtcp: UDPSocket, remote: SocketAddress, rtcpRemote: SocketAddress)
        case transport(any PacketTransport)
    }

    let wire: Locked<Wire>
    let output: Output
    let srtp: SRTPSession?
    /// Unprotects the peer's SRTCP (libsrtp needs an inbound session for it).
    let srtcpIn: SRTPSession?
    /// The pipeline that PLI, FIR, REMB and TMMBR steer (held weakly: the pipeline holds the sender).
    let pipeline = Locked(WeakPipeline())
    let logger: Logger
    let state = Locked(SendState())
    let running = Locked(true)
    let rtcpStopped = Locked(false)
    let firTracker = Locked(FIRSequenceTracker())
    let metrics: VideoSenderMetrics

    /// Opens the sockets (RTP on an ephemeral port; RTCP on the next one up unless multiplexed), sets up SRTP and
    /// starts the RTCP thread.
    ///
    /// Its metrics (`camera_rtp_sender_*`) go to `metricsFactory`, by default swift-metrics' global factory.
    public convenience init(
        configuration: VideoSenderConfiguration,
        logger: Logger = Logger(label: "capture.call.sender"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(VideoSessionError) {
        let sockets = try Self.openSockets(remote: configuration.remote, rtcpMux: configuration.rtcpMux)
        let rtcpRemote =
            configuration.rtcpMux ? configuration.remote : configuration.remote.withPort(configuration.remote.port &+ 1)
        try self.init(
            configuration: configuration,
            output: .sockets(
                rtp: sockets.rtp, rtcp: sockets.rtcp, remote: configuration.remote, rtcpRemote: rtcpRemote),
            localAddress: sockets.local, logger: logger, metricsFactory: metricsFactory)
    }

    /// Sends through `transport` instead of sockets of its own (``VideoSenderConfiguration/remote`` and
    /// ``VideoSenderConfiguration/rtcpMux`` are then not used): the transport delivers the peer's RTCP through
    /// ``receiveRTCP(_:length:)``. Sets up SRTP and starts the thread that sends the reports.
    public convenience init(
        configuration: VideoSenderConfiguration, transport: any PacketTransport,
        logger: Logger = Logger(label: "capture.call.sender"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(VideoSessionError) {
        try self.init(
            configuration: configuration, output: .transport(transport), localAddress: transport.localAddress,
            logger: logger, metricsFactory: metricsFactory)
    }

    private init(
        configuration: VideoSenderConfiguration, output: Output, localAddress: SocketAddress, logger: Logger,
        metricsFactory: any MetricsFactory
    ) throws(VideoSessionError) {
        var configuration = configuration
        if configuration.srtp != nil {
            // libsrtp needs room for its longest trailer (tag and MKI, SRTP_MAX_TRAILER_LEN), not just the tag.
            configuration.packetizer.trailerCapacity = max(
                configuration.packetizer.trailerCapacity, SRTPSession.maximumTrailerLength)
        }
        self.configuration = configuration
        self.logger = logger
        self.output = output
        self.localAddress = localAddress
        metrics = VideoSenderMetrics(deviceID: configuration.metricsDeviceID, factory: metricsFactory)
        let packetizer = VP8Packetizer(configuration: configuration.packetizer)
        var wire = Wire(packetizer: packetizer, loss: configuration.firstTransmissionLoss)
        if let retransmission = configuration.retransmission {
            let packetSize = packetizer.configuration.maxPacketSize
            wire.history = RetransmissionHistory(packets: retransmission.historyPackets, slotSize: packetSize)
            // An RTX packet is the original plus the 2-byte original sequence number, plus the SRTP trailer.
            wire.rtxBuffer = .allocate(
                byteCount: packetSize + 2 + packetizer.configuration.trailerCapacity, alignment: 16)
        }
        self.wire = Locked(wire)
        // Resending the original packet (no RTX) repeats a sequence number, which libsrtp refuses unless told.
        let repeatsPackets = configuration.retransmission.map { $0.rtxPayloadType == nil } ?? false
        do {
            srtp = try configuration.srtp.map { keys throws(SRTPError) in
                try SRTPSession(
                    role: .sender, keyingMaterial: keys, profile: keys.profile, replayProtection: !repeatsPackets)
            }
            srtcpIn = try (configuration.remoteSRTP ?? configuration.srtp).map { keys throws(SRTPError) in
                try SRTPSession(role: .receiver, keyingMaterial: keys, profile: keys.profile)
            }
        } catch {
            throw VideoSessionError(.srtp, "SRTP setup failed: \(error)")
        }
        let weakSender = WeakSender(sender: self)
        Thread.detachNewThread { Self.rtcpLoop(weakSender) }
    }

    deinit {
        running.withLock { $0 = false }
        wire.withLock { $0.rtxBuffer?.deallocate() }
    }

    /// Lets the peer's RTCP steer `pipeline`: PLI and new FIRs request key frames, REMB and TMMBR set the target
    /// bit rate. Call it once the pipeline that feeds this sender exists.
    public func attach(to pipeline: SendPipeline) {
        self.pipeline.withLock { $0.pipeline = pipeline }
    }

    /// Statistics so far.
    public var statistics: VideoSenderStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.glassToWire = state.latency.summary
            return statistics
        }
    }

    /// Sends one RTP datagram (already protected) to the peer.
    func sendRTP(_ datagram: UnsafeRawBufferPointer) -> Bool {
        switch output {
        case .sockets(let rtp, _, let remote, _): rtp.send(datagram, to: remote)
        case .transport(let transport): transport.send(datagram)
        }
    }

    /// Packetizes, protects and sends one frame (on the encoder thread).
    public func consume(_ frame: EncodedFrame) {
        var packets = 0
        var bytes = 0
        var errors = 0
        var dropped = 0
        let nowNs = MonotonicClock.nowNs()
        wire.withLock { wire in
            let history = wire.history
            frame.bytes.withUnsafeBytes { payload in
                wire.packetizer.packetize(
                    payload, rtpTimestamp: frame.rtpTimestamp, isKeyFrame: frame.isKeyFrame,
                    isDroppable: frame.isDroppable, rotation: frame.rotation
                ) { (packet: inout OutgoingRTPPacket) in
                    history?.store(packet.bytes, sequenceNumber: packet.sequenceNumber, nowNs: nowNs)
                    if wire.loss?.shouldDrop() == true {
                        dropped += 1
                        return
                    }
                    if let srtp {
                        do throws(SRTPError) {
                            try srtp.protectRTP(packet.buffer, length: &packet.length)
                        } catch {
                            errors += 1
                            return
                        }
                    }
                    if sendRTP(packet.bytes) {
                        packets += 1
                        bytes += packet.length
                    } else {
                        errors += 1
                    }
                }
            }
        }
        let sentNs = MonotonicClock.nowNs()
        let latencyNs = MonotonicClock.elapsedNs(from: frame.captureTimeNs, to: sentNs)
        metrics.frame(
            packets: packets, bytes: bytes, errors: errors, isKeyFrame: frame.isKeyFrame, latencyNs: latencyNs)
        state.withLock { state in
            state.statistics.frames += 1
            state.statistics.packets += packets
            state.statistics.bytes += bytes
            state.statistics.overheadBytes += bytes - min(bytes, frame.bytes.count)
            state.statistics.sendErrors += errors
            state.statistics.firstTransmissionsDropped += dropped
            if frame.isKeyFrame { state.statistics.keyFramesSent += 1 }
            state.latency.record(nanoseconds: latencyNs)
        }
    }

    /// Sends a last sender report with a BYE, stops the RTCP thread and closes the sockets (a transport is its
    /// owner's to close).
    public func finish() {
        let first = state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
        guard first else { return }
        sendReport(bye: true)
        running.withLock { $0 = false }
        while !rtcpStopped.withLock({ $0 }) { usleep(2_000) }
        if case .sockets(let rtp, let rtcp, _, _) = output {
            rtp.close()
            if rtcp !== rtp { rtcp.close() }
        }
    }

    /// Binds the RTP socket on an ephemeral port of the remote's family and, without rtcp-mux, the RTCP socket on the
    /// port above it (retrying with another pair when that one is taken).
    static func openSockets(
        remote: SocketAddress, rtcpMux: Bool
    ) throws(VideoSessionError) -> (rtp: UDPSocket, rtcp: UDPSocket, local: SocketAddress) {
        let any = remote.family == .ipv6 ? SocketAddress.anyIPv6(port: 0) : SocketAddress.anyIPv4(port: 0)
        for _ in 0..<16 {
            let rtp: UDPSocket
            do throws(UDPSocketError) {
                rtp = try UDPSocket(bindingTo: any)
            } catch {
                throw VideoSessionError(.socket, "cannot open a UDP socket: \(error)")
            }
            if rtcpMux { return (rtp, rtp, rtp.localAddress) }
            let port = rtp.localAddress.port
            guard port < UInt16.max else {
                rtp.close()
                continue
            }
            do throws(UDPSocketError) {
                let rtcp = try UDPSocket(bindingTo: any.withPort(port + 1))
                return (rtp, rtcp, rtp.localAddress)
            } catch {
                rtp.close()
            }
        }
        throw VideoSessionError(.socket, "no free pair of adjacent UDP ports for RTP and RTCP")
    }
}

/// A weak reference to the pipeline a sender steers.
struct WeakPipeline {
    weak var pipeline: SendPipeline?
}
