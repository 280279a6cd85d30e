import CaptureCall
import CaptureCore
import CaptureNet
import CaptureRTP
import CaptureVP8
import Foundation
import MallocInterposerSwift
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The send path: the synthetic camera (unpaced unless `--paced yes`) → `SendPipeline` (VP8) → `VideoSender` (plain
/// RTP, or SRTP with `--srtp cm80|gcm`, `yes` being cm80) → a loopback UDP socket that only drains. `--webrtc yes`
/// adds what a WebRTC sender does per packet: the RTX history (every packet stored in the fixed ring), the `sdes:mid`
/// and video-orientation header extensions, and AEAD_AES_128_GCM unless `--srtp` says otherwise; `--rid h` adds a
/// simulcast layer's `sdes:rtp-stream-id` element (and the repaired-rid id its RTX would use). With the malloc interposer preloaded
/// (`LD_PRELOAD=libMallocInterposerSwift.so`, as for `capture`), it counts heap allocations between sent frame
/// `warmup` and frame `warmup + frames`: on every thread (`--scope all`, the default: capture, conversion, encoder,
/// sender, RTCP and drain threads), or only while `VideoSender.consume` runs (`--scope sender`: packetize, protect,
/// send; other threads that allocate meanwhile are counted too, so it is an upper bound).
struct SendBench {
    let size: Dimensions
    let frames: Int
    let warmup: Int
    let kbps: Int
    let srtp: SRTPProfile?
    let webrtc: Bool
    let paced: Bool
    let senderOnly: Bool
    let isolated: Bool
    /// The layer's rid (`--rid`), or `nil`.
    let rid: String?

    init(_ options: BenchOptions) throws(CaptureError) {
        size = try options.dimensions()
        frames = try options.int("frames", default: 1000)
        warmup = try options.int("warmup", default: 100)
        kbps = try options.int("kbps", default: 1_000)
        webrtc = options.values["webrtc"] == "yes"
        switch options.values["srtp"] ?? (webrtc ? "gcm" : "no") {
        case "no": srtp = nil
        case "yes", "cm80": srtp = .aesCM128HMACSHA1_80
        case "gcm": srtp = .aeadAES128GCM
        case let other: throw CaptureError(.invalidArgument, "bad --srtp \(other) (no, cm80 or gcm)")
        }
        paced = options.values["paced"] == "yes"
        isolated = options.values["isolated"] == "yes"
        rid = options.values["rid"]
        switch options.values["scope"] ?? "all" {
        case "all": senderOnly = false
        case "sender": senderOnly = true
        case let other: throw CaptureError(.invalidArgument, "bad --scope \(other) (all or sender)")
        }
    }

    func run() async throws {
        MallocInterposerSwift.initialize()
        let drain = try UDPSocket(bindingTo: SocketAddress.loopbackIPv4(port: 0))
        let drained = Locked(0)
        let drainEnded = Completion()
        Thread.detachNewThread { Self.drainLoop(drain, into: drained, ended: drainEnded) }
        var packetizer = RTPPacketizerConfiguration()
        if webrtc {
            packetizer.midExtensionID = 1
            packetizer.mid = "0"
            packetizer.videoOrientationExtensionID = 3
        }
        if let rid {
            packetizer.ridExtensionID = 4
            packetizer.rid = rid
            packetizer.repairedRidExtensionID = 5
        }
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: drain.localAddress, rtcpMux: true, packetizer: packetizer,
                srtp: srtp.map { SRTPKeyingMaterial.random(profile: $0) },
                retransmission: webrtc ? RetransmissionConfiguration() : nil))
        let sink = CountingSink(
            sender: sender, warmup: warmup, limit: warmup + frames, senderOnly: senderOnly || isolated)
        if isolated {
            try await runIsolated(sink: sink, sender: sender, drain: drain, drainEnded: drainEnded)
            return
        }
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(
                encoder: VP8EncoderConfiguration(targetBitrateKbps: kbps, framerate: 30), maxBitrateKbps: kbps),
            sinks: [sink])
        sender.attach(to: pipeline)
        let capturer = CameraVideoCapturer(delegate: pipeline, provider: .builtIn)
        capturer.isPaced = paced
        try await capturer.startCapture(target: size, fpsLimit: 30, preference: PixelFormat.defaultPreference)
        let window = await sink.finished()
        await capturer.stopCapture()
        await pipeline.stop()
        let statistics = MallocInterposerSwift.getStatistics()
        drain.close()
        await drainEnded.wait()
        let sent = sender.statistics
        let seconds = Double(window.endNs &- window.startNs) / 1e9
        let packets = Double(window.packets)
        print(
            "size=\(size) srtp=\(srtp?.rawValue ?? "none") webrtc=\(webrtc) paced=\(paced) scope=\(senderOnly ? "sender" : "all") frames=\(frames) "
                + "seconds=\(fixed(seconds, 3)) fps=\(fixed(Double(frames) / seconds, 1)) "
                + "packets=\(window.packets) packets_per_frame=\(fixed(packets / Double(frames))) "
                + "payload_bytes_per_frame=\(fixed(Double(window.payloadBytes) / Double(frames), 1)) "
                + "overhead_bytes_per_frame=\(fixed(Double(window.overheadBytes) / Double(frames), 1)) "
                + "mallocs=\(statistics.mallocCount) malloc_bytes=\(statistics.mallocBytesCount) "
                + "mallocs_per_frame=\(fixed(Double(statistics.mallocCount) / Double(frames), 3)) "
                + "mallocs_per_packet=\(fixed(Double(statistics.mallocCount) / max(1, packets), 3)) "
                + "send_errors=\(sent.sendErrors) datagrams_received=\(drained.withLock { $0 }) "
                + "glass_to_wire_p50_ms=\(fixed(sent.glassToWire.p50Ms, 3)) "
                + "glass_to_wire_p99_ms=\(fixed(sent.glassToWire.p99Ms, 3))")
    }

    /// `--isolated yes`: the sender alone on this thread, fed frames made up front (a key frame every 300, the rest the
    /// size `--kbps` gives at 30 fps), nothing else running but the drain: every allocation counted is the sender's
    /// (packetize, header extensions, RTX history, SRTP, send).
    private func runIsolated(
        sink: CountingSink, sender: VideoSender, drain: UDPSocket,
        drainEnded: Completion
    ) async throws {
        let deltaBytes = kbps * 1_000 / 8 / 30
        let made = (0..<warmup + frames).map { index in
            let key = index % 300 == 0
            return EncodedFrame(
                bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: key ? 6 * deltaBytes : deltaBytes),
                isKeyFrame: key, rtpTimestamp: UInt32(truncatingIfNeeded: index * 3_000),
                captureTimeNs: MonotonicClock.nowNs(), rotation: .degrees0, dimensions: size, qp: 30)
        }
        for frame in made { sink.consume(frame) }
        let window = await sink.finished()
        let statistics = MallocInterposerSwift.getStatistics()
        drain.close()
        await drainEnded.wait()
        print(
            "isolated=yes size=\(size) srtp=\(srtp?.rawValue ?? "none") webrtc=\(webrtc) frames=\(frames) "
                + "packets=\(window.packets) mallocs=\(statistics.mallocCount) "
                + "mallocs_per_packet=\(fixed(Double(statistics.mallocCount) / max(1, Double(window.packets)), 3)) "
                + "send_errors=\(sender.statistics.sendErrors)")
    }

    /// Receives and discards datagrams until the socket is closed.
    private static func drainLoop(_ socket: UDPSocket, into drained: Locked<Int>, ended: Completion) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer {
            buffer.deallocate()
            ended.finish()
        }
        while true {
            do {
                if try socket.receive(into: buffer, timeout: .milliseconds(100)) != nil {
                    drained.withLock { $0 += 1 }
                }
            } catch {
                return
            }
        }
    }
}

