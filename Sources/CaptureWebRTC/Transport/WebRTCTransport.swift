public import CaptureCall
public import CaptureDTLS
public import CaptureICE
public import CaptureNet
internal import CaptureRTP
internal import CaptureCore
import Foundation
public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One WebRTC 5-tuple for a send-only video stream: ICE finds the path, DTLS agrees the SRTP keys and proves the
/// peer's certificate against its fingerprint, and RTP and RTCP then share the same socket (BUNDLE, rtcp-mux), every
/// datagram told apart by its first byte (RFC 7983).
///
/// The transport opens one UDP socket per address family it has host addresses for, each read by its own thread; the
/// ICE agent and the DTLS endpoint are sans-IO state machines driven from those threads under one lock, with their
/// timers run every 10 ms. It is a ``PacketTransport``: the ``VideoSender`` built once DTLS is connected sends its
/// SRTP through ``send(_:)``, which goes out only on ICE's selected pair and only while consent holds (RFC 7675), and
/// gets the peer's SRTCP through ``deliverRTCP(to:)`` (or a handler given to ``setRTCPHandler(_:)``).
///
/// With TURN servers (``Configuration/turnServers``) the agent allocates a relayed candidate on each, over the host
/// socket of its family. What comes from a TURN server is unwrapped (Data indications, ChannelData: RFC 7983's first
/// bytes 64–79) and routed as if the peer had sent it to that socket; when the selected pair's local candidate is the
/// relay, every datagram to the peer (DTLS, SRTP, SRTCP, consent) goes through the allocation, media as ChannelData
/// framed into one reused buffer once the channel is bound.
///
/// STUN and TURN servers learned after the start (a WHIP endpoint's `Link` headers) are given to
/// ``addICEServers(stun:turn:)``: gathering resumes for them, and the candidates they give come as a stream of events
/// (to trickle) that ends with ``ICEEvent/gatheringComplete``.
public final class WebRTCTransport: PacketTransport {
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
        /// Which candidates are offered and paired (``ICETransportPolicy/relay``: relayed ones only).
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

    /// What the peer said about itself (from its SDP answer).
    public struct Remote: Sendable {
        /// Its ICE credentials.
        public var credentials: ICECredentials
        /// Its candidates (more may be added with ``addRemoteCandidate(_:)``).
        public var candidates: [ICECandidate]
        /// Its certificate's fingerprint.
        public var fingerprint: DTLSFingerprint
        /// Our DTLS role, from its `a=setup`.
        public var dtlsRole: DTLSRole
        /// Whether it said `a=end-of-candidates` (then ICE fails as soon as every pair has).
        public var endOfCandidates: Bool

        /// Creates a description of the peer.
        public init(
            credentials: ICECredentials, candidates: [ICECandidate], fingerprint: DTLSFingerprint, dtlsRole: DTLSRole,
            endOfCandidates: Bool = false
        ) {
            self.endOfCandidates = endOfCandidates
            self.credentials = credentials
            self.candidates = candidates
            self.fingerprint = fingerprint
            self.dtlsRole = dtlsRole
        }
    }

    /// The transport's state as the publisher sees it.
    public enum State: Sendable, Hashable {
        /// Gathering done, waiting for the peer's description.
        case new
        /// ICE checks and the DTLS handshake are under way.
        case connecting
        /// DTLS is connected: the SRTP keys are known and media may flow.
        case connected(DTLSSRTPKeys)
        /// ICE or DTLS failed, or consent was lost.
        case failed(WebRTCTransportError)
        /// Closed.
        case closed
    }

    struct Core {
        var ice: ICEAgent
        var dtls: DTLSEndpoint?
        var dtlsRole: DTLSRole?
        var state: State = .new
        var startNs: UInt64 = 0
        var statistics = WebRTCTransportStatistics()
        /// Where gathering events go after ``WebRTCTransport/addICEServers(stun:turn:)``, until gathering completes.
        var gathering: AsyncStream<ICEEvent>.Continuation?
    }

    /// Where media goes: the selected pair, while consent holds.
    struct Route: Equatable {
        var socket: UDPSocket
        var remote: SocketAddress
        /// The TURN server and bound channel when the selected pair's local candidate is relayed (channel `nil`
        /// until bound: Send indications, framed under the core lock, until then).
        var relayServer: SocketAddress?
        var channel: UInt16?
        /// Our relayed address (the selected pair's local candidate) when the route goes through a relay.
        var relayedAddress: SocketAddress?

