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
///
/// ## Simulcast
/// By default the pipeline encodes one stream and every viewer gets it: one bit rate (the last viewer's estimate) and
/// one key-frame schedule for all. With `simulcast`, the pipeline encodes up to three layers (1280x720 gives 320x180,
/// 640x360 and 1280x720) and each viewer gets the layer its own link carries, chosen by a ``ViewerLayerSelector``
/// and switched at a key frame of the new layer (the module's article says more, under "Simulcast: a layer per
/// viewer"): one encoding per layer, shared by all the viewers of that layer. Each viewer's transport steers a
/// per-viewer stand-in rather than the pipeline: its estimate picks its layer, and the pipeline's target is the
/// largest estimate (the most demanding viewer's); its PLI asks a key frame of its layer only; its congestion frame
/// dropping pauses it alone and moves it a layer down. A viewer starts at 300 kbit/s (libwebrtc's start rate: the
/// first picture comes at the lowest layer, and the start probes raise the estimate within a second or two), and its
/// connection probes a stale estimate (`ConnectionMedia.probesStaleEstimate`): a viewer held on a low layer sends
/// less than its link carries, and without probing its estimate could not rise past 1.5 × what it receives to reach
/// the next layer.
public final class PreviewSession: WHEPSessionHandler {
    struct Viewer {
        let transport: WebRTCTransport
        /// What the transport steers with simulcast (`nil`: the pipeline itself).
        let control: ViewerEncoderControl<WebRTCTransport>?
        /// The order viewers joined in (for the figures).
        let ordinal: Int
        /// The estimate the viewer's connection starts at, in kbit/s.
        let startKbps: Int
    }

    struct State {
        var viewers: [String: Viewer] = [:]
        /// Offers being answered: counted against the limit with the viewers, so that offers at once cannot pass it.
        var answering = 0
        var started = 0
        var failed = 0
        var nextID = 1
        /// Set by ``PreviewSession/stop()``: an offer answered after it gets no viewer.
        var stopped = false
    }

    /// The pipeline to give the capturer as its delegate.
    public let pipeline: SendPipeline
    let fanout: ViewerFanout<WebRTCTransport>
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
    ///   - simulcast: Encode simulcast layers and serve each viewer the one its link carries (see the type's
    ///     documentation); `nil` (the default): one stream for all.
    ///   - layerSelection: With `simulcast`, the hysteresis of each viewer's ``ViewerLayerSelector``.
    ///   - logger: Where the session, its pipeline and the viewers' transports log.
    /// - Throws: `CaptureError` `invalidArgument` for a bad encoder or simulcast configuration.
    public init(
        encoder: VP8EncoderConfiguration, hostAddresses: [SocketAddress]? = nil, maxPacketSize: Int = 1_200,
        maxViewers: Int = 16, simulcast: SimulcastConfiguration? = nil,
        layerSelection: ViewerLayerSelector.Configuration = ViewerLayerSelector.Configuration(),
        logger: Logger = Logger(label: "capture.webrtc.preview")
    ) throws(CaptureError) {
        let fanout = ViewerFanout<WebRTCTransport>(selection: simulcast == nil ? nil : layerSelection)
        self.fanout = fanout
        pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(
                encoder: encoder, minBitrateKbps: 100, maxBitrateKbps: 2_500, simulcast: simulcast),
            sinks: [fanout], logger: logger)
        fanout.attach(pipeline)
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

