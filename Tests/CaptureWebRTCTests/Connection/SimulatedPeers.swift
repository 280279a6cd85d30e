import CaptureCall
import CaptureCore
import CaptureNetworkSimulator
import CaptureRTP
import CaptureNet
import CaptureDTLS
import CaptureICE
import CaptureVP8
import CaptureWebRTC

/// A ``WebRTCConnection`` as a peer of the simulated network: what arrives goes to the connection, what it polls goes
/// to the network, and its events are kept (with their virtual time) for the test to judge.
class SimulatedConnection: VirtualPeer {
    let connection: WebRTCConnection
    let address: SocketAddress
    var events: [(at: ContinuousClock.Instant, event: ConnectionEvent)] = []
    /// Every transport-wide feedback report the connection made, taken as they come.
    var transportReports: [TransportFeedbackReport] = []
    var now: ContinuousClock.Instant
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)

    static let monotonicBase: Int64 = 1_000_000_000_000
    let start: ContinuousClock.Instant

    init(role: ICERole, address: SocketAddress, start: ContinuousClock.Instant) throws {
        self.address = address
        self.start = start
        now = start
        connection = WebRTCConnection(
            configuration: WebRTCConnection.Configuration(role: role, hostAddresses: [address]),
            certificate: try DTLSCertificate(),
            clock: MediaClock(
                epoch: start, monotonicNanoseconds: UInt64(Self.monotonicBase),
                ntp: NTPTimestamp(rawValue: 0xE000_0000_0000_0000)))
    }

    deinit {
        buffer.deallocate()
    }

    var addresses: [SocketAddress] { [address] }

    var nextTimeout: ContinuousClock.Instant? { connection.nextTimeout }

    func receive(
        _ datagram: UnsafeRawBufferPointer, from source: SocketAddress, to destination: SocketAddress,
        at now: ContinuousClock.Instant
    ) {
        self.now = now
        let copy = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<datagram.count])
        copy.copyMemory(from: datagram)
        connection.handle(datagram: copy, from: source, to: destination, at: now)
        collectEvents()
    }

    func handleTimeout(at now: ContinuousClock.Instant) {
        self.now = now
        if let due = connection.nextTimeout, due <= now { connection.handleTimeout(at: now) }
        collectEvents()
    }

    func drainTransmits(_ send: (SocketAddress, SocketAddress, UnsafeRawBufferPointer) -> Void) {
        while let transmit = connection.pollTransmit() { send(transmit.source, transmit.destination, transmit.bytes) }
        collectEvents()
    }

    func collectEvents() {
        while let event = connection.pollEvent() {
            events.append((now, event))
            react(to: event)
        }
        while let report = connection.pollTransportFeedback() { transportReports.append(report) }
    }

    /// The media clock's nanoseconds at `instant` (both peers share one: 10¹² ns at the start).
    func nanoseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = start.duration(to: instant).components
        return Self.monotonicBase + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A subclass's reaction to an event (sending frames, asking for retransmissions).
    func react(to event: ConnectionEvent) {}

    /// The remote description of this peer, for the other one (numbering its packets under
    /// `transportWideCCExtensionID`, when given).
    func remote(dtlsRole: DTLSRole, transportWideCCExtensionID: UInt8? = nil) -> WebRTCConnection.Remote {
        WebRTCConnection.Remote(
            credentials: connection.localCredentials, candidates: connection.localCandidates,
            fingerprint: connection.certificate.fingerprint, dtlsRole: dtlsRole, endOfCandidates: true,
            transportWideCCExtensionID: transportWideCCExtensionID)
    }

    /// When the connection reported itself connected, if it did.
    var connectedAt: ContinuousClock.Instant? {
        events.first { if case .connected = $0.event { true } else { false } }?.at
    }

    /// The failure the connection reported, with its time.
    var failure: (at: ContinuousClock.Instant, error: WebRTCTransportError)? {
        for (at, event) in events { if case .failed(let error) = event { return (at, error) } }
        return nil
    }
}

