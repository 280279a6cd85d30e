public import CaptureRTP

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
/// Simplifications: one data stream, so no frozen pairs; the local candidate of every pair is the host candidate of
/// its family with the highest priority, because all host candidates of a family share one wildcard socket and the
/// kernel picks the source address (pairs that differ only in it would be redundant, RFC 8445 §6.1.2.4); a STUN
/// server's reflexive candidate is gathered and reported for signalling but not paired, for the same reason.
public final class ICEAgent {
    /// How an agent runs.
    public struct Configuration: Sendable {
        /// The initial role.
        public var role: ICERole
        /// Our ufrag and password.
        public var localCredentials: ICECredentials
        /// Our tie-breaker for role conflicts.
        public var tieBreaker: UInt64
        /// Local interface addresses, each with the port of its family's socket; the first of a family is preferred.
        public var hostAddresses: [SocketAddress]
        /// STUN servers to learn server-reflexive candidates from.
        public var stunServers: [SocketAddress]
        /// Ta: the interval between new transactions, 50 ms by default.
        public var pacingNs: UInt64 = 50_000_000
        /// The first retransmission timeout, 250 ms; it doubles up to ``maximumRetransmissionTimeoutNs``.
        public var initialRetransmissionTimeoutNs: UInt64 = 250_000_000
        /// The largest retransmission timeout, 2 s (so a check fails after about 9.75 s).
        public var maximumRetransmissionTimeoutNs: UInt64 = 2_000_000_000
        /// Transmissions of one request before it fails, 7.
        public var maximumTransmissions = 7
        /// Put USE-CANDIDATE on every check when controlling (aggressive nomination) instead of nominating the first
        /// pair that succeeds with a second check.
        public var aggressiveNomination = false
        /// The interval between consent checks, drawn uniformly from this range (RFC 7675 §5.1: 4–6 s).
        public var consentIntervalNs: ClosedRange<UInt64> = 4_000_000_000...6_000_000_000
        /// Consent is lost when no consent check got a response for this long, 30 s.
        public var consentTimeoutNs: UInt64 = 30_000_000_000
        /// Checking fails when no pair is selected this long after checks could start, 30 s.
        public var checkingTimeoutNs: UInt64 = 30_000_000_000
        /// Run as an ICE-lite agent (RFC 8445 §2.5): always controlled, sends no checks and no consent checks,
        /// answers checks and selects the pair the peer nominates as soon as the nominating request arrives.
        public var lite = false

        /// A configuration; the tie-breaker and credentials are random unless given.
        public init(
            role: ICERole = .controlling, localCredentials: ICECredentials = .random(),
            tieBreaker: UInt64 = UInt64.random(in: 0...UInt64.max), hostAddresses: [SocketAddress] = [],
            stunServers: [SocketAddress] = []
        ) {
            self.role = role
            self.localCredentials = localCredentials
            self.tieBreaker = tieBreaker
            self.hostAddresses = hostAddresses
            self.stunServers = stunServers
        }
    }

    /// What `handle(datagram:from:nowNs:)` did with a datagram.
    public enum Disposition: Sendable, Hashable, Codable {
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
        public var isConsumed: Bool { self != .notSTUN }
    }

    /// An outstanding request.
    private struct Transaction {
        enum Purpose {
            case check(remote: SocketAddress, useCandidate: Bool)
            case consent(remote: SocketAddress)
            case server(SocketAddress)
        }

        var purpose: Purpose
        var bytes: [UInt8]
        var destination: SocketAddress
        var firstSentNs: UInt64
        var deadlineNs: UInt64
        var timeoutNs: UInt64
        var transmissions: Int
    }

    /// The configuration as given.
    public let configuration: Configuration
    /// The current role (it changes after a role conflict).
    public private(set) var role: ICERole
    /// The connection state.
    public private(set) var state: ICEState = .new
    /// Local candidates: the host candidates, then any server-reflexive ones gathered.
    public private(set) var localCandidates: [ICECandidate]
    /// Remote candidates: signalled ones and peer-reflexive ones learned from checks.
    public private(set) var remoteCandidates: [ICECandidate] = []
    /// The peer's credentials, once set.
    public private(set) var remoteCredentials: ICECredentials?
    /// Counters.
    public private(set) var statistics = ICEStatistics()
    /// Whether the peer signalled end-of-candidates.
    public private(set) var remoteCandidatesComplete = false