    /// Answers a viewer's offer; its transport connects in the background. Refused with 503 at the viewer limit
    /// (offers being answered count against it) and after ``stop()``.
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
        let refusal = state.withLock { state -> String? in
            if state.stopped { return "the preview has stopped" }
            guard state.viewers.count + state.answering < maxViewers else {
                return "\(maxViewers) viewers are watching already"
            }
            state.answering += 1
            return nil
        }
        if let refusal { throw .serviceUnavailable(refusal) }
        defer { state.withLock { $0.answering -= 1 } }
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
        let sender = VideoSenderConfiguration(
            remote: transport.localAddress, rtcpMux: true, packetizer: packetizer, cname: cname,
            retransmission: retransmission, metricsDeviceID: "preview")
        var media: ConnectionMedia
        if selectsLayers {
            // The estimate picks the viewer's layer: it may range over the whole layout's rates.
            let range = pipeline.bitrateRange
            media = ConnectionMedia(
                sender: sender, minBitrateKbps: range.lowerBound, maxBitrateKbps: range.upperBound,
                startBitrateKbps: min(max(Self.viewerStartKbps, range.lowerBound), range.upperBound))
            media.probesStaleEstimate = true
        } else {
            media = ConnectionMedia(
                sender: sender, minBitrateKbps: pipeline.configuration.minBitrateKbps,
                maxBitrateKbps: pipeline.configuration.maxBitrateKbps,
                startBitrateKbps: pipeline.statistics.currentTargetKbps)
        }
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
        let startKbps = media.startBitrateKbps
        let created = state.withLock { state -> (id: String, viewer: Viewer)? in
            guard !state.stopped else { return nil }
            defer { state.nextID += 1 }
            let id = "v\(state.nextID)-\(UInt32.random(in: 0...UInt32.max))"
            let control = selectsLayers ? ViewerEncoderControl(fanout: fanout, viewerID: id) : nil
            let viewer = Viewer(transport: transport, control: control, ordinal: state.nextID, startKbps: startKbps)
            state.viewers[id] = viewer
            state.started += 1
            return (id: id, viewer: viewer)
        }
        guard let created else {
            // stop() ran while this offer was answered: nobody would close this transport.
            await transport.closed()
            throw .serviceUnavailable("the preview has stopped")
        }
        Task { [weak self] in await self?.connect(id: created.id, viewer: created.viewer) }
        return (answer, created.id)
    }

    /// Whether each viewer gets a simulcast layer of its own.
    var selectsLayers: Bool { fanout.selection != nil }

    /// What a simulcast viewer's connection starts at, in kbit/s: libwebrtc's default start rate.
    static let viewerStartKbps = 300

    /// Waits for a viewer's DTLS, then adds its transport to the fan-out and asks for a key frame (with simulcast, of
    /// the layer its selector picks for its start rate), and lets its feedback steer the pipeline or, with simulcast,
    /// its stand-in.
    func connect(id: String, viewer: Viewer) async {
        let transport = viewer.transport
        do {
            _ = try await transport.connected(timeout: .seconds(20))
        } catch {
            logger.warning("viewer did not connect", metadata: ["viewer": "\(id)", "error": "\(error)"])
            _ = await end(viewerID: id, failed: true)
            return
        }
        guard state.withLock({ $0.viewers[id] != nil }) else { return }
        fanout.add(transport, id: id, estimateKbps: viewer.startKbps)
        // An end (a DELETE, stop()) between the check and the add found nothing in the fan-out to remove: take it out
        // here, or the closed transport would stay there, counted and steering the shared target, for good.
        guard state.withLock({ $0.viewers[id] != nil }) else {
            _ = fanout.remove(id: id)
            return
        }
        if let control = viewer.control {
            transport.attach(to: control)
        } else {
            transport.attach(to: pipeline)
            pipeline.requestKeyFrame(reason: .pictureLossIndication)
        }
        logger.info("viewer connected", metadata: ["viewer": "\(id)"])
        // A viewer that goes away without a DELETE is ended here, else it would hold its place among the viewers for
        // good: a page that closed its connection (its DTLS close_notify) as a viewer that left, one whose network
        // went (consent lost after 30 s) as failed.
        Task { [weak self] in
            guard let error = await transport.ended() else { return }
            let left = error.code == .closed
            self?.logger.log(
                level: left ? .info : .warning, left ? "viewer left" : "viewer lost",
                metadata: ["viewer": "\(id)", "reason": "\(error)"])
            _ = await self?.end(viewerID: id, failed: !left)
        }
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

    /// Ends every viewer and stops the pipeline; offers from then on are refused (503).
    public func stop() async {
        let ids = state.withLock { state in
            state.stopped = true
            return Array(state.viewers.keys)
        }
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
        if selectsLayers {
            let layers = pipeline.statistics.layers
            let ordinals = state.withLock { $0.viewers.mapValues(\.ordinal) }
            figures.viewerLayers = fanout.layerStates.sorted {
                ordinals[$0.key, default: 0] < ordinals[$1.key, default: 0]
            }
            .map { _, viewer in
                let size = viewer.current.flatMap { layers.indices.contains($0) ? layers[$0].dimensions : nil }
                return PreviewViewerLayer(
                    layer: viewer.current, width: size?.width ?? 0, height: size?.height ?? 0,
                    estimateKbps: viewer.estimateKbps)
            }
        }
        return figures
    }
}