/// A publisher: once connected it sends a frame every `frameInterval` (a key frame first and on request), as the
/// encoder thread would, until `stopAt`.
final class SimulatedPublisher: SimulatedConnection {
    static let ssrc: UInt32 = 0x1111_1111
    static let rtxSSRC: UInt32 = 0x2222_2222
    let frameInterval = Duration.milliseconds(33)
    let frameBytes: Int
    var nextFrameAt: ContinuousClock.Instant?
    var stopAt: ContinuousClock.Instant
    var framesSent = 0
    var keyFramePending = true
    var keyFrameRequests = 0
    /// Whether frames are sized by the connection's target (a perfect encoder: target / 8 / 30 bytes a frame), as the
    /// pipeline follows ``ConnectionEvent/targetBitrateChanged(kbps:reason:)``; else every frame is `frameBytes`.
    var followsTarget = false
    /// The target the connection last set (the media's start rate until it sets one).
    var targetKbps = 1_000
    /// Every target change, with its instant.
    var targets: [(at: ContinuousClock.Instant, kbps: Int)] = []
    /// Whether the connection told the encoder to drop frames (``ConnectionEvent/frameDroppingChanged(_:)``), and the
    /// frames dropped for it.
    var droppingFrames = false
    var framesDroppedForCongestion = 0
    /// Simulcast layers sent per frame instant (1: one stream): layer *i* on SSRC `ssrc + i`, RTX `rtxSSRC + i`.
    var layers = 1
    /// The layers whose next frame must be a key frame (all at the start), and each layer's key-frame requests.
    var keyFramePendingLayers: Set<Int> = [0, 1, 2]
    var keyFrameRequestsByLayer: [Int: Int] = [:]

    init(
        address: SocketAddress, start: ContinuousClock.Instant, frameBytes: Int = 2_500, stopAt: ContinuousClock.Instant
    ) throws {
        self.frameBytes = frameBytes
        self.stopAt = stopAt
        try super.init(role: .controlling, address: address, start: start)
    }

    static var media: ConnectionMedia { media(transportWideCCExtensionID: nil) }

    /// The stream, with transport-wide sequence numbers under `transportWideCCExtensionID` when given, and
    /// `layers` simulcast layers (layer *i* on SSRC `ssrc + i`, RTX `rtxSSRC + i`).
    static func media(transportWideCCExtensionID: UInt8?, layers: Int = 1) -> ConnectionMedia {
        func stream(_ layer: Int) -> VideoSenderConfiguration {
            var packetizer = RTPPacketizerConfiguration()
            packetizer.ssrc = ssrc + UInt32(layer)
            packetizer.transportSequenceNumberExtensionID = transportWideCCExtensionID
            if layers > 1 {
                packetizer.ridExtensionID = 4
                packetizer.rid = ["l", "m", "h"][min(layer, 2)]
            }
            return VideoSenderConfiguration(
                remote: .loopbackIPv4(port: 9), rtcpMux: true, packetizer: packetizer,
                retransmission: RetransmissionConfiguration(rtxPayloadType: 97, rtxSSRC: rtxSSRC + UInt32(layer)),
                lossBasedRateControl: true)
        }
        var media = ConnectionMedia(
            sender: stream(0), minBitrateKbps: 100, maxBitrateKbps: 2_500, startBitrateKbps: 1_000,
            congestionControl: transportWideCCExtensionID == nil ? .receiverReports : .transportWide)
        media.simulcastLayers = (1..<max(1, layers)).map(stream)
        return media
    }

    override var nextTimeout: ContinuousClock.Instant? {
        let engine = connection.nextTimeout
        guard let frame = nextFrameAt, frame < stopAt else { return engine }
        return min(engine ?? frame, frame)
    }

    override func handleTimeout(at now: ContinuousClock.Instant) {
        self.now = now
        if let frame = nextFrameAt, frame <= now, frame < stopAt, droppingFrames {
            framesDroppedForCongestion += 1
            nextFrameAt = frame + frameInterval
        } else if let frame = nextFrameAt, frame <= now, frame < stopAt {
            let fill = UInt8(truncatingIfNeeded: framesSent)
            let size = followsTarget ? max(100, targetKbps * 1_000 / 8 / 30) : frameBytes
            for layer in 0..<layers {
                let isKey = layers == 1 ? keyFramePending : keyFramePendingLayers.contains(layer)
                keyFramePending = false
                keyFramePendingLayers.remove(layer)
                connection.send(
                    frame: EncodedFrame(
                        bytes: [UInt8](repeating: fill, count: isKey ? size * 4 : size), isKeyFrame: isKey,
                        rtpTimestamp: UInt32(truncatingIfNeeded: framesSent * 3_000),
                        captureTimeNs: 1_000_000_000_000, rotation: .degrees0,
                        dimensions: Dimensions(width: 640, height: 480), qp: 30, simulcastIndex: layer),
                    at: now)
            }
            framesSent += 1
            nextFrameAt = frame + frameInterval
        }
        super.handleTimeout(at: now)
    }

