public import CaptureCall
internal import CaptureCore
internal import CaptureDTLS
internal import CaptureICE
internal import CaptureNet
internal import CaptureRTP
internal import CaptureVP8
import Foundation
public import Logging

/// Publishes the camera to a conference server over WebRTC, signalled with WHIP (RFC 9725): the send pipeline's VP8,
/// in SRTP over one ICE-selected UDP 5-tuple, with RTX answers to NACKs, key frames on PLI and FIR, and the encoder
/// steered by REMB within the configured range.
///
/// ``start()`` gathers host candidates (and, from the STUN and TURN servers given, reflexive and relayed ones, waiting
/// at most ``WHIPPublisherConfiguration/gatheringTimeout``), POSTs an offer that carries them (under
/// `ICETransportPolicy/relay` only the relayed ones) without `a=end-of-candidates`, checks pairs as the controlling
/// agent (Janus never nominates), completes DTLS, and returns the ``SendPipeline`` to hand the capturer as its
/// delegate. Meanwhile, without delaying any of that, the STUN and TURN servers the endpoint announced in the 201's
/// `Link` headers (those the user did not give already) are gathered from, and what they give is trickled by PATCH,
/// then `a=end-of-candidates` (see ``WHIPTrickleStatistics``; a resource that refuses PATCH is counted, not fatal).
/// Policy `ICETransportPolicy/relay` needs a TURN server of the user's: the offer must carry a relayed candidate,
/// and the endpoint's servers are only known from its answer to that offer (RFC 9725 permits fetching them earlier
/// with OPTIONS but does not recommend it, and this publisher does not).
///
/// ``stop()`` sends RTCP BYE, DELETEs the WHIP resource and closes the transport; a failure
/// after the endpoint created the resource DELETEs it too, so no half-open session is left.
///
/// The phases are an explicit state machine: idle → connecting → publishing → stopped.
public final class WHIPPublisher: Sendable {
    /// The configuration the publisher was created with.
    public let configuration: WHIPPublisherConfiguration

    struct Session {
        let transport: WebRTCTransport
        let whip: WHIPSession
        let pipeline: SendPipeline
    }

    enum Phase {
        case idle
        case connecting(WebRTCTransport?)
        case publishing(Session)
        case stopped
    }

    struct State {
        var phase = Phase.idle
        var startNs: UInt64 = 0
        var answeredAfter: Duration?
        var connectedAfter: Duration?
        /// The simulcast layers the answer let us send, and the rids it did not accept.
        var simulcastLayers = 1
        var rejectedRids: [String] = []
        /// The last transport, kept for statistics after stop.
        var transport: WebRTCTransport?
        var pipeline: SendPipeline?
        /// Trickling the `Link` servers' candidates, until gathering is over or the session ends.
        var trickleTask: Task<Void, Never>?
        var trickle = WHIPTrickleStatistics()
    }

    let client: WHIPClient
    let logger: Logger
    let state = Locked(State())

    /// Creates a publisher; nothing happens before ``start()``.
    public init(
        configuration: WHIPPublisherConfiguration, logger: Logger = Logger(label: "capture.webrtc.whip-publisher")
    ) {
        self.configuration = configuration
        self.logger = logger
        client = WHIPClient(
            endpoint: configuration.endpoint, bearerToken: configuration.bearerToken,
            timeout: configuration.httpTimeout)
    }