        static func == (left: Route, right: Route) -> Bool {
            left.socket === right.socket && left.remote == right.remote && left.relayServer == right.relayServer
                && left.channel == right.channel && left.relayedAddress == right.relayedAddress
        }
    }

    /// Our ICE credentials (for the offer).
    public let localCredentials: ICECredentials
    /// Our certificate (its fingerprint goes in the offer).
    public let certificate: DTLSCertificate
    /// Our local candidates so far (for the offer): the host ones at once (none under
    /// ``ICETransportPolicy/relay``), then reflexive and relayed ones as they are gathered (see
    /// ``gatheredCandidates(timeout:)``).
    public var localCandidates: [ICECandidate] { core.withLock { $0.ice.localCandidates } }
    /// The first socket's local address.
    public let localAddress: SocketAddress

    let sockets: [UDPSocket]
    /// The TURN servers' addresses: datagrams from them are unwrapped before routing (more come with
    /// ``addICEServers(stun:turn:)``).
    let turnServerAddresses: Locked<[SocketAddress]>
    let framer = ChannelDataFramer()
    let core: Locked<Core>
    let route = Locked<Route?>(nil)
    let rtcpHandler = Locked<(@Sendable (UnsafeMutableRawBufferPointer, Int) -> Void)?>(nil)
    let running = Locked(true)
    let threadsRunning = Locked(0)
    let configuration: Configuration
    let logger: Logger

    /// Gathers host candidates, opens the sockets, makes fresh ICE credentials and a fresh certificate, and starts
    /// answering the peer's checks.
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
            do throws(UDPSocketError) {
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
        do {
            certificate = try DTLSCertificate()
        } catch {
            for socket in sockets { socket.close() }
            throw WebRTCTransportError(.dtlsFailed, "cannot make a certificate: \(error)")
        }
        self.certificate = certificate
        self.sockets = sockets
        self.localAddress = first.localAddress
        let credentials = ICECredentials.random()
        self.localCredentials = credentials
        let ice = ICEAgent(
            configuration: ICEAgent.Configuration(
                role: configuration.role, localCredentials: credentials, hostAddresses: hostAddresses,
                stunServers: configuration.stunServers, turnServers: configuration.turnServers,
                transportPolicy: configuration.transportPolicy))
        turnServerAddresses = Locked(configuration.turnServers.map(\.address))
        core = Locked(Core(ice: ice))
        for socket in sockets {
            let weak = WeakTransport(transport: self)
            threadsRunning.withLock { $0 += 1 }
            Thread.detachNewThread { Self.receiveLoop(weak, socket: socket) }
        }
    }

    deinit {
        running.withLock { $0 = false }
    }

    /// Takes the peer's description and starts checking pairs; DTLS starts once ICE has a pair (at once as the
    /// server, which waits for the peer's ClientHello).
    public func start(remote: Remote) {
        let nowNs = MonotonicClock.nowNs()
        core.withLock { core in
            core.startNs = nowNs
            core.state = .connecting
            core.ice.setRemote(credentials: remote.credentials)
            for candidate in remote.candidates { _ = core.ice.addRemoteCandidate(candidate) }
            if remote.endOfCandidates { core.ice.endOfCandidates() }
            core.dtlsRole = remote.dtlsRole
            do {
                core.dtls = try DTLSEndpoint(
                    role: remote.dtlsRole, certificate: certificate, remoteFingerprint: remote.fingerprint,
                    mtu: configuration.mtu)
            } catch {
                fail(&core, WebRTCTransportError(.dtlsFailed, "DTLS setup failed: \(error)"))
            }
            core.ice.handleTimeout(nowNs: nowNs)
            flush(&core, nowNs: nowNs)
        }
    }

    /// Adds a candidate the peer trickled.
    public func addRemoteCandidate(_ candidate: ICECandidate) {
        let nowNs = MonotonicClock.nowNs()
        core.withLock { core in
            _ = core.ice.addRemoteCandidate(candidate)
            flush(&core, nowNs: nowNs)
        }
    }

