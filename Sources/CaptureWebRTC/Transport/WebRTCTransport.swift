public import CaptureCall
public import CaptureDTLS
public import CaptureICE
public import CaptureNet
internal import CaptureRTP
internal import CaptureCore
public import CaptureVP8
import Foundation
public import Logging

/// One WebRTC 5-tuple for a video stream: a ``WebRTCConnection`` (ICE, DTLS-SRTP, the RTP session, RTCP and
/// consent, sans-IO) on a driver thread of its own that owns the UDP sockets (one per address family).
///
/// ## Function
/// The transport gathers host candidates at once (reflexive and relayed ones from the STUN and TURN servers given),
/// answers and makes checks once ``start(remote:media:)`` gives the peer's description, completes DTLS, and then sends
/// the frames given to ``consume(_:)`` (it is the pipeline's ``EncodedFrameSink``) as SRTP on ICE's selected pair,
/// answering NACKs with RTX and passing PLI, FIR and rate changes to the pipeline given to ``attach(to:)``.
///
/// ## Threading
/// Every method may be called from any thread. The driver thread waits in `ppoll` for a datagram, a command or the
/// connection's next timer (no tick: an idle connection wakes a few times a second), and is the only thread that
/// touches the connection; commands and frames reach it through a queue and a wake-up pipe, and what it shows comes
/// from a snapshot it publishes (at most 50 ms old while media flows; at once on a change of state). The async
/// waits (``connected(timeout:)``, ``gatheredCandidates(timeout:)``, ``closed()``) are continuations the driver
/// resumes.
public final class WebRTCTransport: EncodedFrameSink {
    /// How the transport gathers and connects.
    public struct Configuration: Sendable {
        /// Our ICE role: controlling when we offer (a WHIP publisher), controlled when we answer (the preview's WHEP
        /// endpoint).
        public var role: ICERole
        /// Whether loopback addresses become host candidates too (for tests on one machine).
        public var includeLoopback: Bool
        /// STUN servers to learn server-reflexive candidates from.
        public var stunServers: [SocketAddress]
        /// The local addresses to gather from; `nil` asks the system (every interface that is up).
        public var hostAddresses: [SocketAddress]?
        /// The largest DTLS datagram.
        public var mtu: Int
        /// TURN servers to gather relayed candidates from.
        public var turnServers: [TURNServer]
        /// Which candidates are offered and paired (`ICETransportPolicy/relay`: relayed ones only).
        public var transportPolicy: ICETransportPolicy

        /// Creates a configuration.
        public init(
            role: ICERole = .controlling, includeLoopback: Bool = false, stunServers: [SocketAddress] = [],
            hostAddresses: [SocketAddress]? = nil, mtu: Int = 1200, turnServers: [TURNServer] = [],
            transportPolicy: ICETransportPolicy = .all
        ) {
            self.role = role
            self.includeLoopback = includeLoopback
            self.stunServers = stunServers
            self.hostAddresses = hostAddresses
            self.mtu = mtu
            self.turnServers = turnServers
            self.transportPolicy = transportPolicy
        }
    }

    /// What the peer said about itself (from its SDP).
    public typealias Remote = WebRTCConnection.Remote
    /// The transport's state as the publisher sees it.
    public typealias State = WebRTCConnection.State

    /// Our ICE credentials (for the offer).
    public let localCredentials: ICECredentials
    /// Our certificate (its fingerprint goes in the offer).
    public let certificate: DTLSCertificate
    /// The first socket's local address.
    public let localAddress: SocketAddress
    let configuration: Configuration
    let shared: DriverShared
    let logger: Logger