    /// Connects (offer, answer, ICE, DTLS) and returns the pipeline to give the capturer as its delegate.
    public func start() async throws(WHIPPublishError) -> SendPipeline {
        let startNs = MonotonicClock.nowNs()
        let mayStart = state.withLock { state -> Bool in
            guard case .idle = state.phase else { return false }
            state.phase = .connecting(nil)
            state.startNs = startNs
            return true
        }
        guard mayStart else { throw .invalidState("start() on a publisher that is not idle") }
        // getaddrinfo blocks: the user's servers are resolved off the cooperative pool, as the Link servers are.
        let (stun, turn) = await BlockingExecutor.shared.run { [self] in (stunServers(), turnServers()) }
        let transport: WebRTCTransport
        do {
            transport = try await WebRTCTransport.open(
                configuration: WebRTCTransport.Configuration(
                    role: .controlling, stunServers: stun, hostAddresses: configuration.hostAddresses,
                    mtu: configuration.maxPacketSize, turnServers: turn,
                    transportPolicy: configuration.iceTransportPolicy),
                logger: logger)
        } catch {
            state.withLock { $0.phase = .stopped }
            throw .transport(error)
        }
        let candidates = await transport.gatheredCandidates(timeout: configuration.gatheringTimeout)
        guard !candidates.isEmpty else {
            await transport.closed()
            state.withLock { $0.phase = .stopped }
            let reasons = transport.turnAllocations.compactMap { $0.lastError.map { "\($0)" } }
            throw .transport(
                WebRTCTransportError(
                    .noLocalAddress,
                    "no candidate to offer under ICE transport policy \(configuration.iceTransportPolicy.rawValue)"
                        + (reasons.isEmpty
                            ? " (no usable TURN server; the endpoint's Link servers come only with its answer)"
                            : ": " + reasons.joined(separator: "; "))))
        }
        state.withLock {
            $0.phase = .connecting(transport)
            $0.transport = transport
        }
        let layerCount = min(Self.simulcastRIDs.count, max(1, configuration.simulcastLayers))
        let ssrcs = (0..<layerCount).map { _ in UInt32.random(in: 1...UInt32.max) }
        let rtxSSRCs = (0..<layerCount).map { _ in UInt32.random(in: 1...UInt32.max) }
        let rids = Array(Self.simulcastRIDs.prefix(layerCount))
        let cname = "capturer-\(UInt32.random(in: 0...UInt32.max))"
        var offerDescription = PublishOffer(
            iceUfrag: transport.localCredentials.ufrag, icePassword: transport.localCredentials.password,
            fingerprint: transport.certificate.fingerprint.sdpValue, streamID: "capturer-probe", trackID: "camera",
            cname: cname, ssrc: ssrcs[0],
            rtx: configuration.retransmission ? PublishOffer.Retransmission(ssrc: rtxSSRCs[0]) : nil,
            // mid 1, video orientation 2, the transport-wide sequence number 3 (Chromium's ids), and transport-cc;
            // with simulcast, rid 4 and repaired rid 5.
            extensionIDs: PublishOffer.HeaderExtensionIDs(),
            rtcpFeedback: PublishOffer.defaultRTCPFeedback,
            candidates: candidates.map(\.sdpAttributeValue), framerate: configuration.encoder.framerate,
            // More may be trickled after the answer (the endpoint's Link servers): end-of-candidates comes by PATCH.
            endOfCandidates: false
        )
        // Highest first: Janus's default rid order ("hml") takes the first a=rid as its top substream.
        if layerCount > 1 { offerDescription.simulcast = PublishOffer.Simulcast(rids: rids.reversed()) }
        let offer = offerDescription.render()

        let whip: WHIPSession
        do {
            whip = try await client.publish(offer: offer)
        } catch {
            await transport.closed()
            state.withLock { $0.phase = .stopped }
            throw .whip(error)
        }
        state.withLock { $0.answeredAfter = .nanoseconds(Int64(clamping: MonotonicClock.nowNs() &- startNs)) }
        let answer = whip.answer
        let remote: WebRTCTransport.Remote
        do {
            remote = try Self.remote(from: answer)
        } catch {
            await abandon(whip, transport)
            throw error
        }
        let orientationID = answer.extensionIDs[Self.videoOrientationURI]
        let (layers, rejected) = Self.acceptedLayers(offered: rids, answer: answer)
        if layers < layerCount {
            logger.warning(
                "the answer accepts fewer simulcast layers than offered",
                metadata: ["offered": "\(layerCount)", "accepted": "\(layers)", "rejected": "\(rejected)"])
        }
        state.withLock {
            $0.simulcastLayers = layers
            $0.rejectedRids = rejected
        }
        let answersNACK = answer.rtcpFeedback.contains("nack")
        let retransmits = configuration.retransmission && answersNACK
        /// Layer `index`'s stream: its SSRC, RTX SSRC and (with simulcast) rid.
        func sender(_ index: Int) -> VideoSenderConfiguration {
            var packetizer = RTPPacketizerConfiguration(
                maxPacketSize: configuration.maxPacketSize, payloadType: answer.payloadType, ssrc: ssrcs[index],
                videoOrientationExtensionID: orientationID, midExtensionID: answer.extensionIDs[Self.midURI],
                mid: answer.mid ?? "0", transportSequenceNumberExtensionID: answer.transportWideCCExtensionID)
            if layers > 1 {
                packetizer.rid = rids[index]
                packetizer.ridExtensionID = answer.ridExtensionID
                packetizer.repairedRidExtensionID = answer.repairedRidExtensionID
            }
            return VideoSenderConfiguration(
                remote: transport.localAddress, rtcpMux: true, packetizer: packetizer, cname: cname,
                retransmission: retransmits
                    ? RetransmissionConfiguration(rtxPayloadType: answer.rtxPayloadType, rtxSSRC: rtxSSRCs[index])
                    : nil,
                firstTransmissionLoss: configuration.firstTransmissionLoss, lossBasedRateControl: true,
                metricsDeviceID: configuration.metricsDeviceID)
        }
        var media = ConnectionMedia(
            sender: sender(0), minBitrateKbps: configuration.minBitrateKbps,
            maxBitrateKbps: configuration.maxBitrateKbps, startBitrateKbps: configuration.encoder.targetBitrateKbps,
            congestionControl: configuration.congestionControl)
        media.simulcastLayers = (1..<layers).map(sender)
        media.probesStaleEstimate = configuration.probesStaleEstimate
        transport.start(remote: remote, media: media)
        let trickle = Task { await self.trickle(whip, transport: transport, offered: candidates) }
        state.withLock { $0.trickleTask = trickle }
        do {
            _ = try await transport.connected(timeout: configuration.connectTimeout)
        } catch {
            await abandon(whip, transport)
            throw .transport(error)
        }
        state.withLock { $0.connectedAfter = .nanoseconds(Int64(clamping: MonotonicClock.nowNs() &- startNs)) }

        let pipeline: SendPipeline
        do {
            // Without the orientation extension the frame is rotated upright before encoding, so that the far end
            // shows it right whatever it understands.
            pipeline = try SendPipeline(
                configuration: SendPipelineConfiguration(
                    encoder: configuration.encoder, minBitrateKbps: configuration.minBitrateKbps,
                    maxBitrateKbps: configuration.maxBitrateKbps, rotatePixels: orientationID == nil,
                    simulcast: layers > 1
                        ? SimulcastConfiguration(
                            maxLayers: layers, temporalLayers: configuration.encoder.temporalLayers)
                        : nil),
                sinks: [transport], logger: logger)
        } catch {
            await abandon(whip, transport)
            throw .pipeline("\(error)")
        }
        transport.attach(to: pipeline)
        let session = Session(transport: transport, whip: whip, pipeline: pipeline)
        let stillWanted = state.withLock { state -> Bool in
            guard case .connecting = state.phase else { return false }
            state.phase = .publishing(session)
            state.pipeline = pipeline
            return true
        }
        guard stillWanted else {
            await end(session)
            throw .invalidState("stopped while connecting")
        }
        logger.info(
            "publishing",
            metadata: [
                "resource": "\(whip.resourceURL)", "rtx": "\(retransmits)", "simulcast layers": "\(layers)",
                "twcc": "\(answer.transportWideCCExtensionID != nil)",
            ])
        return pipeline
    }