    /// Adds STUN and TURN servers after the start (the ones a WHIP endpoint announced with its answer); ICE goes on
    /// meanwhile. Gathering resumes for the servers not already in use (see
    /// ``ICEAgent/add(stunServers:turnServers:)``), and `events` reports what it gives from now on:
    /// ``ICEEvent/localCandidate(_:)`` for each new candidate (a relay one is paired with the peer's candidates
    /// already known), ``ICEEvent/relayFailed(_:)``, and
    /// ``ICEEvent/gatheringComplete`` last, after which the stream ends (at once when `added` is 0 and gathering was
    /// already complete; also when the transport closes). A later call ends an earlier call's stream.
    public func addICEServers(
        stun: [SocketAddress], turn: [TURNServer]
    ) -> (added: Int, events: AsyncStream<ICEEvent>) {
        let (events, continuation) = AsyncStream.makeStream(of: ICEEvent.self)
        guard running.withLock({ $0 }) else {
            continuation.finish()
            return (0, events)
        }
        let nowNs = MonotonicClock.nowNs()
        let added = core.withLock { core in
            core.gathering?.finish()
            core.gathering = nil
            let added = core.ice.add(stunServers: stun, turnServers: turn)
            // Before the first Allocate goes out, so that the answer is routed to the agent.
            let relays = turn.map(\.address).filter { core.ice.isTURNServer($0) }
            turnServerAddresses.withLock { addresses in
                for address in relays where !addresses.contains(address) { addresses.append(address) }
            }
            if added == 0, core.ice.isGatheringComplete {
                continuation.yield(.gatheringComplete)
                continuation.finish()
                return added
            }
            core.gathering = continuation
            core.ice.handleTimeout(nowNs: nowNs)
            flush(&core, nowNs: nowNs)
            return added
        }
        return (added, events)
    }

    /// Where the peer's RTCP goes (the ``VideoSender``'s ``VideoSender/receiveRTCP(_:length:)``).
    public func setRTCPHandler(_ handler: @escaping @Sendable (UnsafeMutableRawBufferPointer, Int) -> Void) {
        rtcpHandler.withLock { $0 = handler }
    }

    /// Hands the peer's RTCP to `sender`, held weakly: the sender holds this transport, so a strong reference here
    /// would keep both alive (a cycle that leaked every sender and transport until ``close()`` broke it).
    public func deliverRTCP(to sender: VideoSender) {
        setRTCPHandler { [weak sender] buffer, length in sender?.receiveRTCP(buffer, length: length) }
    }

    /// The state now.
    public var state: State { core.withLock { $0.state } }

    /// The figures so far.
    public var statistics: WebRTCTransportStatistics { core.withLock { $0.statistics } }

    /// The selected ICE pair, described (`nil` before there is one).
    public var selectedPairDescription: String? { core.withLock { $0.ice.selectedPair.map { "\($0)" } } }

    /// The ICE agent's figures.
    public var iceStatistics: ICEStatistics { core.withLock { $0.ice.statistics } }

    /// The TURN allocations' figures (state, relayed address, requests, errors), one per TURN server.
    public var turnAllocations: [TURNAllocationStatistics] { core.withLock { $0.ice.turnAllocations } }