/// Forwards frames to the sender; turns allocation counting on at frame `warmup` and off after frame `limit` (or only
/// around each `consume` in between), and keeps the sender's packet and byte counts over that window.
private final class CountingSink: EncodedFrameSink {
    struct Window {
        var startNs: UInt64 = 0
        var endNs: UInt64 = 0
        var packets = 0
        var payloadBytes = 0
        var overheadBytes = 0
    }

    private let sender: VideoSender
    private let warmup: Int
    private let limit: Int
    private let senderOnly: Bool
    private let count = Atomic<Int>(0)
    private let window = Locked(Window())
    private let done: AsyncStream<Window>
    private let signal: AsyncStream<Window>.Continuation

    init(sender: VideoSender, warmup: Int, limit: Int, senderOnly: Bool) {
        self.sender = sender
        self.warmup = warmup
        self.limit = limit
        self.senderOnly = senderOnly
        (done, signal) = AsyncStream.makeStream(of: Window.self, bufferingPolicy: .bufferingNewest(1))
    }

    func consume(_ frame: EncodedFrame) {
        let seen = count.add(1, ordering: .relaxed).newValue
        if seen == warmup + 1 {
            let before = sender.statistics
            window.withLock {
                $0.startNs = MonotonicClock.nowNs()
                $0.packets = -before.packets
                $0.payloadBytes = before.overheadBytes - before.bytes
                $0.overheadBytes = -before.overheadBytes
            }
            if !senderOnly { MallocInterposerSwift.hook() }
        }
        let counted = senderOnly && seen > warmup && seen <= limit
        if counted { MallocInterposerSwift.hook() }
        sender.consume(frame)
        if counted { MallocInterposerSwift.unhook() }
        if seen == limit {
            if !senderOnly { MallocInterposerSwift.unhook() }
            let after = sender.statistics
            let result = window.withLock {
                $0.endNs = MonotonicClock.nowNs()
                $0.packets += after.packets
                $0.payloadBytes += after.bytes - after.overheadBytes
                $0.overheadBytes += after.overheadBytes
                return $0
            }
            signal.yield(result)
            signal.finish()
        }
    }

    func finish() {
        sender.finish()
        signal.finish()
    }

    func finished() async -> Window {
        for await window in done { return window }
        return window.withLock { $0 }
    }
}