    override func react(to event: ConnectionEvent) {
        switch event {
        case .connected: nextFrameAt = now
        case .keyFrameRequested(_, let layer):
            keyFrameRequests += 1
            keyFramePending = true
            keyFramePendingLayers.insert(layer)
            keyFrameRequestsByLayer[layer, default: 0] += 1
        case .targetBitrateChanged(let kbps, _):
            targetKbps = kbps
            targets.append((now, kbps))
        case .frameDroppingChanged(let drop): droppingFrames = drop
        default: break
        }
    }
}

/// A viewer: counts the media it receives, NACKs the gaps in the media stream (again after 100 ms, at most three
/// times) and marks a packet recovered when its RTX arrives.
final class SimulatedViewer: SimulatedConnection {
    var received = Set<UInt16>()
    var highest: UInt16?
    var missing: [UInt16: (lastNACK: ContinuousClock.Instant, tries: Int)] = [:]
    var nacksSent = 0
    var recovered = Set<UInt16>()
    var rtxReceived = 0
    var mediaPackets = 0
    /// Each transport-wide number received, when it arrived, and whether it came on the RTX SSRC.
    var transportArrivals: [UInt16: (at: ContinuousClock.Instant, isRTX: Bool)] = [:]
    /// Packets received with a transport-wide number (duplicates included).
    var transportNumbered = 0
    /// Every RTP packet received, counted by SSRC (media and RTX).
    var packetsBySSRC: [UInt32: Int] = [:]
    /// The last sequence numbers received on each SSRC (at most 16), newest last.
    var recentBySSRC: [UInt32: [UInt16]] = [:]

    init(address: SocketAddress, start: ContinuousClock.Instant) throws {
        try super.init(role: .controlled, address: address, start: start)
    }

    override var nextTimeout: ContinuousClock.Instant? {
        let engine = connection.nextTimeout
        guard let retry = missing.values.map({ $0.lastNACK + .milliseconds(100) }).min() else { return engine }
        return min(engine ?? retry, retry)
    }

    override func handleTimeout(at now: ContinuousClock.Instant) {
        self.now = now
        var again: [UInt16] = []
        for (number, state) in missing where state.lastNACK + .milliseconds(100) <= now {
            if state.tries >= 3 {
                missing[number] = nil
            } else {
                missing[number] = (now, state.tries + 1)
                again.append(number)
            }
        }
        if !again.isEmpty {
            nacksSent += 1
            connection.sendNACK(mediaSSRC: SimulatedPublisher.ssrc, sequenceNumbers: again.sorted(), at: now)
        }
        super.handleTimeout(at: now)
    }

    override func react(to event: ConnectionEvent) {
        guard case .rtpReceived(let packet) = event else { return }
        packetsBySSRC[packet.ssrc, default: 0] += 1
        recentBySSRC[packet.ssrc, default: []].append(packet.sequenceNumber)
        if recentBySSRC[packet.ssrc, default: []].count > 16 { recentBySSRC[packet.ssrc]?.removeFirst() }
        if let number = packet.transportSequenceNumber {
            transportNumbered += 1
            transportArrivals[number] = (now, packet.ssrc == SimulatedPublisher.rtxSSRC)
        }
        if packet.ssrc == SimulatedPublisher.rtxSSRC {
            rtxReceived += 1
            if let original = packet.payloadHead {
                recovered.insert(original)
                received.insert(original)
                missing[original] = nil
            }
            return
        }
        guard packet.ssrc == SimulatedPublisher.ssrc else { return }
        mediaPackets += 1
        received.insert(packet.sequenceNumber)
        missing[packet.sequenceNumber] = nil
        if let highest {
            let gap = packet.sequenceNumber &- highest
            guard gap > 0, gap < 0x8000 else { return }
            var lost: [UInt16] = []
            var number = highest &+ 1
            while number != packet.sequenceNumber {
                if !received.contains(number) {
                    lost.append(number)
                    missing[number] = (now, 1)
                }
                number &+= 1
            }
            if !lost.isEmpty {
                nacksSent += 1
                connection.sendNACK(mediaSSRC: SimulatedPublisher.ssrc, sequenceNumbers: lost, at: now)
            }
        }
        highest = packet.sequenceNumber
    }
}
