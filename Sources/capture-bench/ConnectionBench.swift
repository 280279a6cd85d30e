import CaptureCall
import CaptureCore
import CaptureRTP
import CaptureNet
import CaptureDTLS
import CaptureICE
import CaptureVP8
import CaptureWebRTC
import MallocInterposerSwift

/// The WebRTC connection's send path alone: two ``WebRTCConnection``s connected in memory (no sockets), then
/// `--frames N` encoded frames of `--bytes B` (every 30th a key frame of four times that) through the publisher's
/// ``WebRTCConnection/send(frame:at:)`` and ``WebRTCConnection/pollTransmit()`` (packetize, the transport-wide
/// sequence number and its send history, the pacer and its packet store, SRTP, the RTX history, the transmit slab),
/// after `--warmup W` frames, the pacer's timeouts run in virtual time between frames. With the malloc interposer
/// preloaded (`LD_PRELOAD=libMallocInterposerSwift.so`) it counts the heap allocations of exactly that, per packet.
struct ConnectionBench {
    let frames: Int
    let warmup: Int
    let bytes: Int

    init(_ options: BenchOptions) throws(CaptureError) {
        frames = try options.int("frames", default: 1_000)
        warmup = try options.int("warmup", default: 100)
        bytes = try options.int("bytes", default: 4_000)
    }

    func run() throws {
        MallocInterposerSwift.initialize()
        let (publisher, viewer) = try Self.connectedPair()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        var hooked = false
        /// The viewer's side (consent answers, receiver reports, transport-wide feedback), outside the count; the
        /// publisher's handling of what comes back, inside it.
        func answer(at now: ContinuousClock.Instant) {
            if hooked { MallocInterposerSwift.unhook() }
            if let due = viewer.nextTimeout, due <= now { viewer.handleTimeout(at: now) }
            var replies: [(bytes: [UInt8], source: SocketAddress, destination: SocketAddress)] = []
            while let transmit = viewer.pollTransmit() {
                replies.append((Array(transmit.bytes), transmit.source, transmit.destination))
            }
            while viewer.pollEvent() != nil {}
            if hooked { MallocInterposerSwift.hook() }
            for reply in replies {
                let datagram = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<reply.bytes.count])
                reply.bytes.withUnsafeBytes { datagram.copyMemory(from: $0) }
                publisher.handle(datagram: datagram, from: reply.source, to: reply.destination, at: now)
            }
            while publisher.pollEvent() != nil {}
        }
        var made: [EncodedFrame] = []
        for index in 0..<(warmup + frames) {
            let isKey = index % 30 == 0
            let count = isKey ? bytes * 4 : bytes
            made.append(
                EncodedFrame(
                    bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: count), isKeyFrame: isKey,
                    rtpTimestamp: UInt32(truncatingIfNeeded: index * 3_000), captureTimeNs: MonotonicClock.nowNs(),
                    rotation: .degrees0, dimensions: Dimensions(width: 1280, height: 720), qp: 30))
        }
        var packets = 0
        var sentBytes = 0
        var now = ContinuousClock.now
        // Indices, not enumerated(): the debug build's generic iterator allocates a coroutine frame per step.
        for index in made.indices {
            let frame = made[index]
            if index == warmup {
                MallocInterposerSwift.hook()
                hooked = true
                packets = 0
                sentBytes = 0
            }
            publisher.send(frame: frame, at: now)
            // The pacer lets the frame's packets go over the next milliseconds: its timeouts until the next frame.
            let next = now + .milliseconds(33)
            while true {
                while let transmit = publisher.pollTransmit() {
                    packets += 1
                    sentBytes += transmit.bytes.count
                    let datagram = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<transmit.bytes.count])
                    datagram.copyMemory(from: transmit.bytes)
                    if hooked { MallocInterposerSwift.unhook() }
                    viewer.handle(datagram: datagram, from: transmit.source, to: transmit.destination, at: now)
                    if hooked { MallocInterposerSwift.hook() }
                }
                answer(at: now)
                guard let due = publisher.nextTimeout, due < next else { break }
                now = max(due, now)
                publisher.handleTimeout(at: now)
            }
            now = next
        }
        MallocInterposerSwift.unhook()
        let statistics = MallocInterposerSwift.getStatistics()
        print(
            "frames=\(frames) packets=\(packets) bytes=\(sentBytes) mallocs=\(statistics.mallocCount) "
                + "mallocs_per_packet=\(Double(statistics.mallocCount) / Double(max(1, packets))) "
                + "twcc_numbered=\(publisher.statistics.transportWideCC.packetsSent) "
                + "feedback=\(publisher.statistics.transportWideCC.feedbackReceived) "
                + "estimate_bps=\(publisher.statistics.transportWideCC.estimatedBitrate ?? 0)")
    }

    /// Two connections joined in memory until both are connected (real time: DTLS's timers are OpenSSL's).
    static func connectedPair() throws -> (WebRTCConnection, WebRTCConnection) {
        let start = ContinuousClock.now
        let clock = MediaClock.now()
        let left = SocketAddress.loopbackIPv4(port: 40_000)
        let right = SocketAddress.loopbackIPv4(port: 50_000)
        let publisher = WebRTCConnection(
            configuration: .init(role: .controlling, hostAddresses: [left]), certificate: try DTLSCertificate(),
            clock: clock)
        let viewer = WebRTCConnection(
            configuration: .init(role: .controlled, hostAddresses: [right]), certificate: try DTLSCertificate(),
            clock: clock)
        func remote(_ of: WebRTCConnection, _ role: DTLSRole, numbered: UInt8? = nil) -> WebRTCConnection.Remote {
            .init(
                credentials: of.localCredentials, candidates: of.localCandidates,
                fingerprint: of.certificate.fingerprint, dtlsRole: role, endOfCandidates: true,
                transportWideCCExtensionID: numbered)
        }
        // Transport-wide congestion control on, as with Janus and Chromium: every packet numbered and recorded.
        let media = ConnectionMedia(
            sender: VideoSenderConfiguration(
                remote: left, rtcpMux: true,
                packetizer: RTPPacketizerConfiguration(transportSequenceNumberExtensionID: 3),
                retransmission: RetransmissionConfiguration(rtxPayloadType: 97, rtxSSRC: 7)),
            minBitrateKbps: 100, maxBitrateKbps: 2_500, startBitrateKbps: 1_000, congestionControl: .transportWide)
        // The viewer numbers what it receives and feeds back: the estimator and the pacer run as in a call.
        viewer.start(remote: remote(publisher, .client, numbered: 3), media: nil, at: start)
        publisher.start(remote: remote(viewer, .server), media: media, at: start)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        func carry(_ from: WebRTCConnection, to: WebRTCConnection, at now: ContinuousClock.Instant) {
            while let transmit = from.pollTransmit() {
                let datagram = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<transmit.bytes.count])
                datagram.copyMemory(from: transmit.bytes)
                to.handle(datagram: datagram, from: transmit.source, to: transmit.destination, at: now)
            }
        }
        while ContinuousClock.now < start + .seconds(10) {
            let now = ContinuousClock.now
            for connection in [publisher, viewer] {
                if let due = connection.nextTimeout, due <= now { connection.handleTimeout(at: now) }
            }
            carry(publisher, to: viewer, at: now)
            carry(viewer, to: publisher, at: now)
            if case .connected = publisher.state, case .connected = viewer.state { return (publisher, viewer) }
        }
        throw CaptureError(.invalidArgument, "the connections did not connect in memory: \(publisher.state)")
    }
}
