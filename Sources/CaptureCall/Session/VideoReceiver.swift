public import CaptureCore
public import CaptureNet
internal import CaptureRTP
internal import CaptureVP8
internal import Foundation
public import Logging

/// The receiving end of a call: UDP → SRTP unprotect → VP8 reassembly → VP8 decoder, with RTCP receiver reports
/// about once a second, a PLI whenever the reassembler needs a key frame and, when configured, transport-wide
/// feedback every 100 ms.
///
/// Frames reach the decoder only from the reassembler, which after any loss passes nothing until a key frame: a
/// decoded frame never comes from a broken reference. Packets under the wrong SRTP key are counted and dropped
/// before parsing; malformed packets are counted and ignored. Everything runs on one receive thread.
public final class VideoReceiver: Sendable {
    /// The configuration the receiver was created with.
    public let configuration: VideoReceiverConfiguration
    /// The bound RTP address (with the real port when the configuration asked for port 0).
    public let localAddress: SocketAddress

    /// How long the current sender must be silent before packets from another SSRC or address are followed
    /// instead of counted as ``VideoReceiverStatistics/strayPackets``: 2 s.
    public static let sourceSwitchSilence = Duration.seconds(2)

    struct Peer {
        var ssrc: UInt32
        var rtcpAddress: SocketAddress
    }

    /// What only the receive thread touches, behind one uncontended lock (so the receiver is `Sendable` without an
    /// unchecked claim): the reassembler, the decoder, the IVF writer, the RTP statistics.
    ///
    /// `@unchecked Sendable` is sound: the value lives only inside `pipeline` (a `Locked`), so its non-Sendable
    /// members (reassembler, decoder, IVF writer) are touched by one thread at a time, and nothing derived from them
    /// leaves the lock except Sendable values (statistics, decoded `VideoFrame`s over pooled `@unchecked Sendable`
    /// buffers).
    struct Pipeline: @unchecked Sendable {
        var assembler: VP8FrameAssembler
        var decoder: VP8Decoder
        var outputPath: String?
        var writer: IVFWriter?
        var writerFailed = false
        var receiveStatistics = RTPReceiveStatistics()
        var loss: PacketLossSimulator?
        var peer: Peer?
        var lastSenderReport: (ntpMiddle32: UInt32, receivedAtNs: UInt64)?
        var schedule: RTCPInterval
        var firstPacketNs: UInt64?
        var lastPacketNs: UInt64 = 0
        /// Arrivals of the sender's transport-wide sequence numbers, and the feedback they make (when configured).
        var transportFeedback: TransportFeedbackGenerator?
    }

    let pipeline: Locked<Pipeline>
    let state = Locked(VideoReceiverStatistics())
    let running = Locked(true)
    let activeThreads = Locked(0)
    /// Finished by the last receive thread to end.
    let threadsFinished = Completion()
    let rtpSocket: UDPSocket
    let rtcpSocket: UDPSocket
    let srtp: SRTPSession?
    let srtcpOut: SRTPSession?
    let onFrame: (@Sendable (VideoFrame) -> Void)?
    let logger: Logger

    /// Binds the sockets, creates the decoder (and the SRTP sessions) and starts the receive thread.
    ///
    /// - Parameter onFrame: Called on the receive thread with each decoded frame (its timestamp is the arrival time).
    public init(
        configuration: VideoReceiverConfiguration, logger: Logger = Logger(label: "capture.call.receiver"),
        onFrame: (@Sendable (VideoFrame) -> Void)? = nil
    ) throws(VideoSessionError) {
        self.configuration = configuration
        self.logger = logger
        self.onFrame = onFrame
        do throws(SocketError) {
            (rtpSocket, rtcpSocket) = try UDPSocket.bindRTPPair(at: configuration.local, rtcpMux: configuration.rtcpMux)
        } catch {
            switch error {
            case .portInUse(let address): throw VideoSessionError(.portInUse, "\(address): UDP port in use")
            default: throw VideoSessionError(.socket, "\(configuration.local): cannot bind: \(error)")
            }
        }
        localAddress = rtpSocket.localAddress
        do {
            srtp = try configuration.srtp.map { keys throws(SRTPError) in
                try SRTPSession(role: .receiver, keyingMaterial: keys, profile: keys.profile)
            }
            srtcpOut = try configuration.srtp.map { keys throws(SRTPError) in
                try SRTPSession(role: .sender, keyingMaterial: keys, profile: keys.profile)
            }
        } catch {
            rtpSocket.close()
            rtcpSocket.close()
            throw VideoSessionError(.srtp, "SRTP setup failed: \(error)")
        }
        let decoder: VP8Decoder
        do {
            decoder = try VP8Decoder()
        } catch {
            rtpSocket.close()
            rtcpSocket.close()
            throw VideoSessionError(.decoder, "VP8 decoder: \(error)")
        }
        pipeline = Locked(
            Pipeline(
                assembler: VP8FrameAssembler(configuration: configuration.assembler), decoder: decoder,
                outputPath: configuration.outputPath, loss: configuration.loss.map(PacketLossSimulator.init),
                schedule: RTCPInterval(
                    intervalNs: configuration.rtcpInterval.clampedNanoseconds, nowNs: MonotonicClock.nowNs(),
                    seed: configuration.ssrc),
                transportFeedback: configuration.transportSequenceNumberExtensionID.flatMap { id in
                    (1...14).contains(id)
                        ? TransportFeedbackGenerator(
                            configuration: TransportFeedbackGenerator.Configuration(senderSSRC: configuration.ssrc))
                        : nil
                }))
        let weak = WeakReceiver(receiver: self)
        activeThreads.withLock { $0 = configuration.rtcpMux ? 1 : 2 }
        Thread.detachNewThread {
            nameCurrentThread("rtp-receive")
            Self.receiveLoop(weak, socket: weak.receiver?.rtpSocket)
        }
        if !configuration.rtcpMux {
            Thread.detachNewThread {
                nameCurrentThread("rtcp-receive")
                Self.receiveLoop(weak, socket: weak.receiver?.rtcpSocket, isRTCPOnly: true)
            }
        }
    }

    deinit {
        running.withLock { $0 = false }
    }

    /// Statistics so far.
    public var statistics: VideoReceiverStatistics { state.withLock { $0 } }

    /// Stops the receive threads, closes the sockets and the IVF file. Returns once the threads have ended (each
    /// notices within its 50 ms receive timeout; the last one out resumes this) and the file is closed. Idempotent.
    public func stop() async {
        running.withLock { $0 = false }
        await threadsFinished.wait()
        let (rtpSocket, rtcpSocket, pipeline) = (self.rtpSocket, self.rtcpSocket, self.pipeline)
        // Closing the IVF file rewrites its header: file I/O, so on the blocking executor.
        await BlockingExecutor.shared.run {
            rtpSocket.close()
            if rtcpSocket !== rtpSocket { rtcpSocket.close() }
            pipeline.withLock { pipeline in
                try? pipeline.writer?.close()
                pipeline.writer = nil
            }
        }
    }
}

/// A weak reference to a receiver, handed to its threads.
struct WeakReceiver: Sendable {
    weak var receiver: VideoReceiver?
}
