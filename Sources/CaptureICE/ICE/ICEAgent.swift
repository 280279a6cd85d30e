package import CaptureNet

/// A sans-IO ICE agent (RFC 8445, full implementation, one component, UDP only) with consent freshness (RFC 7675).
///
/// The agent owns no socket, thread or clock. The transport that owns the UDP socket (one wildcard socket per address
/// family, shared with DTLS, SRTP and RTCP and demultiplexed by first byte, RFC 7983) drives it from its one socket
/// thread:
/// - STUN datagrams it receives go to `handle(datagram:from:nowNs:)`;
/// - it calls ``handleTimeout(nowNs:)`` when ``nextTimeoutNs`` is reached (and after any input);
/// - it sends what ``pollTransmit()`` returns and acts on what ``pollEvent()`` reports (trickle gathered candidates,
///   start DTLS on ``ICEEvent/selectedPair(_:)``, stop media when ``canSendMedia`` turns false).
///
/// Not thread-safe and deliberately not `Sendable`: a final class used by one thread at a time. Times are monotonic
/// nanoseconds from the caller's clock (tests pass fake ones).
///
/// Controlling (the default, what our publisher must be: a conference server answering an offer is controlled and
/// never nominates) uses regular nomination: checks run in pair-priority order, paced by Ta; the first pair that
/// succeeds is nominated with a second check carrying USE-CANDIDATE, and selected when that check succeeds.
/// ``Configuration/aggressiveNomination`` puts USE-CANDIDATE on every check instead. Controlled selects the pair the
/// peer nominated once a check on it has succeeded in either direction.
///
/// Simplifications: one data stream, so no frozen pairs; the local candidate of every non-relayed pair is the host
/// candidate of its family with the highest priority, because all host candidates of a family share one wildcard
/// socket and the kernel picks the source address (pairs that differ only in it would be redundant, RFC 8445
/// §6.1.2.4); a STUN server's reflexive candidate is gathered and reported for signalling but not paired, for the
/// same reason.
///
/// TURN (RFC 8656, UDP): for each of ``Configuration/turnServers`` the agent runs a `TURNAllocation` on the host
/// socket of the server's family; its relayed address becomes a relay candidate (type preference 0, related address
/// the mapped one), reported like a reflexive one and paired with every remote candidate of its family. Checks on a
/// relay pair, their responses and consent go through the allocation (Send indications, ChannelData once the
/// selected pair's channel is bound), so ``pollTransmit()`` then names the TURN server as destination. The owner of
/// the socket hands everything from a TURN server (``isTURNServer(_:)``) to ``handleFromTURNServer(_:from:nowNs:)``
/// and routes the peer datagrams it returns as if received from the peer, STUN ones back to
/// ``handle(datagram:from:relay:nowNs:)`` with the relayed address. Under ``ICETransportPolicy/relay`` only relay
/// candidates are offered and paired, and checks that reach a host socket directly are dropped.
///
/// More STUN and TURN servers may come after the start (a WHIP endpoint announces its own with the answer):
/// ``add(stunServers:turnServers:)`` resumes gathering for them, reports what they give as events (to trickle) and
/// pairs a new relay candidate with the remote candidates already known; a second ``ICEEvent/gatheringComplete``
/// says when they are done.
package final class ICEAgent {
    /// How an agent runs.
    package struct Configuration: Sendable {
        /// The initial role.
        package var role: ICERole
        /// Our ufrag and password.
        package var localCredentials: ICECredentials
        /// Our tie-breaker for role conflicts.
        package var tieBreaker: UInt64
        /// Local interface addresses, each with the port of its family's socket; the first of a family is preferred.
        package var hostAddresses: [SocketAddress]
        /// STUN servers to learn server-reflexive candidates from.
        package var stunServers: [SocketAddress]
        /// Ta: the interval between new transactions, 50 ms by default.
        package var pacingNs: UInt64 = 50_000_000
        /// The first retransmission timeout, 250 ms; it doubles up to ``maximumRetransmissionTimeoutNs``.
        package var initialRetransmissionTimeoutNs: UInt64 = 250_000_000
        /// The largest retransmission timeout, 2 s (so a check fails after about 9.75 s).
        package var maximumRetransmissionTimeoutNs: UInt64 = 2_000_000_000
        /// Transmissions of one request before it fails, 7.
        package var maximumTransmissions = 7
        /// Put USE-CANDIDATE on every check when controlling (aggressive nomination) instead of nominating the first
        /// pair that succeeds with a second check.
        package var aggressiveNomination = false
        /// The interval between consent checks, drawn uniformly from this range (RFC 7675 §5.1: 4–6 s).
        package var consentIntervalNs: ClosedRange<UInt64> = 4_000_000_000...6_000_000_000
        /// Consent is lost when no consent check got a response for this long, 30 s.
        package var consentTimeoutNs: UInt64 = 30_000_000_000
        /// Checking fails when no pair is selected this long after checks could start, 30 s.
        package var checkingTimeoutNs: UInt64 = 30_000_000_000
        /// TURN servers to allocate relayed candidates on.
        package var turnServers: [TURNServer] = []
        /// Which local candidates are offered and paired (``ICETransportPolicy/relay``: relayed ones only).
        package var transportPolicy: ICETransportPolicy = .all
        /// The TURN allocations' timers.
        package var turnTiming = TURNAllocation.Timing()
        /// Run as an ICE-lite agent (RFC 8445 §2.5): always controlled, sends no checks and no consent checks,
        /// answers checks and selects the pair the peer nominates as soon as the nominating request arrives.
        package var lite = false

        /// A configuration; the tie-breaker and credentials are random unless given.
        package init(
            role: ICERole = .controlling, localCredentials: ICECredentials = .random(),
            tieBreaker: UInt64 = UInt64.random(in: 0...UInt64.max), hostAddresses: [SocketAddress] = [],
            stunServers: [SocketAddress] = [], turnServers: [TURNServer] = [],
            transportPolicy: ICETransportPolicy = .all
        ) {
            self.role = role
            self.localCredentials = localCredentials
            self.tieBreaker = tieBreaker
            self.hostAddresses = hostAddresses
            self.stunServers = stunServers
            self.turnServers = turnServers
            self.transportPolicy = transportPolicy
        }
    }

    /// What `handle(datagram:from:nowNs:)` did with a datagram.
    package enum Disposition: Sendable, Hashable, Codable {
        /// Not STUN (no magic cookie): not consumed, route it elsewhere.
        case notSTUN
        /// STUN-looking but malformed: consumed and dropped.
        case malformed(STUNParseError)
        /// A valid Binding request, answered with a success response.
        case answered
        /// A request answered with an error (401 bad credentials, 487 role conflict).
        case rejected
        /// A response to one of our requests, consumed.
        case response
        /// Consumed and dropped: bad FINGERPRINT, a response to no pending request, an indication, another method.
        case dropped

        /// Whether the agent consumed the datagram (everything but ``notSTUN``).
        package var isConsumed: Bool { self != .notSTUN }
    }

    /// What ``handleFromTURNServer(_:from:nowNs:)`` found in a datagram from a TURN server.
    package enum RelayInput: Sendable, Hashable {
        /// Not from one of our TURN servers: route it as usual.
        case notFromTURNServer
        /// A message for the allocation itself (a response), or dropped as malformed: consumed.
        case consumed
        /// A datagram from `peer`, relayed to our relayed address `relay`: its bytes are `payload` within the input.
        /// Route it as received from `peer` (STUN to `ICEAgent/handle(datagram:from:relay:nowNs:)` with `relay`).
        case data(peer: SocketAddress, relay: SocketAddress, payload: Range<Int>)
    }

    /// A path: the remote address, reached directly (`relay` nil) or through our relayed address `relay`.
    struct PathKey: Hashable {
        var relay: SocketAddress?
        var remote: SocketAddress

        init(relay: SocketAddress?, remote: SocketAddress) {
            self.relay = relay
            self.remote = remote
        }

        init(_ pair: ICECandidatePair) {
            self.init(relay: pair.local.kind == .relay ? pair.local.address : nil, remote: pair.remote.address)
        }
    }

    /// An outstanding request.
    private struct Transaction {
        enum Purpose {
            case check(PathKey, useCandidate: Bool)
            case consent(PathKey)
            case server(SocketAddress)
        }

        var purpose: Purpose
        var bytes: [UInt8]
        var destination: SocketAddress
        var relay: SocketAddress?
        var firstSentNs: UInt64
        var schedule: STUNRetransmission
    }

    /// The configuration as given.
    package let configuration: Configuration
    /// The current role (it changes after a role conflict).
    package private(set) var role: ICERole
    /// The connection state.
    package private(set) var state: ICEState = .new
    /// Local candidates: the host candidates (none under ``ICETransportPolicy/relay``), then any server-reflexive and
    /// relayed ones gathered.
    package private(set) var localCandidates: [ICECandidate]
    /// Remote candidates: signalled ones and peer-reflexive ones learned from checks.
    package private(set) var remoteCandidates: [ICECandidate] = []
    /// The peer's credentials, once set.
    package private(set) var remoteCredentials: ICECredentials?
    /// Counters.
    package private(set) var statistics = ICEStatistics()
    /// Whether the peer signalled end-of-candidates.
    package private(set) var remoteCandidatesComplete = false

    /// The check list, highest pair priority first.
    package private(set) var pairs: [ICECandidatePair] = []
    private var triggered: [(key: PathKey, useCandidate: Bool)] = []
    private var transactions: [STUNTransactionID: Transaction] = [:]
    private var transmitQueue: [(bytes: [UInt8], destination: SocketAddress)] = []
    private var eventQueue: [ICEEvent] = []
    private var started = false
    private var pendingServers: [SocketAddress]
    /// Every STUN server asked (or to be asked), so that one added again is not asked twice.
    private var usedSTUNServers: Set<SocketAddress>
    private var gatheringReported = false
    private var lastPacedSendNs: UInt64?
    private var checkingStartNs: UInt64?
    private var firstCheckNs: UInt64?
    private var nominating: PathKey?
    private var selectedKey: PathKey?
    /// Host candidates, one wildcard socket per family: the base of reflexive and relayed candidates.
    private let hostCandidates: [ICECandidate]
    private var allocations: [TURNAllocation]
    /// Each allocation's state when last looked at, to report what changed.
    private var allocationStates: [TURNAllocationState]
    private var nextConsentNs: UInt64 = 0
    private var lastConsentNs: UInt64 = 0
    private var generator = SystemRandomNumberGenerator()

    /// An agent in state ``ICEState/new``; it starts (gathering from STUN servers) on the first
    /// ``handleTimeout(nowNs:)``.
    package init(configuration: Configuration) {
        self.configuration = configuration
        self.role = configuration.lite ? .controlled : configuration.role
        var hosts: [ICECandidate] = []
        for (index, address) in configuration.hostAddresses.enumerated()
        where !hosts.contains(where: {
            $0.address == address
        }) {
            let preference = UInt16(clamping: 65535 - index)
            hosts.append(
                ICECandidate(
                    foundation: ICECandidate.foundation(kind: .host, base: address),
                    priority: ICECandidate.priority(kind: .host, localPreference: preference), address: address,
                    kind: .host))
        }
        let relayOnly = configuration.transportPolicy == .relay
        self.hostCandidates = hosts
        self.localCandidates = relayOnly ? [] : hosts
        self.pendingServers = relayOnly ? [] : configuration.stunServers
        self.usedSTUNServers = Set(configuration.stunServers)
        self.allocations = configuration.turnServers.filter { server in
            hosts.contains { $0.address.family == server.address.family }
        }.map { TURNAllocation(server: $0, timing: configuration.turnTiming) }
        self.allocationStates = allocations.map(\.state)
    }

    /// The selected pair, if any.
    package var selectedPair: ICECandidatePair? {
        guard let selectedKey, let index = pairIndex(selectedKey) else { return nil }
        return pairs[index]
    }

    /// Whether media may be sent: a pair is selected and consent is fresh (state ``ICEState/connected``).
    package var canSendMedia: Bool { state == .connected && selectedKey != nil }

    /// Whether gathering is over: started, and every STUN and TURN server answered or gave up.
    package var isGatheringComplete: Bool {
        started && pendingServers.isEmpty
            && !transactions.values.contains { if case .server = $0.purpose { true } else { false } }
            && !allocations.contains { $0.state == .new || $0.state == .allocating }
    }

    /// The TURN allocations' figures, one per TURN server (configured or added) of a family we have a host address
    /// of.
    package var turnAllocations: [TURNAllocationStatistics] { allocations.map(\.statistics) }

    /// Whether `address` is one of our TURN servers: what comes from it goes to
    /// ``handleFromTURNServer(_:from:nowNs:)``.
    package func isTURNServer(_ address: SocketAddress) -> Bool {
        allocations.contains { $0.server.address == address }
    }

    /// The TURN server and bound channel media to the selected pair's peer goes through, when the selected pair's
    /// local candidate is relayed (`channel` nil until the server confirmed the binding: use ``wrapForRelay(_:pair:)``
    /// until then).
    package var selectedRelay: (server: SocketAddress, channel: UInt16?)? {
        guard let pair = selectedPair, pair.local.kind == .relay,
            let allocation = allocation(relayedAddress: pair.local.address)
        else { return nil }
        return (allocation.server.address, allocation.boundChannel(to: pair.remote.address))
    }

    /// `payload` for `pair`'s peer, framed for the TURN server of `pair`'s relayed local candidate, and that server;
    /// `nil` when the pair's local candidate is not relayed (send `payload` straight to the peer).
    package func wrapForRelay(
        _ payload: [UInt8], pair: ICECandidatePair
    ) -> (bytes: [UInt8], destination: SocketAddress)? {
        guard pair.local.kind == .relay, let allocation = allocation(relayedAddress: pair.local.address) else {
            return nil
        }
        return (allocation.wrap(payload, to: pair.remote.address), allocation.server.address)
    }

    // MARK: Inputs

    /// Sets the peer's credentials (from its SDP). Checks start once there are also remote candidates.
    package func setRemote(credentials: ICECredentials) {
        remoteCredentials = credentials
    }

    /// Adds a remote candidate (signalled, possibly trickled). Unusable (TCP), non-RTP-component and duplicate
    /// candidates are ignored; returns whether it was added.
    @discardableResult
    package func addRemoteCandidate(_ candidate: ICECandidate) -> Bool {
        guard state != .closed, candidate.isUsable, candidate.component == 1 else { return false }
        if let index = remoteCandidates.firstIndex(where: { $0.address == candidate.address }) {
            // A signalled candidate replaces a peer-reflexive one learned first (RFC 8445 §7.3.1.3).
            guard remoteCandidates[index].kind == .prflx, candidate.kind != .prflx else { return false }
            remoteCandidates[index] = candidate
            for pair in pairs.indices where pairs[pair].remote.address == candidate.address {
                pairs[pair].remote = candidate
            }
            sortPairs()
            return true
        }
        remoteCandidates.append(candidate)
        permit(candidate.address)
        addPairs(remote: candidate)
        return true
    }

    /// Adds STUN and TURN servers after the agent started (those a WHIP endpoint announced with the answer, say):
    /// gathering resumes for them, their reflexive and relayed candidates are reported as
    /// ``ICEEvent/localCandidate(_:)`` like the first ones, a new relay candidate is paired with every remote
    /// candidate already known, and one more ``ICEEvent/gatheringComplete`` follows when they have all answered or
    /// given up. Servers already in use (a STUN address, a TURN address with the same credentials), TURN servers of a
    /// family we have no host address of, and STUN servers under ``ICETransportPolicy/relay`` are skipped, as at
    /// start. Returns how many servers gathering resumed for (0: nothing changes, no event follows).
    @discardableResult
    package func add(stunServers: [SocketAddress], turnServers: [TURNServer]) -> Int {
        guard state != .closed else { return 0 }
        var added = 0
        if configuration.transportPolicy == .all {
            for server in stunServers where !usedSTUNServers.contains(server) {
                usedSTUNServers.insert(server)
                pendingServers.append(server)
                added += 1
            }
        }
        for server in turnServers where hostCandidate(family: server.address.family) != nil {
            guard
                !allocations.contains(where: {
                    $0.server.address == server.address
                        && $0.server.username == server.username && $0.server.password == server.password
                })
            else { continue }
            let allocation = TURNAllocation(server: server, timing: configuration.turnTiming)
            allocations.append(allocation)
            allocationStates.append(allocation.state)
            added += 1
        }
        if added > 0 { gatheringReported = false }
        return added
    }

    /// The peer signalled end-of-candidates: when every pair has failed, the agent fails.
    package func endOfCandidates() {
        remoteCandidatesComplete = true
    }

    /// Stops the agent: no more transmissions or events but ``ICEState/closed``.
    package func close() {
        close(nowNs: 0)
    }

    /// Stops the agent, releasing every TURN allocation (a Refresh with LIFETIME 0, the only transmissions left to
    /// poll): no more events but ``ICEState/closed``.
    package func close(nowNs: UInt64) {
        guard state != .closed else { return }
        transactions.removeAll()
        triggered.removeAll()
        transmitQueue.removeAll()
        for allocation in allocations {
            allocation.close(nowNs: nowNs)
            drainTransmissions(of: allocation)
        }
        setState(.closed)
    }

    /// Handles a datagram received on our socket from `source`. Returns ``Disposition/notSTUN`` for anything that
    /// is not STUN (route it by RFC 7983 instead); never traps on any input.
    ///
    /// `relay` is our relayed address the datagram reached us through (from ``RelayInput/data(peer:relay:payload:)``),
    /// `nil` when it came straight to a host socket.
    @discardableResult
    package func handle(
        datagram: UnsafeRawBufferPointer, from source: SocketAddress, relay: SocketAddress? = nil, nowNs: UInt64
    ) -> Disposition {
        guard STUNMessage.isSTUN(datagram) else { return .notSTUN }
        let message: STUNMessage
        do { message = try STUNMessage(parsing: datagram) } catch { return .malformed(error) }
        guard state != .closed, message.method == STUNMessage.binding else { return .dropped }
        if relay == nil && configuration.transportPolicy == .relay {
            statistics.droppedByPolicy += 1
            return .dropped
        }
        if let relay, allocation(relayedAddress: relay) == nil { return .dropped }
        switch message.messageClass {
        case .request: return handleRequest(message, bytes: datagram, source: source, relay: relay, nowNs: nowNs)
        case .successResponse, .errorResponse:
            return handleResponse(message, bytes: datagram, source: source, relay: relay, nowNs: nowNs)
        case .indication: return .dropped
        }
    }

    /// `handle(datagram:from:relay:nowNs:)` for bytes in an array.
    @discardableResult
    package func handle(
        datagram: [UInt8], from source: SocketAddress, relay: SocketAddress? = nil, nowNs: UInt64
    ) -> Disposition {
        datagram.withUnsafeBytes { handle(datagram: $0, from: source, relay: relay, nowNs: nowNs) }
    }

    /// Handles a datagram from `source`, which may be one of our TURN servers (``isTURNServer(_:)``): its responses
    /// go to the allocation (and may gather a relay candidate), and a peer's datagram inside a Data indication or
    /// ChannelData comes back as ``RelayInput/data(peer:relay:payload:)``. Never traps on any input.
    package func handleFromTURNServer(
        _ datagram: UnsafeRawBufferPointer, from source: SocketAddress, nowNs: UInt64
    ) -> RelayInput {
        guard let allocation = allocations.first(where: { $0.server.address == source }) else {
            return .notFromTURNServer
        }
        guard state != .closed else { return .consumed }
        let input = allocation.handle(datagram, nowNs: nowNs)
        followAllocations(nowNs: nowNs)
        switch input {
        case .consumed, .dropped:
            return .consumed
        case .data(let peer, let payload):
            guard let relay = allocation.relayedAddress else { return .consumed }
            return .data(peer: peer, relay: relay, payload: payload)
        }
    }

    /// `handleFromTURNServer(_:from:nowNs:)` for bytes in an array.
    package func handleFromTURNServer(_ datagram: [UInt8], from source: SocketAddress, nowNs: UInt64) -> RelayInput {
        datagram.withUnsafeBytes { handleFromTURNServer($0, from: source, nowNs: nowNs) }
    }

    // MARK: Outputs

    /// The next datagram to send and where, oldest first; `nil` when none is queued.
    package func pollTransmit() -> (bytes: [UInt8], destination: SocketAddress)? {
        transmitQueue.isEmpty ? nil : transmitQueue.removeFirst()
    }

    /// The next event, oldest first; `nil` when none is queued.
    package func pollEvent() -> ICEEvent? {
        eventQueue.isEmpty ? nil : eventQueue.removeFirst()
    }

    /// When ``handleTimeout(nowNs:)`` is next due (0: now, before the first call); `nil` when nothing is scheduled.
    package var nextTimeoutNs: UInt64? {
        guard state != .closed else { return nil }
        guard started else { return 0 }
        var next: UInt64?
        func consider(_ time: UInt64) { next = min(next ?? time, time) }
        for transaction in transactions.values { consider(transaction.schedule.deadlineNs) }
        for allocation in allocations { allocation.nextTimeoutNs.map(consider) }
        if hasPacedWork { consider(lastPacedSendNs.map { $0 + configuration.pacingNs } ?? 0) }
        if state == .connected && !configuration.lite {
            consider(nextConsentNs)
            consider(lastConsentNs + configuration.consentTimeoutNs)
        }
        if state == .checking, let checkingStartNs { consider(checkingStartNs + configuration.checkingTimeoutNs) }
        return next
    }

    /// Runs the timers due at `nowNs`: retransmissions and timeouts, consent, and at most one new paced transaction
    /// (a STUN server request, a triggered check, a nomination, or the next ordinary check).
    package func handleTimeout(nowNs: UInt64) {
        guard state != .closed else { return }
        started = true
        for allocation in allocations {
            if allocation.state == .new { allocation.start(nowNs: nowNs) }
            allocation.handleTimeout(nowNs: nowNs)
        }
        followAllocations(nowNs: nowNs)
        retransmit(nowNs: nowNs)
        if state == .new, remoteCredentials != nil, !pairs.isEmpty {
            checkingStartNs = nowNs
            setState(.checking)
        }
        if state == .connected, selectedKey != nil, !configuration.lite {
            if nowNs >= lastConsentNs + configuration.consentTimeoutNs {
                setState(.disconnected)
            } else if nowNs >= nextConsentNs, let selectedKey {
                sendConsent(on: selectedKey, nowNs: nowNs)
            }
        }
        if hasPacedWork, nowNs >= lastPacedSendNs.map({ $0 + configuration.pacingNs }) ?? 0 {
            if sendPaced(nowNs: nowNs) { lastPacedSendNs = nowNs }
        }
        if state == .checking, selectedKey == nil {
            let allFailed = pairs.allSatisfy { $0.state == .failed } && triggered.isEmpty
            let timedOut = checkingStartNs.map { nowNs >= $0 + configuration.checkingTimeoutNs } ?? false
            if (remoteCandidatesComplete && allFailed && !pairs.isEmpty) || timedOut { setState(.failed) }
        }
    }

    // MARK: Requests from the peer

    private func handleRequest(
        _ message: STUNMessage, bytes: UnsafeRawBufferPointer, source: SocketAddress, relay: SocketAddress?,
        nowNs: UInt64
    ) -> Disposition {
        statistics.checksReceived += 1
        guard STUNMessageIntegrity.verifyFingerprint(bytes) == .valid else {
            statistics.integrityFailures += 1
            return .dropped
        }
        let local = configuration.localCredentials
        let expectedPrefix = local.ufrag + ":"
        guard let username = message.username, username.hasPrefix(expectedPrefix),
            remoteCredentials.map({ username == expectedPrefix + $0.ufrag }) ?? true
        else {
            statistics.usernameMismatches += 1
            sendError(401, reason: "Unauthorized", to: message, destination: source, relay: relay)
            return .rejected
        }
        guard
            STUNMessageIntegrity.verifyIntegrity(bytes, key: STUNMessageIntegrity.key(password: local.password))
                == .valid
        else {
            statistics.integrityFailures += 1
            sendError(401, reason: "Unauthorized", to: message, destination: source, relay: relay)
            return .rejected
        }
        // RFC 8445 §7.3.1.1: the larger tie-breaker is controlling.
        if role == .controlling, let theirs = message.iceControlling {
            statistics.roleConflicts += 1
            if configuration.tieBreaker >= theirs {
                sendError(487, reason: "Role Conflict", to: message, destination: source, relay: relay, signed: true)
                return .rejected
            }
            switchRole(to: .controlled)
        } else if role == .controlled, let theirs = message.iceControlled {
            statistics.roleConflicts += 1
            if configuration.tieBreaker >= theirs && !configuration.lite {
                switchRole(to: .controlling)
            } else {
                sendError(487, reason: "Role Conflict", to: message, destination: source, relay: relay, signed: true)
                return .rejected
            }
        }
        let response = STUNMessage(
            .successResponse, transactionID: message.transactionID, attributes: [.xorMappedAddress(source)])
        enqueue(
            response.serialized(integrityKey: STUNMessageIntegrity.key(password: local.password), fingerprint: true),
            to: source, relay: relay)
        statistics.responsesSent += 1

        if !remoteCandidates.contains(where: { $0.address == source }) {
            // RFC 8445 §7.3.1.3: a peer-reflexive remote candidate, with the priority the peer computed for it.
            let candidate = ICECandidate(
                foundation: ICECandidate.foundation(kind: .prflx, base: source),
                priority: message.priority ?? ICECandidate.priority(kind: .prflx, localPreference: 65535),
                address: source, kind: .prflx)
            remoteCandidates.append(candidate)
            statistics.peerReflexiveCandidates += 1
            permit(source)
            addPairs(remote: candidate)
        }
        let key = PathKey(relay: relay, remote: source)
        guard let index = pairIndex(key) else { return .answered }
        if message.useCandidate && role == .controlled { pairs[index].nominated = true }
        if configuration.lite {
            // A lite agent checks nothing: a valid nominating request is enough (RFC 8445 §7.3.1.5 for lite).
            if message.useCandidate {
                pairs[index].state = .succeeded
                select(index, nowNs: nowNs)
            }
            return .answered
        }
        // RFC 8445 §7.3.1.4: a triggered check on the pair.
        switch pairs[index].state {
        case .waiting, .failed:
            pairs[index].state = .waiting
            if !triggered.contains(where: { $0.key == key }) { triggered.append((key, false)) }
        case .inProgress:
            break
        case .succeeded:
            if role == .controlled && pairs[index].nominated { select(index, nowNs: nowNs) }
        }
        return .answered
    }

    /// Counts one measured round trip of `ns` nanoseconds.
    private func recordRoundTrip(_ ns: UInt64) {
        let roundTrip = Duration.nanoseconds(Int64(clamping: ns))
        statistics.lastRoundTrip = roundTrip
        statistics.totalRoundTrip += roundTrip
        statistics.roundTripMeasurements += 1
    }

    private func sendError(
        _ code: Int, reason: String, to request: STUNMessage, destination: SocketAddress, relay: SocketAddress?,
        signed: Bool = false
    ) {
        let response = STUNMessage(
            .errorResponse, transactionID: request.transactionID,
            attributes: [.errorCode(code: code, reason: reason)])
        let key = signed ? STUNMessageIntegrity.key(password: configuration.localCredentials.password) : nil
        enqueue(response.serialized(integrityKey: key, fingerprint: true), to: destination, relay: relay)
        statistics.errorResponsesSent += 1
    }

    // MARK: Responses to our requests

    private func handleResponse(
        _ message: STUNMessage, bytes: UnsafeRawBufferPointer, source: SocketAddress, relay: SocketAddress?,
        nowNs: UInt64
    ) -> Disposition {
        guard let transaction = transactions[message.transactionID] else { return .dropped }
        if case .server(let server) = transaction.purpose {
            // A STUN server does not authenticate short-term: a FINGERPRINT, if any, must be right.
            guard source == server, relay == nil, STUNMessageIntegrity.verifyFingerprint(bytes) != .invalid else {
                return .dropped
            }
            transactions[message.transactionID] = nil
            if message.messageClass == .successResponse, let mapped = message.mappedAddress {
                learnServerReflexive(mapped, server: server)
            }
            reportGatheringIfComplete()
            return .response
        }
        guard let remoteCredentials, STUNMessageIntegrity.verifyFingerprint(bytes) == .valid,
            STUNMessageIntegrity.verifyIntegrity(
                bytes, key: STUNMessageIntegrity.key(password: remoteCredentials.password))
                == .valid
        else {
            statistics.integrityFailures += 1
            return .dropped
        }
        transactions[message.transactionID] = nil
        switch transaction.purpose {
        case .server:
            return .response
        case .consent(let key):
            if message.messageClass == .successResponse, source == key.remote, relay == key.relay, state == .connected {
                statistics.consentResponsesReceived += 1
                recordRoundTrip(nowNs &- transaction.firstSentNs)
                lastConsentNs = nowNs
            }
            return .response
        case .check(let key, let useCandidate):
            handleCheckResponse(
                message, arrival: PathKey(relay: relay, remote: source), key: key, useCandidate: useCandidate,
                sentNs: transaction.firstSentNs, nowNs: nowNs)
            return .response
        }
    }

    private func handleCheckResponse(
        _ message: STUNMessage, arrival: PathKey, key: PathKey, useCandidate: Bool, sentNs: UInt64, nowNs: UInt64
    ) {
        guard let index = pairIndex(key) else { return }
        if nominating == key { nominating = nil }
        if message.messageClass == .errorResponse {
            if message.errorCode == 487 {
                // RFC 8445 §7.2.5.1: take the other role than the one the request was sent in, and check again.
                statistics.roleConflicts += 1
                switchRole(to: role == .controlling ? .controlled : .controlling)
                if pairs[index].state != .succeeded { pairs[index].state = .waiting }
                triggered.append((key, false))
            } else {
                failCheck(index)
            }
            return
        }
        // RFC 8445 §7.2.5.2.1: the response must come from where the request went (through the same relay).
        guard arrival == key else {
            failCheck(index)
            return
        }
        statistics.successes += 1
        recordRoundTrip(nowNs &- sentNs)
        pairs[index].state = .succeeded
        if state == .failed {
            // A late triggered check got through: back to checking, with a fresh timeout.
            checkingStartNs = nowNs
            setState(.checking)
        }
        if key.relay == nil, let mapped = message.mappedAddress,
            let local = localCandidates.first(where: { $0.kind == .host && $0.address == mapped })
        {
            pairs[index].local = local
        }
        if useCandidate && role == .controlling {
            pairs[index].nominated = true
            select(index, nowNs: nowNs)
        } else if role == .controlled && pairs[index].nominated {
            select(index, nowNs: nowNs)
        }
    }

    private func failCheck(_ index: Int) {
        statistics.failures += 1
        if pairs[index].state != .succeeded { pairs[index].state = .failed }
    }

    private func learnServerReflexive(_ mapped: SocketAddress, server: SocketAddress) {
        guard let base = hostCandidate(family: mapped.family),
            !localCandidates.contains(where: { $0.address == mapped })
        else { return }
        let candidate = ICECandidate(
            foundation: ICECandidate.foundation(kind: .srflx, base: base.address, server: server),
            priority: ICECandidate.priority(
                kind: .srflx, localPreference: UInt16(truncatingIfNeeded: base.priority >> 8)),
            address: mapped, kind: .srflx, relatedAddress: base.address)
        localCandidates.append(candidate)
        statistics.serverReflexiveCandidates += 1
        eventQueue.append(.localCandidate(candidate))
    }

    /// Reports what the TURN allocations did since last looked at: a relay candidate gathered (then paired and its
    /// peers permitted), an allocation failed; and queues their transmissions.
    private func followAllocations(nowNs: UInt64) {
        for (index, allocation) in allocations.enumerated() {
            drainTransmissions(of: allocation)
            let previous = allocationStates[index]
            guard allocation.state != previous else { continue }
            allocationStates[index] = allocation.state
            switch allocation.state {
            case .allocated:
                learnRelayed(allocation, index: index)
            case .failed:
                statistics.relayFailures += 1
                if let error = allocation.lastError { eventQueue.append(.relayFailed(error)) }
                if let relayed = allocation.relayedAddress { abandonRelay(relayed) }
                reportGatheringIfComplete()
            case .new, .allocating, .closed:
                break
            }
        }
    }

    private func drainTransmissions(of allocation: TURNAllocation) {
        while let bytes = allocation.pollTransmit() { transmitQueue.append((bytes, allocation.server.address)) }
    }

    private func learnRelayed(_ allocation: TURNAllocation, index: Int) {
        guard let relayed = allocation.relayedAddress, !localCandidates.contains(where: { $0.address == relayed })
        else { return }
        let related = allocation.mappedAddress ?? hostCandidate(family: allocation.server.address.family)?.address
        let candidate = ICECandidate(
            foundation: ICECandidate.foundation(
                kind: .relay, base: related ?? relayed, server: allocation.server.address),
            priority: ICECandidate.priority(kind: .relay, localPreference: UInt16(clamping: 65535 - index)),
            address: relayed, kind: .relay, relatedAddress: related)
        localCandidates.append(candidate)
        statistics.relayCandidates += 1
        eventQueue.append(.localCandidate(candidate))
        for remote in remoteCandidates where remote.address.family == relayed.family {
            allocation.addPermission(for: remote.address)
            addPair(local: candidate, remote: remote)
        }
        reportGatheringIfComplete()
    }

    /// A lost allocation: its pairs fail (the candidate stays signalled; nothing can reach it any more).
    private func abandonRelay(_ relayed: SocketAddress) {
        for index in pairs.indices where PathKey(pairs[index]).relay == relayed { pairs[index].state = .failed }
    }

    /// Asks every allocation of `remote`'s family for a permission for its IP address.
    private func permit(_ remote: SocketAddress) {
        for allocation in allocations where allocation.server.address.family == remote.family {
            allocation.addPermission(for: remote)
        }
    }

    private func allocation(relayedAddress: SocketAddress) -> TURNAllocation? {
        allocations.first { $0.relayedAddress == relayedAddress }
    }

    private func reportGatheringIfComplete() {
        guard !gatheringReported, pendingServers.isEmpty else { return }
        guard !allocations.contains(where: { $0.state == .new || $0.state == .allocating }) else { return }
        let outstanding = transactions.values.contains { if case .server = $0.purpose { true } else { false } }
        guard !outstanding else { return }
        gatheringReported = true
        eventQueue.append(.gatheringComplete)
    }

    // MARK: Timers and sending

    private var hasPacedWork: Bool {
        if !pendingServers.isEmpty { return true }
        guard remoteCredentials != nil, !configuration.lite, state != .disconnected, state != .closed else {
            return false
        }
        // Triggered checks go out even after failure: a peer that reaches us late can still connect.
        if !triggered.isEmpty { return true }
        guard state != .failed else { return false }
        guard selectedKey == nil, state != .new else { return false }
        if needsNomination { return true }
        return pairs.contains { $0.state == .waiting }
    }

    /// Controlling, regular nomination: a pair succeeded, none is selected or being nominated.
    private var needsNomination: Bool {
        role == .controlling && !configuration.aggressiveNomination && selectedKey == nil && nominating == nil
            && pairs.contains { $0.state == .succeeded }
    }

    /// Sends one new transaction if there is one to send; returns whether it did.
    private func sendPaced(nowNs: UInt64) -> Bool {
        if !pendingServers.isEmpty {
            let server = pendingServers.removeFirst()
            let request = STUNMessage(.request)
            let bytes = request.serialized(fingerprint: true)
            start(
                Transaction.Purpose.server(server), id: request.transactionID, bytes: bytes,
                on: PathKey(relay: nil, remote: server), nowNs: nowNs)
            return true
        }
        guard remoteCredentials != nil, !configuration.lite, state != .new || !triggered.isEmpty else { return false }
        while !triggered.isEmpty {
            let next = triggered.removeFirst()
            guard let index = pairIndex(next.key), pairs[index].state != .inProgress else { continue }
            sendCheck(index, useCandidate: next.useCandidate, nowNs: nowNs)
            return true
        }
        guard selectedKey == nil, state != .failed else { return false }
        if needsNomination, let index = pairs.firstIndex(where: { $0.state == .succeeded }) {
            nominating = PathKey(pairs[index])
            sendCheck(index, useCandidate: true, nowNs: nowNs)
            return true
        }
        if let index = pairs.firstIndex(where: { $0.state == .waiting }) {
            sendCheck(index, useCandidate: false, nowNs: nowNs)
            return true
        }
        return false
    }

    private func sendCheck(_ index: Int, useCandidate: Bool, nowNs: UInt64) {
        let nominate = role == .controlling && (useCandidate || configuration.aggressiveNomination)
        let request = bindingRequest(for: pairs[index], useCandidate: nominate)
        let key = PathKey(pairs[index])
        if pairs[index].state != .succeeded { pairs[index].state = .inProgress }
        if nominate { nominating = key }
        statistics.checksSent += 1
        if firstCheckNs == nil { firstCheckNs = nowNs }
        start(.check(key, useCandidate: nominate), id: request.id, bytes: request.bytes, on: key, nowNs: nowNs)
    }

    private func sendConsent(on key: PathKey, nowNs: UInt64) {
        guard let index = pairIndex(key) else { return }
        let request = bindingRequest(for: pairs[index], useCandidate: false)
        statistics.consentRequestsSent += 1
        start(.consent(key), id: request.id, bytes: request.bytes, on: key, nowNs: nowNs)
        nextConsentNs = nowNs + UInt64.random(in: configuration.consentIntervalNs, using: &generator)
    }

    /// A Binding request for `pair`: USERNAME, PRIORITY (peer-reflexive), our role, USE-CANDIDATE if asked,
    /// MESSAGE-INTEGRITY keyed with the peer's password, FINGERPRINT (RFC 8445 §7.2.2).
    private func bindingRequest(
        for pair: ICECandidatePair, useCandidate: Bool
    ) -> (id: STUNTransactionID, bytes: [UInt8]) {
        let remote = remoteCredentials ?? ICECredentials(ufrag: "", password: "")
        let local = configuration.localCredentials
        var attributes: [STUNAttribute] = [
            .username(remote.ufrag + ":" + local.ufrag),
            .priority(ICECandidate.Kind.prflx.typePreference << 24 | pair.local.priority & 0x00FF_FFFF),
            role == .controlling ? .iceControlling(configuration.tieBreaker) : .iceControlled(configuration.tieBreaker),
        ]
        if useCandidate { attributes.append(.useCandidate) }
        let message = STUNMessage(.request, attributes: attributes)
        let bytes = message.serialized(
            integrityKey: STUNMessageIntegrity.key(password: remote.password), fingerprint: true)
        return (message.transactionID, bytes)
    }

    private func start(
        _ purpose: Transaction.Purpose, id: STUNTransactionID, bytes: [UInt8], on key: PathKey, nowNs: UInt64
    ) {
        transactions[id] = Transaction(
            purpose: purpose, bytes: bytes, destination: key.remote, relay: key.relay, firstSentNs: nowNs,
            schedule: STUNRetransmission(
                sentAtNs: nowNs, initialTimeoutNs: configuration.initialRetransmissionTimeoutNs))
        enqueue(bytes, to: key.remote, relay: key.relay)
    }

    /// Queues `bytes` for `destination`, straight or through the allocation whose relayed address is `relay`.
    private func enqueue(_ bytes: [UInt8], to destination: SocketAddress, relay: SocketAddress?) {
        guard let relay else {
            transmitQueue.append((bytes, destination))
            return
        }
        guard let allocation = allocation(relayedAddress: relay), allocation.state == .allocated else { return }
        transmitQueue.append((allocation.wrap(bytes, to: destination), allocation.server.address))
    }

    private func retransmit(nowNs: UInt64) {
        for (id, transaction) in transactions where transaction.schedule.isDue(atNs: nowNs) {
            var next = transaction
            guard
                next.schedule.retransmit(
                    atNs: nowNs, maximumTimeoutNs: configuration.maximumRetransmissionTimeoutNs,
                    maximumTransmissions: configuration.maximumTransmissions)
            else {
                transactions[id] = nil
                timedOut(transaction)
                continue
            }
            transactions[id] = next
            enqueue(next.bytes, to: next.destination, relay: next.relay)
            statistics.retransmissions += 1
        }
    }

    private func timedOut(_ transaction: Transaction) {
        switch transaction.purpose {
        case .check(let key, _):
            if nominating == key { nominating = nil }
            if let index = pairIndex(key) { failCheck(index) }
        case .server:
            reportGatheringIfComplete()
        case .consent:
            break  // Consent expiry is measured from the last response, not per request.
        }
    }

    // MARK: Pairs, selection, state

    private func hostCandidate(family: SocketAddress.Family) -> ICECandidate? {
        hostCandidates.first { $0.address.family == family }
    }

    private func pairIndex(_ key: PathKey) -> Int? {
        pairs.firstIndex { PathKey($0) == key }
    }

    /// Pairs `remote` with the host candidate of its family (unless the policy is relay) and every relay candidate
    /// of its family.
    private func addPairs(remote: ICECandidate) {
        if configuration.transportPolicy == .all, let local = hostCandidate(family: remote.address.family) {
            addPair(local: local, remote: remote)
        }
        for local in localCandidates where local.kind == .relay && local.address.family == remote.address.family {
            addPair(local: local, remote: remote)
        }
    }

    private func addPair(local: ICECandidate, remote: ICECandidate) {
        let pair = ICECandidatePair(local: local, remote: remote)
        guard pairIndex(PathKey(pair)) == nil else { return }
        pairs.append(pair)
        sortPairs()
    }

    private func sortPairs() {
        let role = self.role
        pairs.sort { left, right in
            let (l, r) = (left.priority(role: role), right.priority(role: role))
            guard l == r else { return l > r }
            let (leftName, rightName) = (left.remote.address.description, right.remote.address.description)
            return leftName != rightName
                ? leftName < rightName : left.local.address.description < right.local.address.description
        }
    }

    private func switchRole(to newRole: ICERole) {
        guard newRole != role else { return }
        role = newRole
        nominating = nil
        sortPairs()
        eventQueue.append(.roleChanged(newRole))
    }

    private func select(_ index: Int, nowNs: UInt64) {
        let key = PathKey(pairs[index])
        if let current = selectedKey, let currentIndex = pairIndex(current) {
            // Controlled, aggressive peer: keep the highest-priority nominated pair.
            guard current != key, pairs[index].priority(role: role) > pairs[currentIndex].priority(role: role) else {
                return
            }
        }
        selectedKey = key
        if let relay = key.relay {
            // Media goes as ChannelData (4 bytes of framing instead of a Send indication's 36).
            allocation(relayedAddress: relay)?.bindChannel(to: key.remote)
        }
        statistics.selectedPair = pairs[index]
        if statistics.timeToConnected == nil, let firstCheckNs = firstCheckNs ?? checkingStartNs {
            statistics.timeToConnected = .nanoseconds(Int64(clamping: nowNs &- firstCheckNs))
        }
        lastConsentNs = nowNs
        nextConsentNs = nowNs + UInt64.random(in: configuration.consentIntervalNs, using: &generator)
        eventQueue.append(.selectedPair(pairs[index]))
        if state == .new || state == .checking || state == .failed { setState(.connected) }
    }

    private func setState(_ newState: ICEState) {
        guard newState != state else { return }
        state = newState
        eventQueue.append(.stateChanged(newState))
    }
}
