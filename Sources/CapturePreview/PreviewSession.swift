public import CaptureCall
public import CaptureCore
internal import CaptureDTLS
internal import CaptureICE
public import CaptureNet
internal import CaptureRTP
public import CaptureVP8
package import CaptureWebRTC
import Foundation
public import Logging

/// The preview's WebRTC side: one `SendPipeline` (capture once, encode once) whose frames go to every viewer that
/// POSTs a WHEP offer, each over its own ICE/DTLS-SRTP transport and sender.
///
/// We answer, so our ICE agent is controlled (a full agent: it answers checks and checks back) and we take the DTLS
/// server's role (`a=setup:passive`), as Janus does for its publishers. A viewer's transport connects in the
/// background after the answer; once DTLS is up its sender joins the fan-out and a key frame is requested, so a
/// viewer joining mid-stream sees a picture at once. A viewer that fails to connect, or whose consent is lost, is
/// removed and counted.
public final class PreviewSession: WHEPSessionHandler {
    struct Viewer {
        let transport: WebRTCTransport
    }

    struct State {
        var viewers: [String: Viewer] = [:]
        var started = 0
        var failed = 0
        var nextID = 1
    }

    /// The pipeline to give the capturer as its delegate.
    public let pipeline: SendPipeline
    let fanout: ViewerFanout
    let state = Locked(State())
    let hostAddresses: [SocketAddress]?
    let maxPacketSize: Int
    let maxViewers: Int
    let logger: Logger
    /// The frame size and rate the capture runs at, and the device orientation's rotation (for the page's figures).
    let figuresBase: Locked<PreviewFigures>

