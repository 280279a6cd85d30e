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

/// The RTP end of a ``SendPipeline`` over plain UDP (or a `PacketTransport`): it drives an ``RTPSendSession``, which
/// packetizes each encoded frame for VP8 (RFC 7741), protects it with SRTP when configured, sends RTCP sender reports
/// with SDES about once a second, and answers the peer's RTCP (receiver reports give the round-trip time, PLI and new
/// FIR ask the pipeline for a key frame, REMB and TMMBR set its target bit rate, generic NACKs are answered from a
/// history of sent packets, RTX when configured). A WebRTC connection drives the same session itself.
///
/// ## Threading
/// ``consume(_:)`` runs on the pipeline's encoder thread; a thread of the sender's own reads RTCP from its socket and
/// sends the reports. In steady state nothing is allocated per packet (see ``RTPSendSession``).
public final class VideoSender: EncodedFrameSink {
    /// The configuration the sender was created with.
    public let configuration: VideoSenderConfiguration
    /// The sender's SSRC.
    public var ssrc: UInt32 { configuration.packetizer.ssrc }
    /// The local address of the RTP socket (or of the transport).
    public let localAddress: SocketAddress

    /// Where datagrams go: the sender's own sockets, or a transport it was given.
    enum Output: Sendable {
        case sockets(rtp: UDPSocket, rtcp: UDPSocket, remote: SocketAddress, rtcpRemote: SocketAddress)
        case transport(any PacketTransport)
    }

    /// The stream's RTP and RTCP logic (sans-IO), behind a lock taken once per frame, per received RTCP packet and
    /// per report: the encoder thread and the RTCP thread share it.
    let session: Locked<RTPSendSession>
    let output: Output
    /// The pipeline that PLI, FIR, REMB and TMMBR steer (held weakly: the pipeline holds the sender).
    let pipeline = Locked(WeakPipeline())
    let logger: Logger
    /// Until ``finish()`` (or deinit): the RTCP thread runs while it is set.
    let running = Locked(true)
    /// Whether ``finish()`` has sent its BYE and whether the RTCP thread has ended: whichever comes second closes the
    /// sockets.
    let ending = Locked((finished: false, rtcpStopped: false))

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
        do throws(VideoSessionError) {
            try self.init(
                configuration: configuration,
                output: .sockets(
                    rtp: sockets.rtp, rtcp: sockets.rtcp, remote: configuration.remote, rtcpRemote: rtcpRemote),
                localAddress: sockets.local, logger: logger, metricsFactory: metricsFactory)
        } catch {
            sockets.rtp.close()
            sockets.rtcp.close()
            throw error
        }
    }

    /// Sends through `transport` instead of sockets of its own (``VideoSenderConfiguration/remote`` and
    /// ``VideoSenderConfiguration/rtcpMux`` are then not used): the transport's owner delivers the peer's RTCP
    /// through ``receiveRTCP(_:length:)``. Sets up SRTP and starts the thread that sends the reports.
    package convenience init(
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
        let session = try RTPSendSession(
            configuration: configuration, nowNs: MonotonicClock.nowNs(), logger: logger,
            metricsFactory: metricsFactory)
        self.configuration = session.configuration
        self.logger = logger
        self.output = output
        self.localAddress = localAddress
        self.session = Locked(session)
        let weakSender = WeakSender(sender: self)
        Thread.detachNewThread {
            nameCurrentThread("rtcp-sender")
            Self.rtcpLoop(weakSender)
        }
    }

    deinit {
        running.withLock { $0 = false }
    }

    /// Lets the peer's RTCP steer `pipeline`: PLI and new FIRs request key frames, REMB and TMMBR set the target
    /// bit rate. Call it once the pipeline that feeds this sender exists.
    public func attach(to pipeline: SendPipeline) {
        self.pipeline.withLock { $0.pipeline = pipeline }
    }

    /// Statistics so far.
    public var statistics: VideoSenderStatistics { session.withLock { $0.statistics } }
    /// The transport-wide congestion control figures when the packetizer numbers the packets
    /// (`RTPPacketizerConfiguration.transportSequenceNumberExtensionID`), else `nil`.
    package var transportWideStatistics: TransportWideSender.Statistics? {
        session.withLock { $0.transportWide?.statistics }
    }

    /// Sends one RTP datagram (already protected) to the peer.
    func sendRTP(_ datagram: UnsafeRawBufferPointer) -> Bool {
        switch output {
        case .sockets(let rtp, _, let remote, _): rtp.send(datagram, to: remote)
        case .transport(let transport): transport.send(datagram)
        }
    }

    /// Sends one RTCP datagram (already protected) to the peer.
    func sendRTCPDatagram(_ datagram: UnsafeRawBufferPointer) -> Bool {
        switch output {
        case .sockets(_, let rtcp, _, let rtcpRemote): rtcp.send(datagram, to: rtcpRemote)
        case .transport(let transport): transport.send(datagram)
        }
    }

    /// Packetizes, protects and sends one frame (on the encoder thread).
    public func consume(_ frame: EncodedFrame) {
        let nowNs = MonotonicClock.nowNs()
        session.withLock { session in session.send(frame, nowNs: nowNs, output: sendRTP) }
    }

    /// Sends a last sender report with a BYE and stops the RTCP thread, which closes the sockets as its last act (a
    /// transport is its owner's to close). Returns at once: it never waits for that thread (which ends within its
    /// 50 ms receive timeout), so it may be called from any thread or task. Idempotent.
    public func finish() {
        let first = running.withLock { running in
            defer { running = false }
            return running
        }
        guard first else { return }
        sendReport(bye: true)
        rtcpThreadOrFinishEnded(finish: true)
    }

    /// Called once by ``finish()`` (after its BYE) and once by the RTCP thread as it ends: exactly one of them, the
    /// second, closes the sockets, so that no socket is closed under a thread still reading it, nor before the BYE,
    /// and neither has to wait for the other.
    func rtcpThreadOrFinishEnded(finish: Bool) {
        let close = ending.withLock { ending -> Bool in
            if finish { ending.finished = true } else { ending.rtcpStopped = true }
            return ending.finished && ending.rtcpStopped
        }
        guard close, case .sockets(let rtp, let rtcp, _, _) = output else { return }
        rtp.close()
        if rtcp !== rtp { rtcp.close() }
    }

    /// Binds the RTP socket on an ephemeral port of the remote's family and, without rtcp-mux, the RTCP socket on the
    /// port above it (retrying with another pair when that one is taken).
    static func openSockets(
        remote: SocketAddress, rtcpMux: Bool
    ) throws(VideoSessionError) -> (rtp: UDPSocket, rtcp: UDPSocket, local: SocketAddress) {
        let any = remote.family == .ipv6 ? SocketAddress.anyIPv6(port: 0) : SocketAddress.anyIPv4(port: 0)
        do throws(SocketError) {
            let (rtp, rtcp) = try UDPSocket.bindRTPPair(at: any, rtcpMux: rtcpMux)
            return (rtp, rtcp, rtp.localAddress)
        } catch .portInUse {
            throw VideoSessionError(.socket, "no free pair of adjacent UDP ports for RTP and RTCP")
        } catch {
            throw VideoSessionError(.socket, "cannot open a UDP socket: \(error)")
        }
    }
}

/// A weak reference to the pipeline a sender steers (a VideoSender's, or a WebRTC connection's driver's).
package struct WeakPipeline {
    package weak var pipeline: SendPipeline?

    package init() {}
}