    /// Waits until every STUN and TURN server answered or gave up, at most `timeout`, and returns the local
    /// candidates then known (what an offer without trickle carries).
    public func gatheredCandidates(timeout: Duration) async -> [ICECandidate] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !core.withLock({ $0.ice.isGatheringComplete }) {
            do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
        }
        return localCandidates
    }

    /// Waits until DTLS is connected (returning the SRTP keys) or the transport failed, at most `timeout`.
    public func connected(timeout: Duration) async throws(WebRTCTransportError) -> DTLSSRTPKeys {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch state {
            case .connected(let keys): return keys
            case .failed(let error): throw error
            case .closed: throw WebRTCTransportError(.closed, "the transport was closed")
            case .new, .connecting: break
            }
            do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
        }
        let ice = core.withLock { $0.ice.state }
        throw WebRTCTransportError(.timeout, "not connected within \(timeout) (ICE \(ice))")
    }

    /// Sends one media datagram on the selected pair; `false` (and counted) when there is none or consent is lost.
    public func send(_ datagram: UnsafeRawBufferPointer) -> Bool {
        guard let route = route.withLock({ $0 }) else {
            core.withLock { $0.statistics.mediaBlocked += 1 }
            return false
        }
        let sent: Bool
        if let server = route.relayServer, let channel = route.channel {
            sent = framer.send(datagram, channel: channel, to: server, socket: route.socket)
        } else if route.relayServer != nil {
            // Until the channel is bound (one round trip to the server): a Send indication, built under the lock.
            let bytes = Array(datagram)
            sent = core.withLock { core in sendToPeer(bytes, &core) }
        } else {
            sent = route.socket.send(datagram, to: route.remote)
        }
        // Counting every packet under the core lock would contend with the receive threads; failures are rare.
        if !sent { core.withLock { $0.statistics.mediaSendErrors += 1 } }
        return sent
    }

    /// Sends DTLS close_notify, stops the threads and closes the sockets. Idempotent.
    public func close() {
        let wasRunning = running.withLock { running in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        core.withLock { core in
            let nowNs = MonotonicClock.nowNs()
            core.dtls?.close()
            flush(&core, nowNs: nowNs)
            // Releases the TURN allocations (Refresh with LIFETIME 0); closed first, so that the agent's end is not
            // taken for lost consent.
            core.state = .closed
            core.ice.close(nowNs: nowNs)
            flush(&core, nowNs: nowNs)
            core.gathering?.finish()
            core.gathering = nil
        }
        route.withLock { $0 = nil }
        // The handler is usually the sender's, and the sender holds this transport: letting it go breaks the cycle.
        rtcpHandler.withLock { $0 = nil }
        while threadsRunning.withLock({ $0 }) > 0 { usleep(2_000) }
        for socket in sockets { socket.close() }
    }

    // MARK: The socket threads

    static func receiveLoop(_ weak: WeakTransport, socket: UDPSocket) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        let counter = weak.transport?.threadsRunning
        defer { counter?.withLock { $0 -= 1 } }
        while let transport = weak.transport, transport.running.withLock({ $0 }) {
            let received: (count: Int, source: SocketAddress)?
            do throws(UDPSocketError) {
                received = try socket.receive(into: buffer, timeout: .milliseconds(10))
            } catch {
                break
            }
            let nowNs = MonotonicClock.nowNs()
            if let received {
                transport.handle(
                    UnsafeMutableRawBufferPointer(rebasing: buffer[0..<received.count]), from: received.source,
                    socket: socket, nowNs: nowNs)
            }
            transport.core.withLock { core in
                core.ice.handleTimeout(nowNs: nowNs)
                core.dtls?.handleTimeout(nowNs: Int64(clamping: nowNs))
                transport.flush(&core, nowNs: nowNs)
            }
        }
    }

    /// Routes one received datagram by its first byte; one from a TURN server is unwrapped first, and what it
    /// carries routed as received from the peer through `relay` (our relayed address).
    func handle(
        _ datagram: UnsafeMutableRawBufferPointer, from source: SocketAddress, socket: UDPSocket, nowNs: UInt64,
        relay: SocketAddress? = nil
    ) {
        if relay == nil, turnServerAddresses.withLock({ $0.contains(source) }) {
            handleFromTURNServer(datagram, from: source, socket: socket, nowNs: nowNs)
            return
        }
        switch DatagramKind(classifying: UnsafeRawBufferPointer(datagram)) {
        case .stun:
            // A copy: the lock's body must leave the core in its own region, which a borrowed buffer would join.
            // STUN is a few messages a second, not the media path.
            let bytes = Array(datagram)
            core.withLock { core in
                core.statistics.stunReceived += 1
                _ = core.ice.handle(datagram: bytes, from: source, relay: relay, nowNs: nowNs)
                flush(&core, nowNs: nowNs)
            }
        case .dtls:
            core.withLock { core in
                core.statistics.dtlsReceived += 1
                // A datagram that ends the handshake in failure also sets the endpoint's state, which flush reports.
                try? core.dtls?.handle(datagram: Array(datagram), nowNs: Int64(clamping: nowNs))
                flush(&core, nowNs: nowNs)
            }
        case .rtcp:
            core.withLock { $0.statistics.rtcpReceived += 1 }
            rtcpHandler.withLock { $0 }?(datagram, datagram.count)
        case .rtp:
            core.withLock { $0.statistics.rtpReceived += 1 }
        case .unknown:
            core.withLock { $0.statistics.unknownReceived += 1 }
        }
    }

    /// A datagram from a TURN server: ChannelData on the media route's channel is unwrapped in place (the relayed
    /// media path); anything else is copied and given to the agent, which returns the peer's datagram it carried.
    private func handleFromTURNServer(
        _ datagram: UnsafeMutableRawBufferPointer, from source: SocketAddress, socket: UDPSocket, nowNs: UInt64
    ) {
        if let route = route.withLock({ $0 }), route.relayServer == source, let channel = route.channel,
            TURNAllocation.channelNumber(UnsafeRawBufferPointer(datagram)) == channel, let relay = route.relayedAddress
        {
            guard let (_, payload) = TURNAllocation.parseChannelData(UnsafeRawBufferPointer(datagram)) else {
                core.withLock { $0.statistics.unknownReceived += 1 }
                return
            }
            handle(
                UnsafeMutableRawBufferPointer(rebasing: datagram[payload]), from: route.remote, socket: socket,
                nowNs: nowNs, relay: relay)
            return
        }
        var bytes = Array(datagram)
        let input = core.withLock { core in
            core.statistics.turnReceived += 1
            let input = core.ice.handleFromTURNServer(bytes, from: source, nowNs: nowNs)
            flush(&core, nowNs: nowNs)
            return input
        }
        guard case .data(let peer, let relay, let payload) = input else { return }
        bytes.withUnsafeMutableBytes { raw in
            handle(
                UnsafeMutableRawBufferPointer(rebasing: raw[payload]), from: peer, socket: socket, nowNs: nowNs,
                relay: relay)
        }
    }

    /// Sends `bytes` to the selected pair's peer, through its relay if its local candidate is relayed. Under the
    /// core lock.
    @discardableResult
    private func sendToPeer(_ bytes: [UInt8], _ core: inout Core) -> Bool {
        guard let pair = core.ice.selectedPair else { return false }
        let (datagram, destination) = core.ice.wrapForRelay(bytes, pair: pair) ?? (bytes, pair.remote.address)
        return datagram.withUnsafeBytes { raw in socket(for: destination)?.send(raw, to: destination) ?? false }
    }

    /// Sends what ICE and DTLS queued, follows their state, and updates the media route. Under the core lock.
    func flush(_ core: inout Core, nowNs: UInt64) {
        while let transmit = core.ice.pollTransmit() {
            _ = transmit.bytes.withUnsafeBytes { bytes in
                socket(for: transmit.destination)?.send(bytes, to: transmit.destination)
            }
        }
        while let event = core.ice.pollEvent() {
            switch event {
            case .relayFailed(let error):
                logger.warning("TURN allocation failed; no relayed candidate", metadata: ["error": "\(error)"])
                core.gathering?.yield(event)
            case .localCandidate(let candidate):
                logger.info("ICE candidate gathered", metadata: ["candidate": "\(candidate)"])
                core.gathering?.yield(event)
            case .gatheringComplete:
                core.gathering?.yield(event)
                core.gathering?.finish()
                core.gathering = nil
            case .stateChanged, .selectedPair, .roleChanged:
                break
            }
        }
        let pair = core.ice.selectedPair
        if let pair, core.statistics.iceConnectedAfterNs == nil {
            core.statistics.iceConnectedAfterNs = nowNs &- core.startNs
            logger.info("ICE connected", metadata: ["pair": "\(pair)", "types": "\(pair.candidateTypes)"])
            if core.dtlsRole == .client { core.dtls?.start(nowNs: Int64(clamping: nowNs)) }
        }
        if pair != nil {
            while let datagram = core.dtls?.pollTransmit() { sendToPeer(datagram, &core) }
        }
        if case .failed = core.ice.state, case .connecting = core.state {
            fail(&core, WebRTCTransportError(.iceFailed, "no candidate pair worked"))
        }
        if let dtls = core.dtls {
            switch dtls.state {
            case .connected:
                if case .connecting = core.state, let keys = dtls.srtpKeys {
                    core.state = .connected(keys)
                    core.statistics.dtlsConnectedAfterNs = nowNs &- core.startNs
                    logger.info("DTLS connected", metadata: ["profile": "\(keys.profile)"])
                }
            case .failed(let error):
                if case .connecting = core.state {
                    fail(&core, WebRTCTransportError(.dtlsFailed, "\(error)"))
                }
            default: break
            }
        }
        if !core.ice.canSendMedia, case .connected = core.state, core.ice.state != .checking {
            fail(&core, WebRTCTransportError(.iceFailed, "consent lost (RFC 7675): media stopped"))
        }
        let mayCarryMedia = core.ice.canSendMedia && { if case .connected = core.state { true } else { false } }()
        let relay = core.ice.selectedRelay
        let newRoute: Route? =
            if mayCarryMedia, let pair, let socket = socket(for: relay?.server ?? pair.remote.address) {
                Route(
                    socket: socket, remote: pair.remote.address, relayServer: relay?.server, channel: relay?.channel,
                    relayedAddress: relay == nil ? nil : pair.local.address)
            } else { nil }
        route.withLock { route in
            if route != newRoute { route = newRoute }
        }
    }

    private func fail(_ core: inout Core, _ error: WebRTCTransportError) {
        logger.warning("WebRTC transport failed", metadata: ["error": "\(error)"])
        core.state = .failed(error)
    }

    func socket(for destination: SocketAddress) -> UDPSocket? {
        sockets.first { $0.localAddress.family == destination.family }
    }
}

/// A weak reference to a transport, for its threads.
struct WeakTransport: Sendable {
    weak var transport: WebRTCTransport?
}