    /// Opens a transport as ``init(configuration:logger:)`` does, on ``BlockingExecutor`` rather than the caller's
    /// thread: listing the interfaces, binding sockets and generating the key pair are blocking system work that must
    /// not hold a thread of the cooperative pool. Use this from async code.
    public static func open(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "capture.webrtc.transport")
    ) async throws(WebRTCTransportError) -> WebRTCTransport {
        try await BlockingExecutor.shared.run { () throws(WebRTCTransportError) -> WebRTCTransport in
            try WebRTCTransport(configuration: configuration, logger: logger)
        }
    }

    /// Gathers host candidates, opens the sockets, makes fresh ICE credentials and a fresh certificate, and starts
    /// the driver thread (which answers the peer's checks and gathers from the servers given). Blocking system work:
    /// from async code, use ``open(configuration:logger:)``.
    public init(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "capture.webrtc.transport")
    ) throws(WebRTCTransportError) {
        self.configuration = configuration
        self.logger = logger
        let addresses =
            configuration.hostAddresses
            ?? ICEHostAddresses.current(includeLoopback: configuration.includeLoopback)
        var sockets: [UDPSocket] = []
        var hostAddresses: [SocketAddress] = []
        for family in [SocketAddress.Family.ipv4, .ipv6] {
            let ofFamily = addresses.filter { $0.family == family }
            guard !ofFamily.isEmpty else { continue }
            let socket: UDPSocket
            do throws(SocketError) {
                socket = try UDPSocket(
                    bindingTo: family == .ipv4 ? SocketAddress.anyIPv4(port: 0) : SocketAddress.anyIPv6(port: 0))
            } catch {
                for opened in sockets { opened.close() }
                throw WebRTCTransportError(.socket, "cannot open a UDP socket: \(error)")
            }
            sockets.append(socket)
            hostAddresses += ofFamily.map { $0.withPort(socket.localAddress.port) }
        }
        guard let first = sockets.first else {
            throw WebRTCTransportError(.noLocalAddress, "no usable local address to gather a host candidate from")
        }
        let certificate: DTLSCertificate
        let wake: EventNotifier
        do {
            certificate = try DTLSCertificate()
            wake = try EventNotifier()
        } catch {
            for socket in sockets { socket.close() }
            throw WebRTCTransportError(.socket, "cannot set up the transport: \(error)")
        }
        self.certificate = certificate
        localAddress = first.localAddress
        let credentials = ICECredentials.random()
        localCredentials = credentials
        let connection = WebRTCConnection(
            configuration: WebRTCConnection.Configuration(
                role: configuration.role, hostAddresses: hostAddresses, stunServers: configuration.stunServers,
                turnServers: configuration.turnServers, transportPolicy: configuration.transportPolicy,
                mtu: configuration.mtu, credentials: credentials),
            certificate: certificate, clock: .now(), logger: logger)
        let shared = DriverShared(wake: wake, stats: connection.statsReport(at: .now))
        let candidates = connection.localCandidates
        shared.view.withLock { $0.localCandidates = candidates }
        self.shared = shared
        let handoff = ConnectionHandoff(connection: connection, sockets: sockets)
        Thread.detachNewThread {
            nameCurrentThread("webrtc-driver")
            ConnectionDriver.run(handoff, shared: shared, logger: logger)
        }
    }

    deinit {
        shared.submit(.close)
    }

    /// Takes the peer's description and starts checking pairs; DTLS starts once ICE has a pair (at once as the
    /// server, which waits for the peer's ClientHello). Once DTLS is connected, `media` (if any) is what
    /// ``consume(_:)`` sends.
    public func start(remote: Remote, media: ConnectionMedia? = nil) {
        let streams = 1 + (media?.simulcastLayers.count ?? 0)
        shared.inbox.withLock { $0.frameLimit = 30 * streams }
        shared.submit(.start(remote, media))
    }

    /// Adds a candidate the peer trickled.
    public func addRemoteCandidate(_ candidate: ICECandidate) {
        shared.submit(.addRemoteCandidate(candidate))
    }

    /// Adds STUN and TURN servers after the start (the ones a WHIP endpoint announced with its answer); ICE goes on
    /// meanwhile. Gathering resumes for the servers not already in use (see
    /// `ICEAgent/add(stunServers:turnServers:)`), and the stream reports what it gives from now on:
    /// `ICEEvent/localCandidate(_:)` for each new candidate, `ICEEvent/relayFailed(_:)`, and
    /// `ICEEvent/gatheringComplete` last, after which the stream ends (at once when nothing was added and gathering
    /// was already complete; also when the transport closes). A later call ends an earlier call's stream.
    public func addICEServers(stun: [SocketAddress], turn: [TURNServer]) -> AsyncStream<ICEEvent> {
        let (events, continuation) = AsyncStream.makeStream(of: ICEEvent.self)
        if !shared.submit(.addICEServers(stun: stun, turn: turn, events: continuation)) { continuation.finish() }
        return events
    }

    /// Lets the peer's RTCP steer `pipeline` (a `SendPipeline`, or a stand-in for one: see `EncoderControl`): PLI
    /// and new FIRs request key frames (of the layer whose SSRC they name), REMB, TMMBR and the loss-based estimate
    /// set its target bit rate, a full pacer queue turns its frame dropping on. Held weakly (the pipeline holds this
    /// transport as its sink).
    public func attach(to pipeline: any EncoderControl) {
        shared.pipeline.withLock { $0.pipeline = pipeline }
    }

    /// Asks the peer for a key frame of `mediaSSRC` (RTCP PLI): for a transport that receives.
    public func sendPictureLossIndication(mediaSSRC: UInt32) {
        shared.submit(.pictureLossIndication(mediaSSRC: mediaSSRC))
    }

    /// Asks the peer to resend packets of `mediaSSRC` (RTCP generic NACK): for a transport that receives.
    public func sendNACK(mediaSSRC: UInt32, sequenceNumbers: [UInt16]) {
        shared.submit(.nack(mediaSSRC: mediaSSRC, sequenceNumbers: sequenceNumbers))
    }

    // MARK: EncodedFrameSink

    /// Sends one encoded frame (from the pipeline's encoder thread): the driver packetizes and protects it on its
    /// thread. Frames before DTLS is connected, or while consent is lost, are counted as blocked.
    public func consume(_ frame: EncodedFrame) {
        shared.submit(frame: frame)
    }

    /// The pipeline stopped: nothing to do (the last report and BYE go out when the transport closes).
    public func finish() {}

    // MARK: What it shows

    /// Our local candidates so far (for the offer): the host ones at once (none under `ICETransportPolicy/relay`),
    /// then reflexive and relayed ones as they are gathered (see ``gatheredCandidates(timeout:)``).
    public var localCandidates: [ICECandidate] { shared.view.withLock { $0.localCandidates } }

    /// The state now.
    public var state: State { shared.view.withLock { $0.state } }

    /// The figures so far.
    public var statistics: WebRTCTransportStatistics { shared.view.withLock { $0.statistics } }

    /// The connection's statistics in W3C webrtc-stats' names and shapes, as `getStats()` gives them: made on the
    /// driver thread at its current time (the call waits for the driver's next turn, never for the network), or the
    /// last ones once the transport has finished. See ``WebRTCConnection/statsReport(at:)``.
    public func statsReport() async -> WebRTCStatsReport {
        await withCheckedContinuation { waiter in
            guard !shared.submit(.statsReport(waiter)) else { return }
            // Refused only once the driver has ended, after it stored its last report.
            waiter.resume(returning: shared.view.withLock { $0.lastStats })
        }
    }

    /// The sent stream's figures, once connected with a stream.
    public var mediaStatistics: VideoSenderStatistics? { shared.view.withLock { $0.mediaStatistics } }
    /// Each sent stream's figures, simulcast layer 0 first (one entry without simulcast; empty before connected).
    public var layerStatistics: [VideoSenderStatistics] { shared.view.withLock { $0.layerStatistics } }

    /// The selected ICE pair, described (`nil` before there is one).
    public var selectedPairDescription: String? { shared.view.withLock { $0.selectedPair.map { "\($0)" } } }

    /// ICE's state now (what a `connected(timeout:)` that times out names).
    public var iceState: ICEState { shared.view.withLock { $0.iceState } }

    /// The ICE agent's figures.
    public var iceStatistics: ICEStatistics { shared.view.withLock { $0.iceStatistics } }

    /// The TURN allocations' figures (state, relayed address, requests, errors), one per TURN server.
    public var turnAllocations: [TURNAllocationStatistics] { shared.view.withLock { $0.turnAllocations } }

    // MARK: Waiting

    /// Waits, at most `timeout`, for what `ready` reads in the published view; the driver resumes the waiter it
    /// finds in `waiters` when the view changes, and a timer task resumes it with `timedOut` if that comes first.
    /// Whichever comes first takes the waiter out of `waiters` under the view's lock, so it is resumed once.
    private func wait<Value: Sendable>(
        timeout: Duration,
        in waiters: any WritableKeyPath<DriverView, [UInt64: CheckedContinuation<Value, Never>]> & Sendable,
        ready: @escaping @Sendable (DriverView) -> Value?, timedOut: @escaping @Sendable (DriverView) -> Value
    ) async -> Value {
        let shared = shared
        let id = shared.view.withLock { view in
            defer { view.nextWaiterID += 1 }
            return view.nextWaiterID
        }
        let value = await withTaskGroup(of: Void.self) { group -> Value in
            group.addTask {
                try? await Task.sleep(for: timeout)
                let (waiter, value) = shared.view.withLock { view in
                    let waiter = view[keyPath: waiters].removeValue(forKey: id)
                    if waiter == nil { view.expired.insert(id) }
                    return (waiter, timedOut(view))
                }
                waiter?.resume(returning: value)
            }
            let value = await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let now = shared.view.withLock { view -> Value? in
                    if view.expired.remove(id) != nil { return timedOut(view) }
                    if let value = ready(view) { return value }
                    view[keyPath: waiters][id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
            group.cancelAll()
            return value
        }
        shared.view.withLock { _ = $0.expired.remove(id) }
        return value
    }

    /// Waits until every STUN and TURN server answered or gave up, at most `timeout`, and returns the local
    /// candidates then known (what an offer without trickle carries).
    public func gatheredCandidates(timeout: Duration) async -> [ICECandidate] {
        await wait(
            timeout: timeout, in: \.gatherWaiters,
            ready: { view in view.isGatheringComplete || view.finished ? () : nil }, timedOut: { _ in () })
        return localCandidates
    }

    /// Waits until DTLS is connected (returning the SRTP keys) or the transport failed, at most `timeout`.
    public func connected(timeout: Duration) async throws(WebRTCTransportError) -> DTLSSRTPKeys {
        let result = await wait(
            timeout: timeout, in: \.connectWaiters, ready: { $0.connectResult },
            timedOut: { view in
                .failure(WebRTCTransportError(.timeout, "not connected within \(timeout) (ICE \(view.iceState))"))
            })
        return try result.get()
    }

    /// Waits until the transport has ended, however long that takes: returns the failure that ended it (ICE failed,
    /// consent lost, the peer's DTLS close_notify: ``WebRTCTransportError``), or `nil` once it was closed (by
    /// ``close()``) or its driver has ended. What an owner that keeps a transport for a long time (a preview's viewer)
    /// awaits, to let go of one whose peer went away. A cancelled caller gets `nil` at once unless it has ended.
    public func ended() async -> WebRTCTransportError? {
        await wait(
            timeout: .seconds(100 * 365 * 86_400), in: \.endWaiters, ready: { $0.endResult },
            timedOut: { $0.endResult ?? nil })
    }

    /// Closes: a last sender report with BYE (when sending), DTLS close_notify and the TURN allocations released,
    /// then the driver closes the sockets and ends. Returns at once (``closed()`` waits for the end). Idempotent.
    public func close() {
        shared.submit(.close)
    }

    /// Closes (as ``close()``) and waits until the driver has ended and the sockets are closed.
    public func closed() async {
        close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = shared.view.withLock { view in
                if view.finished { return true }
                view.finishWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
