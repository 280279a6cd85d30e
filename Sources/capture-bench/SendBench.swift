import CaptureCall
import CaptureCore
import CaptureRTP
import CaptureVP8
import Foundation
import MallocInterposerSwift
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The send path: the synthetic camera (unpaced unless `--paced yes`) → `SendPipeline` (VP8) → `VideoSender` (plain
/// RTP, or SRTP with `--srtp yes`) → a loopback UDP socket that only drains. With the malloc interposer preloaded
/// (`LD_PRELOAD=libMallocInterposerSwift.so`, as for `capture`), it counts heap allocations between sent frame
/// `warmup` and frame `warmup + frames`: on every thread (`--scope all`, the default: capture, conversion, encoder,
/// sender, RTCP and drain threads), or only while `VideoSender.consume` runs (`--scope sender`: packetize, protect,
/// send; other threads that allocate meanwhile are counted too, so it is an upper bound).
struct SendBench {
    let size: Dimensions
    let frames: Int
    let warmup: Int
    let kbps: Int
    let srtp: Bool
    let paced: Bool
    let senderOnly: Bool

    init(_ options: BenchOptions) throws(CaptureError) {
        size = try options.dimensions()
        frames = try options.int("frames", default: 1000)
        warmup = try options.int("warmup", default: 100)
        kbps = try options.int("kbps", default: 1_000)
        srtp = options.values["srtp"] == "yes"
        paced = options.values["paced"] == "yes"
        switch options.values["scope"] ?? "all" {
        case "all": senderOnly = false
        case "sender": senderOnly = true
        case let other: throw CaptureError(.invalidArgument, "bad --scope \(other) (all or sender)")
        }
    }

    func run() async throws {
        MallocInterposerSwift.initialize()
        let drain = try UDPSocket(bindingTo: SocketAddress.loopbackIPv4(port: 0))
        let drained = Locked((datagrams: 0, stopped: false))
        Thread.detachNewThread { Self.drainLoop(drain, into: drained) }
        let packetizer = RTPPacketizerConfiguration()
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: drain.localAddress, rtcpMux: true, packetizer: packetizer,
                srtp: srtp ? SRTPKeyingMaterial.random() : nil))
        let sink = CountingSink(
            sender: sender, warmup: warmup, limit: warmup + frames, senderOnly: senderOnly)
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
        pipeline.stop()
        let statistics = MallocInterposerSwift.getStatistics()
        drain.close()
        while !drained.withLock({ $0.stopped }) { usleep(1_000) }
        let sent = sender.statistics
        let seconds = Double(window.endNs &- window.startNs) / 1e9
        let packets = Double(window.packets)
        print(
            "size=\(size) srtp=\(srtp) paced=\(paced) scope=\(senderOnly ? "sender" : "all") frames=\(frames) "
                + "seconds=\(fixed(seconds, 3)) fps=\(fixed(Double(frames) / seconds, 1)) "
                + "packets=\(window.packets) packets_per_frame=\(fixed(packets / Double(frames))) "
                + "payload_bytes_per_frame=\(fixed(Double(window.payloadBytes) / Double(frames), 1)) "
                + "overhead_bytes_per_frame=\(fixed(Double(window.overheadBytes) / Double(frames), 1)) "
                + "mallocs=\(statistics.mallocCount) malloc_bytes=\(statistics.mallocBytesCount) "
                + "mallocs_per_frame=\(fixed(Double(statistics.mallocCount) / Double(frames), 3)) "
                + "mallocs_per_packet=\(fixed(Double(statistics.mallocCount) / max(1, packets), 3)) "
                + "send_errors=\(sent.sendErrors) datagrams_received=\(drained.withLock { $0.datagrams }) "
                + "glass_to_wire_p50_ms=\(fixed(sent.glassToWire.p50Ms, 3)) "
                + "glass_to_wire_p99_ms=\(fixed(sent.glassToWire.p99Ms, 3))")
    }

    /// Receives and discards datagrams until the socket is closed.
    private static func drainLoop(_ socket: UDPSocket, into drained: Locked<(datagrams: Int, stopped: Bool)>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer {
            buffer.deallocate()
            drained.withLock { $0.stopped = true }
        }
        while true {
            do {
                if try socket.receive(into: buffer, timeout: .milliseconds(100)) != nil {
                    drained.withLock { $0.datagrams += 1 }
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