    /// Stops sending (RTCP BYE), DELETEs the WHIP resource and closes the transport. Idempotent; safe before start.
    public func stop() async {
        let phase = state.withLock { state in
            defer { state.phase = .stopped }
            return state.phase
        }
        switch phase {
        case .publishing(let session): await end(session)
        case .connecting(let transport):
            stopTrickling()
            await transport?.closed()
        case .idle, .stopped: break
        }
    }

    /// The transport's state now (`.new` before ``start()``): `.failed` after consent is lost mid-stream.
    public var transportState: WebRTCTransport.State {
        state.withLock { $0.transport }?.state ?? .new
    }

    /// Everything measured so far.
    public var statistics: WHIPPublisherStatistics {
        let snapshot = state.withLock {
            ($0.transport, $0.pipeline, $0.answeredAfter, $0.connectedAfter)
        }
        let transport = snapshot.0
        var statistics = WHIPPublisherStatistics(
            transportState: transport.map { "\($0.state)" } ?? "new", selectedPair: transport?.selectedPairDescription,
            ice: transport?.iceStatistics ?? ICEStatistics(), transport: transport?.statistics ?? .init(),
            sender: transport?.mediaStatistics, pipeline: snapshot.1?.statistics, answeredAfter: snapshot.2,
            connectedAfter: snapshot.3, turn: transport?.turnAllocations ?? [],
            trickle: state.withLock { $0.trickle })
        (statistics.simulcastLayers, statistics.rejectedRids) = state.withLock { ($0.simulcastLayers, $0.rejectedRids) }
        if statistics.simulcastLayers > 1 { statistics.layerSenders = transport?.layerStatistics ?? [] }
        return statistics
    }

    // MARK: Helpers

    static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// The rids of simulcast layers 0, 1, 2 (lowest resolution first).
    static let simulcastRIDs = ["l", "m", "h"]

