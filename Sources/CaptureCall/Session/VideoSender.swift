public import CaptureRTP
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
/// configured, and sends it over UDP; sends RTCP sender reports with SDES about once a second; and answers the
/// peer's RTCP on its own thread: receiver reports give the round-trip time, PLI and (new) FIR ask the pipeline for a
/// key frame, REMB and TMMBR set its target bit rate. Malformed or unauthentic RTCP is counted and ignored.
///
/// ``consume(_:)`` runs on the pipeline's encoder thread and, in steady state, allocates nothing per packet: the
/// packetizer lends one reusable buffer with SRTP trailer room, protection happens in place, and the statistics are
/// updated once per frame.
public final class VideoSender: EncodedFrameSink {
    /// The configuration the sender was created with.
    public let configuration: VideoSenderConfiguration
    /// The sender's SSRC.
    public var ssrc: UInt32 { configuration.packetizer.ssrc }
    /// The local address of the RTP socket.
    public let localAddress: SocketAddress

    struct SendState {
        var statistics = VideoSenderStatistics()
        var latency = LatencyRecorder()
        var finished = false
    }

    /// What only the encoder thread uses (``consume(_:)``, ``finish()``); behind a lock taken once per frame so
    /// that the sender is `Sendable` without an unchecked claim.
    private struct Wire {
        var packetizer: VP8Packetizer
    }

    private let wire: Locked<Wire>
    let rtpSocket: UDPSocket
    let rtcpSocket: UDPSocket
    let rtcpRemote: SocketAddress
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
    public init(
        configuration: VideoSenderConfiguration,
        logger: Logger = Logger(label: "capture.call.sender"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(VideoSessionError) {
        var configuration = configuration
        if configuration.srtp != nil {
            // libsrtp needs room for its longest trailer (tag and MKI, SRTP_MAX_TRAILER_LEN), not just the tag.
            configuration.packetizer.trailerCapacity = max(
                configuration.packetizer.trailerCapacity, SRTPSession.maximumTrailerLength)
        }
        self.configuration = configuration
        self.logger = logger
        metrics = VideoSenderMetrics(deviceID: configuration.metricsDeviceID, factory: metricsFactory)
        let sockets = try Self.openSockets(remote: configuration.remote, rtcpMux: configuration.rtcpMux)
        rtpSocket = sockets.rtp
        rtcpSocket = sockets.rtcp
        localAddress = sockets.local
        rtcpRemote =
            configuration.rtcpMux ? configuration.remote : configuration.remote.withPort(configuration.remote.port &+ 1)
        wire = Locked(Wire(packetizer: VP8Packetizer(configuration: configuration.packetizer)))
        do {
            srtp = try configuration.srtp.map { keys throws(SRTPError) in
                try SRTPSession(role: .sender, keyingMaterial: keys, profile: keys.profile)
            }
            srtcpIn = try configuration.srtp.map { keys throws(SRTPError) in
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

    /// Packetizes, protects and sends one frame (on the encoder thread).
    public func consume(_ frame: EncodedFrame) {
        var packets = 0
        var bytes = 0
        var errors = 0
        wire.withLock { wire in
            frame.bytes.withUnsafeBytes { payload in
                wire.packetizer.packetize(
                    payload, rtpTimestamp: frame.rtpTimestamp, isKeyFrame: frame.isKeyFrame,
                    isDroppable: frame.isDroppable, rotation: frame.rotation
                ) { (packet: inout OutgoingRTPPacket) in
                    if let srtp {
                        do throws(SRTPError) {
                            try srtp.protectRTP(packet.buffer, length: &packet.length)
                        } catch {
                            errors += 1
                            return
                        }
                    }
                    if rtpSocket.send(packet.bytes, to: configuration.remote) {
                        packets += 1
                        bytes += packet.length
                    } else {
                        errors += 1
                    }
                }
            }
        }
        let sentNs = MonotonicClock.nowNs()
        let latencyNs = sentNs &- min(sentNs, frame.captureTimeNs)
        metrics.frame(
            packets: packets, bytes: bytes, errors: errors, isKeyFrame: frame.isKeyFrame, latencyNs: latencyNs)
        state.withLock { state in
            state.statistics.frames += 1
            state.statistics.packets += packets
            state.statistics.bytes += bytes
            state.statistics.overheadBytes += bytes - min(bytes, frame.bytes.count)
            state.statistics.sendErrors += errors
            if frame.isKeyFrame { state.statistics.keyFramesSent += 1 }
            state.latency.record(nanoseconds: latencyNs)
        }
    }

    /// Sends a last sender report with a BYE, stops the RTCP thread and closes the sockets.
    public func finish() {
        let first = state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
        guard first else { return }
        sendReport(bye: true)
        running.withLock { $0 = false }
        while !rtcpStopped.withLock({ $0 }) { usleep(2_000) }
        rtpSocket.close()
        if rtcpSocket !== rtpSocket { rtcpSocket.close() }
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