    /// The check list, highest pair priority first.
    public private(set) var pairs: [ICECandidatePair] = []
    private var triggered: [(remote: SocketAddress, useCandidate: Bool)] = []
    private var transactions: [STUNTransactionID: Transaction] = [:]
    private var transmitQueue: [(bytes: [UInt8], destination: SocketAddress)] = []
    private var eventQueue: [ICEEvent] = []
    private var started = false
    private var pendingServers: [SocketAddress]
    private var gatheringReported = false
    private var lastPacedSendNs: UInt64?
    private var checkingStartNs: UInt64?
    private var firstCheckNs: UInt64?
    private var nominating: SocketAddress?
    private var selectedRemote: SocketAddress?
    private var nextConsentNs: UInt64 = 0
    private var lastConsentNs: UInt64 = 0
    private var generator = SystemRandomNumberGenerator()

    /// An agent in state ``ICEState/new``; it starts (gathering from STUN servers) on the first
    /// ``handleTimeout(nowNs:)``.
    public init(configuration: Configuration) {
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
        self.localCandidates = hosts
        self.pendingServers = configuration.stunServers
    }

    /// The selected pair, if any.
    public var selectedPair: ICECandidatePair? {
        guard let selectedRemote, let index = pairIndex(remote: selectedRemote) else { return nil }
        return pairs[index]
    }

    /// Whether media may be sent: a pair is selected and consent is fresh (state ``ICEState/connected``).
    public var canSendMedia: Bool { state == .connected && selectedRemote != nil }

    // MARK: Inputs

    /// Sets the peer's credentials (from its SDP). Checks start once there are also remote candidates.
    public func setRemote(credentials: ICECredentials) {
        remoteCredentials = credentials
    }

    /// Adds a remote candidate (signalled, possibly trickled). Unusable (TCP), non-RTP-component and duplicate
    /// candidates are ignored; returns whether it was added.
    @discardableResult
    public func addRemoteCandidate(_ candidate: ICECandidate) -> Bool {
        guard state != .closed, candidate.isUsable, candidate.component == 1 else { return false }
        if let index = remoteCandidates.firstIndex(where: { $0.address == candidate.address }) {
            // A signalled candidate replaces a peer-reflexive one learned first (RFC 8445 §7.3.1.3).
            guard remoteCandidates[index].kind == .prflx, candidate.kind != .prflx else { return false }
            remoteCandidates[index] = candidate
            if let pair = pairIndex(remote: candidate.address) { pairs[pair].remote = candidate }
            sortPairs()
            return true
        }
        remoteCandidates.append(candidate)
        addPair(remote: candidate)
        return true
    }

    /// The peer signalled end-of-candidates: when every pair has failed, the agent fails.
    public func endOfCandidates() {
        remoteCandidatesComplete = true
    }

    /// Stops the agent: no more transmissions or events but ``ICEState/closed``.
    public func close() {
        guard state != .closed else { return }
        transactions.removeAll()
        triggered.removeAll()
        transmitQueue.removeAll()
        setState(.closed)
    }

    /// Handles a datagram received on our socket from `source`. Returns ``Disposition/notSTUN`` for anything that
    /// is not STUN (route it by RFC 7983 instead); never traps on any input.
    @discardableResult
    public func handle(datagram: UnsafeRawBufferPointer, from source: SocketAddress, nowNs: UInt64) -> Disposition {
        guard STUNMessage.isSTUN(datagram) else { return .notSTUN }
        let message: STUNMessage
        do { message = try STUNMessage(parsing: datagram) } catch { return .malformed(error) }
        guard state != .closed, message.method == STUNMessage.binding else { return .dropped }
        switch message.messageClass {
        case .request: return handleRequest(message, bytes: datagram, source: source, nowNs: nowNs)
        case .successResponse, .errorResponse:
            return handleResponse(message, bytes: datagram, source: source, nowNs: nowNs)
        case .indication: return .dropped
        }
    }

    /// `handle(datagram:from:nowNs:)` for bytes in an array.
    @discardableResult
    public func handle(datagram: [UInt8], from source: SocketAddress, nowNs: UInt64) -> Disposition {
        datagram.withUnsafeBytes { handle(datagram: $0, from: source, nowNs: nowNs) }
    }