    /// How many simulcast layers to send, and the rids not accepted: the offered rids (lowest first) the answer
    /// accepts, counted from the lowest up to the first it does not (a layer is only useful with every layer under
    /// it; paused counts as not accepted); 1 when the answer has no simulcast, no rid extension, or there was none
    /// to offer. Rids the answer names that were not offered are listed as rejected and otherwise ignored.
    static func acceptedLayers(offered rids: [String], answer: PublishAnswer) -> (layers: Int, rejected: [String]) {
        guard rids.count > 1 else { return (1, []) }
        guard let simulcast = answer.simulcast, answer.ridExtensionID != nil else { return (1, rids) }
        let accepted = Set(simulcast.accepted)
        let count = rids.prefix { accepted.contains($0) }.count
        let unknown = (simulcast.accepted + simulcast.paused).filter { !rids.contains($0) }
        let rejected = rids.filter { !accepted.contains($0) } + unknown
        // Layer 0 is sent whatever the answer says of it: without a rid it is the one stream.
        return (max(1, count), rejected)
    }
    static let videoOrientationURI = "urn:3gpp:video-orientation"

    /// What the transport needs from the answer.
    static func remote(from answer: PublishAnswer) throws(WHIPPublishError) -> WebRTCTransport.Remote {
        let fingerprint: DTLSFingerprint
        do {
            fingerprint = try DTLSFingerprint(sdpValue: answer.fingerprint.attributeValue)
        } catch {
            throw .unusableAnswer("a=fingerprint \(answer.fingerprint.attributeValue): \(error)")
        }
        guard let role = DTLSRole(answerSetup: answer.setup.rawValue) else {
            throw .unusableAnswer("a=setup:\(answer.setup.rawValue) is not valid in an answer")
        }
        let candidates = answer.candidates.compactMap { try? ICECandidate(parsing: $0) }.filter(\.isUsable)
        guard !candidates.isEmpty else {
            throw .unusableAnswer("no usable UDP candidate among \(answer.candidates.count) in the answer")
        }
        return WebRTCTransport.Remote(
            credentials: ICECredentials(ufrag: answer.iceUfrag, password: answer.icePassword),
            candidates: candidates, fingerprint: fingerprint, dtlsRole: role,
            endOfCandidates: answer.endOfCandidates, transportWideCCExtensionID: answer.transportWideCCExtensionID)
    }

    /// The STUN servers among `servers` (the user's by default), resolved.
    func stunServers(from servers: [ICEServer]? = nil) -> [SocketAddress] {
        (servers ?? configuration.iceServers).filter { $0.scheme == .stun }.flatMap { Self.resolve($0).prefix(1) }
    }

    /// The TURN servers over UDP with their credentials among `servers` (the user's by default), resolved; `turns:`,
    /// TCP and credential-less ones are said in the log and skipped.
    func turnServers(from given: [ICEServer]? = nil) -> [TURNServer] {
        var servers: [TURNServer] = []
        for server in given ?? configuration.iceServers where server.scheme != .stun {
            guard server.scheme == .turn, !server.url.lowercased().contains("transport=tcp") else {
                logger.warning("only TURN over UDP is supported; ignored", metadata: ["server": "\(server.url)"])
                continue
            }
            guard let username = server.username, let credential = server.credential else {
                logger.warning(
                    "a TURN server without username and credential; ignored", metadata: ["server": "\(server.url)"])
                continue
            }
            guard let address = Self.resolve(server).first else {
                logger.warning("cannot resolve the TURN server; ignored", metadata: ["server": "\(server.url)"])
                continue
            }
            servers.append(TURNServer(address: address, username: username, password: credential, name: server.url))
        }
        return servers
    }

    /// The addresses of a server's host (port 3478 unless given).
    static func resolve(_ server: ICEServer) -> [SocketAddress] {
        let parts = server.hostAndPort.split(separator: ":", omittingEmptySubsequences: false)
        let port = parts.count > 1 ? UInt16(parts[parts.count - 1]) ?? 3478 : 3478
        let host = parts.count > 1 ? parts.dropLast().joined(separator: ":") : server.hostAndPort
        return HostResolver.resolve(host: host, port: port)
    }

    /// After the endpoint created a resource, a failure ends it: DELETE (errors logged), then close.
    private func abandon(_ whip: WHIPSession, _ transport: WebRTCTransport) async {
        stopTrickling()
        await transport.closed()
        do {
            try await client.delete(whip)
        } catch {
            logger.warning("DELETE of the WHIP resource failed", metadata: ["error": "\(error)"])
        }
        state.withLock { $0.phase = .stopped }
    }

    private func end(_ session: Session) async {
        stopTrickling()
        await session.pipeline.stop()
        // The last sender report with BYE, DTLS close_notify and the TURN allocations released, before the DELETE.
        await session.transport.closed()
        do {
            try await client.delete(session.whip)
        } catch {
            logger.warning("DELETE of the WHIP resource failed", metadata: ["error": "\(error)"])
        }
    }

    /// Cancels the trickle (no PATCH after the DELETE, unless one is already under way).
    private func stopTrickling() {
        state.withLock { state in
            state.trickleTask?.cancel()
            state.trickleTask = nil
        }
    }
}