    /// Creates the session and its pipeline.
    ///
    /// - Parameters:
    ///   - encoder: The shared encoder's settings.
    ///   - hostAddresses: The addresses to offer as host candidates (`nil`: every interface that is up).
    ///   - maxPacketSize: The largest RTP packet and the transports' MTU, in bytes.
    ///   - maxViewers: Viewers beyond this are refused with 503.
    ///   - logger: Where the session, its pipeline and the viewers' transports log.
    public init(
        encoder: VP8EncoderConfiguration, hostAddresses: [SocketAddress]? = nil, maxPacketSize: Int = 1_200,
        maxViewers: Int = 16, logger: Logger = Logger(label: "capture.webrtc.preview")
    ) throws(CaptureError) {
        let fanout = ViewerFanout()
        self.fanout = fanout
        pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(encoder: encoder, minBitrateKbps: 100, maxBitrateKbps: 2_500),
            sinks: [fanout], logger: logger)
        self.hostAddresses = hostAddresses
        self.maxPacketSize = maxPacketSize
        self.maxViewers = maxViewers
        self.logger = logger
        figuresBase = Locked(PreviewFigures(fps: encoder.framerate))
    }

    /// Sets what the page shows about the capture (size, rate, rotation).
    public func describeCapture(width: Int, height: Int, fps: Double, rotation: Int) {
        figuresBase.withLock {
            $0.width = width
            $0.height = height
            $0.fps = fps
            $0.rotation = rotation
        }
    }

    /// Answers a viewer's offer; its transport connects in the background.
    public func answer(
        offer: String, remote: String
    ) async throws(WHEPRequestError) -> (
        answer: String, viewerID: String
    ) {
        let parsed: ViewerOffer
        do {
            parsed = try ViewerOffer(parsing: offer)
        } catch {
            throw .badRequest(error.description)
        }
        guard state.withLock({ $0.viewers.count }) < maxViewers else {
            throw .serviceUnavailable("\(maxViewers) viewers are watching already")
        }
        let fingerprint: DTLSFingerprint
        do {
            fingerprint = try DTLSFingerprint(sdpValue: parsed.fingerprint)
        } catch {
            throw .badRequest("a=fingerprint \(parsed.fingerprint): \(error)")
        }
        // An offer that says `passive` wants to be the DTLS server; otherwise (actpass, active) we are.
        let role: DTLSRole = parsed.setup == "passive" ? .client : .server
        let transport: WebRTCTransport
        do {
            transport = try await WebRTCTransport.open(
                configuration: WebRTCTransport.Configuration(
                    role: .controlled, hostAddresses: hostAddresses, mtu: maxPacketSize),
                logger: logger)
        } catch {
            throw .serviceUnavailable("cannot open the viewer's transport: \(error)")
        }
        let candidates = parsed.candidates.compactMap { try? ICECandidate(parsing: $0) }.filter(\.isUsable)
        let ssrc = UInt32.random(in: 1...UInt32.max)
        let rtxSSRC = UInt32.random(in: 1...UInt32.max)
        let cname = "capturer-preview"
        let packetizer = RTPPacketizerConfiguration(
            maxPacketSize: maxPacketSize, payloadType: parsed.payloadType, ssrc: ssrc,
            videoOrientationExtensionID: parsed.extensionIDs[PublishOffer.videoOrientationExtensionURI],
            midExtensionID: parsed.extensionIDs[PublishOffer.midExtensionURI], mid: parsed.mid,
            transportSequenceNumberExtensionID: parsed.transportWideCCExtensionID)
        let retransmission = RetransmissionConfiguration(rtxPayloadType: parsed.rtxPayloadType, rtxSSRC: rtxSSRC)
        let media = ConnectionMedia(
            sender: VideoSenderConfiguration(
                remote: transport.localAddress, rtcpMux: true, packetizer: packetizer, cname: cname,
                retransmission: retransmission, metricsDeviceID: "preview"),
            minBitrateKbps: pipeline.configuration.minBitrateKbps,
            maxBitrateKbps: pipeline.configuration.maxBitrateKbps,
            startBitrateKbps: pipeline.statistics.currentTargetKbps)
        transport.start(
            remote: WebRTCTransport.Remote(
                credentials: ICECredentials(ufrag: parsed.iceUfrag, password: parsed.icePassword),
                candidates: candidates, fingerprint: fingerprint, dtlsRole: role,
                transportWideCCExtensionID: parsed.transportWideCCExtensionID),
            media: media)
        let answer = ViewerAnswer(
            offer: parsed, iceCredentials: transport.localCredentials,
            fingerprint: transport.certificate.fingerprint, setup: role == .server ? "passive" : "active",
            ssrc: ssrc, rtxSSRC: rtxSSRC, cname: cname,
            candidates: transport.localCandidates.map(\.sdpAttributeValue)
        ).render()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            let id = "v\(state.nextID)-\(UInt32.random(in: 0...UInt32.max))"
            state.viewers[id] = Viewer(transport: transport)
            state.started += 1
            return id
        }
        Task { [weak self] in await self?.connect(id: id, transport: transport) }
        return (answer, id)
    }

    /// Waits for a viewer's DTLS, then adds its transport to the fan-out and asks for a key frame.
    func connect(id: String, transport: WebRTCTransport) async {
        do {
            _ = try await transport.connected(timeout: .seconds(20))
        } catch {
            logger.warning("viewer did not connect", metadata: ["viewer": "\(id)", "error": "\(error)"])
            _ = await end(viewerID: id, failed: true)
            return
        }
        transport.attach(to: pipeline)
        guard state.withLock({ $0.viewers[id] != nil }) else { return }
        fanout.add(transport, id: id)
        pipeline.requestKeyFrame(reason: .pictureLossIndication)
        logger.info("viewer connected", metadata: ["viewer": "\(id)"])
    }

    /// Ends a viewer: its transport leaves the fan-out and closes (RTCP BYE, DTLS close_notify).
    public func end(viewerID: String) async -> Bool {
        await end(viewerID: viewerID, failed: false)
    }

    func end(viewerID: String, failed: Bool) async -> Bool {
        guard
            let viewer = state.withLock({ state -> Viewer? in
                if failed { state.failed += 1 }
                return state.viewers.removeValue(forKey: viewerID)
            })
        else { return false }
        _ = fanout.remove(id: viewerID)
        await viewer.transport.closed()
        return true
    }

    /// Ends every viewer and stops the pipeline.
    public func stop() async {
        let ids = state.withLock { Array($0.viewers.keys) }
        for id in ids { _ = await end(viewerID: id) }
        await pipeline.stop()
    }

    /// Viewers started and failed so far, and watching now.
    public var viewerCounts: (started: Int, failed: Int, watching: Int) {
        state.withLock { ($0.started, $0.failed, $0.viewers.count) }
    }

    /// Each connected viewer's transport-wide congestion control figures: browsers that offered the extension and
    /// `transport-cc` get numbered packets and send feedback (package: the lab's check, and the estimator to come).
    package var viewersTransportWideCC: [TransportWideCCStatistics] {
        fanout.all.values.map(\.statistics.transportWideCC)
    }

    /// The figures the page polls: the capture's, the viewers', the bit rate and the best RTT.
    public func figures() async -> PreviewFigures {
        var figures = figuresBase.withLock { $0 }
        let senders = fanout.all.values.compactMap(\.mediaStatistics)
        figures.viewers = senders.count
        figures.bitrateKbps = Double(pipeline.statistics.currentTargetKbps)
        figures.rttMs = senders.compactMap(\.roundTripTime).min()?.inMilliseconds
        return figures
    }
}