    // MARK: Outputs

    /// The next datagram to send and where, oldest first; `nil` when none is queued.
    public func pollTransmit() -> (bytes: [UInt8], destination: SocketAddress)? {
        transmitQueue.isEmpty ? nil : transmitQueue.removeFirst()
    }

    /// The next event, oldest first; `nil` when none is queued.
    public func pollEvent() -> ICEEvent? {
        eventQueue.isEmpty ? nil : eventQueue.removeFirst()
    }

    /// When ``handleTimeout(nowNs:)`` is next due (0: now, before the first call); `nil` when nothing is scheduled.
    public var nextTimeoutNs: UInt64? {
        guard state != .closed else { return nil }
        guard started else { return 0 }
        var next: UInt64?
        func consider(_ time: UInt64) { next = min(next ?? time, time) }
        for transaction in transactions.values { consider(transaction.deadlineNs) }
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
    public func handleTimeout(nowNs: UInt64) {
        guard state != .closed else { return }
        started = true
        retransmit(nowNs: nowNs)
        if state == .new, remoteCredentials != nil, !pairs.isEmpty {
            checkingStartNs = nowNs
            setState(.checking)
        }
        if state == .connected, selectedRemote != nil, !configuration.lite {
            if nowNs >= lastConsentNs + configuration.consentTimeoutNs {
                setState(.disconnected)
            } else if nowNs >= nextConsentNs, let remote = selectedRemote {
                sendConsent(to: remote, nowNs: nowNs)
            }
        }
        if hasPacedWork, nowNs >= lastPacedSendNs.map({ $0 + configuration.pacingNs }) ?? 0 {
            if sendPaced(nowNs: nowNs) { lastPacedSendNs = nowNs }
        }
        if state == .checking, selectedRemote == nil {
            let allFailed = pairs.allSatisfy { $0.state == .failed } && triggered.isEmpty
            let timedOut = checkingStartNs.map { nowNs >= $0 + configuration.checkingTimeoutNs } ?? false
            if (remoteCandidatesComplete && allFailed && !pairs.isEmpty) || timedOut { setState(.failed) }
        }
    }

    // MARK: Requests from the peer

    private func handleRequest(
        _ message: STUNMessage, bytes: UnsafeRawBufferPointer, source: SocketAddress, nowNs: UInt64
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
            sendError(401, reason: "Unauthorized", to: message, destination: source)
            return .rejected
        }
        guard
            STUNMessageIntegrity.verifyIntegrity(bytes, key: STUNMessageIntegrity.key(password: local.password))
                == .valid
        else {
            statistics.integrityFailures += 1
            sendError(401, reason: "Unauthorized", to: message, destination: source)
            return .rejected
        }
        // RFC 8445 §7.3.1.1: the larger tie-breaker is controlling.
        if role == .controlling, let theirs = message.iceControlling {
            statistics.roleConflicts += 1
            if configuration.tieBreaker >= theirs {
                sendError(487, reason: "Role Conflict", to: message, destination: source, signed: true)
                return .rejected
            }
            switchRole(to: .controlled)
        } else if role == .controlled, let theirs = message.iceControlled {
            statistics.roleConflicts += 1
            if configuration.tieBreaker >= theirs && !configuration.lite {
                switchRole(to: .controlling)
            } else {
                sendError(487, reason: "Role Conflict", to: message, destination: source, signed: true)
                return .rejected
            }
        }
        let response = STUNMessage(
            .successResponse, transactionID: message.transactionID, attributes: [.xorMappedAddress(source)])
        transmitQueue.append(
            (
                response.serialized(
                    integrityKey: STUNMessageIntegrity.key(password: local.password), fingerprint: true),
                source
            ))

        if !remoteCandidates.contains(where: { $0.address == source }) {
            // RFC 8445 §7.3.1.3: a peer-reflexive remote candidate, with the priority the peer computed for it.
            let candidate = ICECandidate(
                foundation: ICECandidate.foundation(kind: .prflx, base: source),
                priority: message.priority ?? ICECandidate.priority(kind: .prflx, localPreference: 65535),
                address: source, kind: .prflx)
            remoteCandidates.append(candidate)
            statistics.peerReflexiveCandidates += 1
            addPair(remote: candidate)
        }
        guard let index = pairIndex(remote: source) else { return .answered }
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
            if !triggered.contains(where: { $0.remote == source }) { triggered.append((source, false)) }
        case .inProgress:
            break
        case .succeeded:
            if role == .controlled && pairs[index].nominated { select(index, nowNs: nowNs) }
        }
        return .answered
    }

    private func sendError(
        _ code: Int, reason: String, to request: STUNMessage, destination: SocketAddress, signed: Bool = false
    ) {
        let response = STUNMessage(
            .errorResponse, transactionID: request.transactionID,
            attributes: [.errorCode(code: code, reason: reason)])
        let key = signed ? STUNMessageIntegrity.key(password: configuration.localCredentials.password) : nil
        transmitQueue.append((response.serialized(integrityKey: key, fingerprint: true), destination))
        statistics.errorResponsesSent += 1
    }

    // MARK: Responses to our requests

    private func handleResponse(
        _ message: STUNMessage, bytes: UnsafeRawBufferPointer, source: SocketAddress, nowNs: UInt64
    ) -> Disposition {
        guard let transaction = transactions[message.transactionID] else { return .dropped }
        if case .server(let server) = transaction.purpose {
            // A STUN server does not authenticate short-term: a FINGERPRINT, if any, must be right.
            guard source == server, STUNMessageIntegrity.verifyFingerprint(bytes) != .invalid else { return .dropped }
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
        case .consent(let remote):
            if message.messageClass == .successResponse, source == remote, state == .connected {
                statistics.consentResponsesReceived += 1
                statistics.lastRoundTripMs = Double(nowNs &- transaction.firstSentNs) / 1e6
                lastConsentNs = nowNs
            }
            return .response
        case .check(let remote, let useCandidate):
            handleCheckResponse(
                message, source: source, remote: remote, useCandidate: useCandidate, sentNs: transaction.firstSentNs,
                nowNs: nowNs)
            return .response
        }
    }

    private func handleCheckResponse(
        _ message: STUNMessage, source: SocketAddress, remote: SocketAddress, useCandidate: Bool, sentNs: UInt64,
        nowNs: UInt64
    ) {
        guard let index = pairIndex(remote: remote) else { return }
        if nominating == remote { nominating = nil }
        if message.messageClass == .errorResponse {
            if message.errorCode == 487 {
                // RFC 8445 §7.2.5.1: take the other role than the one the request was sent in, and check again.
                statistics.roleConflicts += 1
                switchRole(to: role == .controlling ? .controlled : .controlling)
                if pairs[index].state != .succeeded { pairs[index].state = .waiting }
                triggered.append((remote, false))
            } else {
                failCheck(index)
            }
            return
        }
        // RFC 8445 §7.2.5.2.1: the response must come from where the request went.
        guard source == remote else {
            failCheck(index)
            return
        }
        statistics.successes += 1
        statistics.lastRoundTripMs = Double(nowNs &- sentNs) / 1e6
        pairs[index].state = .succeeded
        if state == .failed {
            // A late triggered check got through: back to checking, with a fresh timeout.
            checkingStartNs = nowNs
            setState(.checking)
        }
        if let mapped = message.mappedAddress,
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

    private func reportGatheringIfComplete() {
        guard !gatheringReported, pendingServers.isEmpty else { return }
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
        guard selectedRemote == nil, state != .new else { return false }
        if needsNomination { return true }
        return pairs.contains { $0.state == .waiting }
    }

    /// Controlling, regular nomination: a pair succeeded, none is selected or being nominated.
    private var needsNomination: Bool {
        role == .controlling && !configuration.aggressiveNomination && selectedRemote == nil && nominating == nil
            && pairs.contains { $0.state == .succeeded }
    }

    /// Sends one new transaction if there is one to send; returns whether it did.
    private func sendPaced(nowNs: UInt64) -> Bool {
        if !pendingServers.isEmpty {
            let server = pendingServers.removeFirst()
            let request = STUNMessage(.request)
            let bytes = request.serialized(fingerprint: true)
            start(Transaction.Purpose.server(server), id: request.transactionID, bytes: bytes, to: server, nowNs: nowNs)
            return true
        }
        guard remoteCredentials != nil, !configuration.lite, state != .new || !triggered.isEmpty else { return false }
        while !triggered.isEmpty {
            let next = triggered.removeFirst()
            guard let index = pairIndex(remote: next.remote), pairs[index].state != .inProgress else { continue }
            sendCheck(index, useCandidate: next.useCandidate, nowNs: nowNs)
            return true
        }
        guard selectedRemote == nil, state != .failed else { return false }
        if needsNomination, let index = pairs.firstIndex(where: { $0.state == .succeeded }) {
            nominating = pairs[index].remote.address
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
        let remote = pairs[index].remote.address
        if pairs[index].state != .succeeded { pairs[index].state = .inProgress }
        if nominate { nominating = remote }
        statistics.checksSent += 1
        if firstCheckNs == nil { firstCheckNs = nowNs }
        start(
            .check(remote: remote, useCandidate: nominate), id: request.id, bytes: request.bytes, to: remote,
            nowNs: nowNs)
    }

    private func sendConsent(to remote: SocketAddress, nowNs: UInt64) {
        guard let index = pairIndex(remote: remote) else { return }
        let request = bindingRequest(for: pairs[index], useCandidate: false)
        statistics.consentRequestsSent += 1
        start(.consent(remote: remote), id: request.id, bytes: request.bytes, to: remote, nowNs: nowNs)
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
        _ purpose: Transaction.Purpose, id: STUNTransactionID, bytes: [UInt8], to destination: SocketAddress,
        nowNs: UInt64
    ) {
        let timeout = configuration.initialRetransmissionTimeoutNs
        transactions[id] = Transaction(
            purpose: purpose, bytes: bytes, destination: destination, firstSentNs: nowNs, deadlineNs: nowNs + timeout,
            timeoutNs: timeout, transmissions: 1)
        transmitQueue.append((bytes, destination))
    }

    private func retransmit(nowNs: UInt64) {
        for (id, transaction) in transactions where transaction.deadlineNs <= nowNs {
            guard transaction.transmissions < configuration.maximumTransmissions else {
                transactions[id] = nil
                timedOut(transaction)
                continue
            }
            var next = transaction
            next.transmissions += 1
            next.timeoutNs = min(next.timeoutNs * 2, configuration.maximumRetransmissionTimeoutNs)
            next.deadlineNs = nowNs + next.timeoutNs
            transactions[id] = next
            transmitQueue.append((next.bytes, next.destination))
            statistics.retransmissions += 1
        }
    }

    private func timedOut(_ transaction: Transaction) {
        switch transaction.purpose {
        case .check(let remote, _):
            if nominating == remote { nominating = nil }
            if let index = pairIndex(remote: remote) { failCheck(index) }
        case .server:
            reportGatheringIfComplete()
        case .consent:
            break  // Consent expiry is measured from the last response, not per request.
        }
    }

    // MARK: Pairs, selection, state

    private func hostCandidate(family: SocketAddress.Family) -> ICECandidate? {
        localCandidates.first { $0.kind == .host && $0.address.family == family }
    }

    private func pairIndex(remote: SocketAddress) -> Int? {
        pairs.firstIndex { $0.remote.address == remote }
    }

    private func addPair(remote: ICECandidate) {
        guard let local = hostCandidate(family: remote.address.family), pairIndex(remote: remote.address) == nil else {
            return
        }
        pairs.append(ICECandidatePair(local: local, remote: remote))
        sortPairs()
    }

    private func sortPairs() {
        let role = self.role
        pairs.sort { left, right in
            let (l, r) = (left.priority(role: role), right.priority(role: role))
            return l != r ? l > r : left.remote.address.description < right.remote.address.description
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
        let remote = pairs[index].remote.address
        if let current = selectedRemote, let currentIndex = pairIndex(remote: current) {
            // Controlled, aggressive peer: keep the highest-priority nominated pair.
            guard current != remote, pairs[index].priority(role: role) > pairs[currentIndex].priority(role: role) else {
                return
            }
        }
        selectedRemote = remote
        statistics.selectedPair = pairs[index]
        if statistics.timeToConnectedMs == nil, let firstCheckNs = firstCheckNs ?? checkingStartNs {
            statistics.timeToConnectedMs = Double(nowNs &- firstCheckNs) / 1e6
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
