package import CaptureNet

/// A sans-IO TURN client allocation (RFC 8656, UDP to the server, UDP relayed): one relayed transport address on one
/// server, with the permissions and channels that let peers reach it.
///
/// Like `ICEAgent` it owns no socket, thread or clock: whoever owns the socket the server is reached on sends what
/// ``pollTransmit()`` returns to ``server``'s address, hands every datagram from that address to
/// ``handle(_:nowNs:)``, and calls ``handleTimeout(nowNs:)`` when ``nextTimeoutNs`` is due.
///
/// - ``start(nowNs:)`` sends Allocate with REQUESTED-TRANSPORT UDP; the server's 401 gives REALM and NONCE, and the
///   request is sent again with USERNAME, REALM, NONCE and MESSAGE-INTEGRITY under the long-term key
///   MD5(username:realm:password) (RFC 8489 §9.2). A 438 (stale nonce) is retried with the new nonce; a 401 to a
///   request that carried credentials fails the allocation with ``TURNError/Code/unauthorized``.
/// - Once allocated (``relayedAddress``, ``mappedAddress``, ``lifetimeSeconds``) it refreshes a minute before expiry
///   and ``close(nowNs:)`` releases it with LIFETIME 0.
/// - ``addPermission(for:)`` installs a permission for a peer's IP address (CreatePermission), refreshed every
///   ``Timing/permissionRefreshNs`` (4 minutes; they last 5); ``bindChannel(to:)`` binds a channel number
///   0x4000–0x4FFF (ChannelBind, refreshed every ``Timing/channelRefreshNs``). Datagrams to a peer go as ChannelData
///   once its channel is bound, as Send indications before (``wrap(_:to:)``).
/// - Data indications and ChannelData from the server come back from ``handle(_:nowNs:)`` as
///   ``Input/data(peer:payload:)``: the peer's address and where its datagram lies in the bytes given (no copy).
///
/// Never traps on what the server sends: anything malformed or unexpected is counted and dropped. Not thread-safe and
/// not `Sendable`: used by one thread at a time (the ICE agent that owns it).
package final class TURNAllocation {
    /// Timers and limits.
    package struct Timing: Sendable {
        /// The first retransmission timeout, 250 ms; it doubles up to ``maximumRetransmissionTimeoutNs``.
        package var initialRetransmissionTimeoutNs: UInt64 = 250_000_000
        /// The largest retransmission timeout, 2 s.
        package var maximumRetransmissionTimeoutNs: UInt64 = 2_000_000_000
        /// Transmissions of one request before it fails, 7 (about 9.75 s with the defaults).
        package var maximumTransmissions = 7
        /// The lifetime asked for in Allocate, 600 s (the server may grant less).
        package var requestedLifetimeSeconds: UInt32 = 600
        /// How often a permission is renewed, 4 minutes (they expire after 5, RFC 8656 §9).
        package var permissionRefreshNs: UInt64 = 240_000_000_000
        /// How often a channel binding is renewed, 9 minutes (they expire after 10, RFC 8656 §12).
        package var channelRefreshNs: UInt64 = 540_000_000_000

        /// The defaults.
        package init() {}
    }

    /// What ``handle(_:nowNs:)`` found in a datagram from the server.
    package enum Input: Sendable, Hashable {
        /// A response or other message for the allocation itself: consumed.
        case consumed
        /// Malformed, unexpected, or failing its integrity check: counted and dropped.
        case dropped
        /// A datagram from `peer` (a Data indication or ChannelData): its bytes are `payload` within the input.
        case data(peer: SocketAddress, payload: Range<Int>)
    }

    private enum Request {
        case allocate
        case refresh(lifetime: UInt32)
        case createPermission([SocketAddress])
        case channelBind(channel: UInt16, peer: SocketAddress)

        var method: UInt16 {
            switch self {
            case .allocate: TURNMethod.allocate
            case .refresh: TURNMethod.refresh
            case .createPermission: TURNMethod.createPermission
            case .channelBind: TURNMethod.channelBind
            }
        }

        var name: String {
            switch self {
            case .allocate: "Allocate"
            case .refresh: "Refresh"
            case .createPermission: "CreatePermission"
            case .channelBind: "ChannelBind"
            }
        }

        var attributes: [STUNAttribute] {
            switch self {
            case .allocate: [.requestedTransport(17)]
            case .refresh(let lifetime): [.lifetime(lifetime)]
            case .createPermission(let peers): peers.map { .xorPeerAddress($0) }
            case .channelBind(let channel, let peer): [.channelNumber(channel), .xorPeerAddress(peer)]
            }
        }
    }

    private struct Transaction {
        var request: Request
        var bytes: [UInt8]
        var authenticated: Bool
        var schedule: STUNRetransmission
        var nonceRetries: Int
    }

    /// A permission or channel: pending until its request succeeds, renewed at `renewNs`.
    private struct Grant {
        var requested = false
        var granted = false
        var renewNs: UInt64 = 0
    }

    /// The server.
    package let server: TURNServer
    /// The timers.
    package let timing: Timing
    /// The state.
    package private(set) var state: TURNAllocationState = .new
    /// The relayed transport address, once allocated.
    package private(set) var relayedAddress: SocketAddress?
    /// Our address as the server saw it (XOR-MAPPED-ADDRESS of the Allocate response), once allocated.
    package private(set) var mappedAddress: SocketAddress?
    /// The lifetime the server granted last, in seconds.
    package private(set) var lifetimeSeconds: UInt32?
    /// Why the allocation failed, or the last operation on it did.
    package private(set) var lastError: TURNError?

    private var counters: TURNAllocationStatistics
    private var realm: String?
    private var nonce: String?
    private var key: [UInt8]?
    private var transactions: [STUNTransactionID: Transaction] = [:]
    private var transmitQueue: [[UInt8]] = []
    private var refreshNs: UInt64?
    /// Permissions by the peer's IP address (text), each installed for one representative address.
    private var permissions: [String: (peer: SocketAddress, grant: Grant)] = [:]
    private var channels: [SocketAddress: (number: UInt16, grant: Grant)] = [:]
    private var peersByChannel: [UInt16: SocketAddress] = [:]
    private var nextChannel: UInt16 = 0x4000

    /// The first and last channel numbers (RFC 8656 §12).
    package static let channelNumbers: ClosedRange<UInt16> = 0x4000...0x4FFF

    /// An allocation on `server`, not started.
    package init(server: TURNServer, timing: Timing = Timing()) {
        self.server = server
        self.timing = timing
        self.counters = TURNAllocationStatistics(server: server.name)
    }

    /// The figures so far.
    package var statistics: TURNAllocationStatistics {
        var figures = counters
        figures.state = state
        figures.relayedAddress = relayedAddress
        figures.mappedAddress = mappedAddress
        figures.lifetimeSeconds = lifetimeSeconds
        figures.lastError = lastError
        return figures
    }

    // MARK: Inputs

    /// Sends the first Allocate (without credentials: the server's 401 tells the realm and nonce).
    package func start(nowNs: UInt64) {
        guard state == .new else { return }
        state = .allocating
        send(.allocate, nowNs: nowNs)
    }

    /// Asks for a permission for `peer`'s IP address (sent once allocated, then renewed). Idempotent.
    package func addPermission(for peer: SocketAddress) {
        guard state != .failed, state != .closed, permissions[peer.host] == nil else { return }
        permissions[peer.host] = (peer, Grant())
    }

    /// Asks for a channel to `peer` (sent once allocated, then renewed); also installs its permission. Idempotent;
    /// does nothing once every channel number is taken.
    package func bindChannel(to peer: SocketAddress) {
        guard state != .failed, state != .closed, channels[peer] == nil, Self.channelNumbers.contains(nextChannel)
        else { return }
        channels[peer] = (nextChannel, Grant())
        peersByChannel[nextChannel] = peer
        nextChannel += 1
    }

    /// The channel bound to `peer`, once the server confirmed it.
    package func boundChannel(to peer: SocketAddress) -> UInt16? {
        guard let channel = channels[peer], channel.grant.granted else { return nil }
        return channel.number
    }

    /// Handles a datagram from the server. Never traps on any input.
    package func handle(_ datagram: UnsafeRawBufferPointer, nowNs: UInt64) -> Input {
        guard state != .closed else { return .dropped }
        if let first = datagram.first, (0x40...0x4F).contains(first) {
            return channelData(datagram)
        }
        let message: STUNMessage
        do { message = try STUNMessage(parsing: datagram) } catch { return drop() }
        switch message.messageClass {
        case .indication:
            return dataIndication(message, bytes: datagram)
        case .successResponse, .errorResponse:
            guard let transaction = transactions[message.transactionID], message.method == transaction.request.method
            else { return drop() }
            if message.messageClass == .successResponse {
                guard let key, STUNMessageIntegrity.verifyIntegrity(datagram, key: key) == .valid else {
                    // Unverifiable: ignored, so a retransmission may still get a genuine answer.
                    return drop()
                }
                transactions[message.transactionID] = nil
                succeeded(transaction.request, message, nowNs: nowNs)
            } else {
                transactions[message.transactionID] = nil
                failed(transaction, message, nowNs: nowNs)
            }
            return .consumed
        case .request:
            return drop()
        }
    }

    /// `handle(_:nowNs:)` for bytes in an array.
    package func handle(_ datagram: [UInt8], nowNs: UInt64) -> Input {
        datagram.withUnsafeBytes { handle($0, nowNs: nowNs) }
    }

    /// Runs retransmissions and timeouts, and sends the refreshes, permissions and channel bindings due.
    package func handleTimeout(nowNs: UInt64) {
        guard state == .allocating || state == .allocated else { return }
        retransmit(nowNs: nowNs)
        guard state == .allocated else { return }
        if let refreshNs, nowNs >= refreshNs {
            self.refreshNs = nil
            send(.refresh(lifetime: timing.requestedLifetimeSeconds), nowNs: nowNs)
        }
        var due: [SocketAddress] = []
        for (host, permission) in permissions where !permission.grant.requested && nowNs >= permission.grant.renewNs {
            permissions[host]?.grant.requested = true
            due.append(permission.peer)
        }
        if !due.isEmpty { send(.createPermission(due), nowNs: nowNs) }
        for (peer, channel) in channels where !channel.grant.requested && nowNs >= channel.grant.renewNs {
            channels[peer]?.grant.requested = true
            send(.channelBind(channel: channel.number, peer: peer), nowNs: nowNs)
        }
    }

    /// Releases the allocation (Refresh with LIFETIME 0, sent once) if there is one; nothing is sent afterwards.
    package func close(nowNs: UInt64) {
        let wasAllocated = state == .allocated
        transactions.removeAll()
        if wasAllocated {
            let id = STUNTransactionID.random()
            transmitQueue.append(serialize(.refresh(lifetime: 0), id: id))
            counters.requestsSent += 1
        }
        if state != .failed { state = .closed }
    }

    // MARK: Outputs

    /// The next datagram for the server, oldest first; `nil` when none is queued.
    package func pollTransmit() -> [UInt8]? {
        transmitQueue.isEmpty ? nil : transmitQueue.removeFirst()
    }

    /// When ``handleTimeout(nowNs:)`` is next due; `nil` when nothing is scheduled.
    package var nextTimeoutNs: UInt64? {
        guard state == .allocating || state == .allocated else { return nil }
        var next: UInt64?
        func consider(_ time: UInt64) { next = min(next ?? time, time) }
        for transaction in transactions.values { consider(transaction.schedule.deadlineNs) }
        guard state == .allocated else { return next }
        if let refreshNs { consider(refreshNs) }
        for permission in permissions.values where !permission.grant.requested { consider(permission.grant.renewNs) }
        for channel in channels.values where !channel.grant.requested { consider(channel.grant.renewNs) }
        return next
    }

    /// `payload` for `peer`, framed for the server: ChannelData once the peer's channel is bound, a Send indication
    /// (XOR-PEER-ADDRESS and DATA) before. Send to ``server``'s address.
    package func wrap(_ payload: [UInt8], to peer: SocketAddress) -> [UInt8] {
        counters.datagramsSent += 1
        if let channel = boundChannel(to: peer) {
            var bytes = [UInt8](repeating: 0, count: payload.count + 4)
            _ = bytes.withUnsafeMutableBytes { buffer in
                payload.withUnsafeBytes { Self.frameChannelData(channel: channel, payload: $0, into: buffer) }
            }
            return bytes
        }
        let indication = STUNMessage(
            .indication, method: TURNMethod.send, attributes: [.xorPeerAddress(peer), .data(payload)])
        return indication.serialized()
    }

    /// Writes ChannelData (RFC 8656 §12.4: channel number, length, the datagram; no padding over UDP) into `buffer`;
    /// returns the byte count, or `nil` when it does not fit or the payload is longer than 65535 bytes.
    package static func frameChannelData(
        channel: UInt16, payload: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int? {
        let total = payload.count + 4
        guard payload.count <= 0xFFFF, total <= buffer.count else { return nil }
        buffer[0] = UInt8(truncatingIfNeeded: channel >> 8)
        buffer[1] = UInt8(truncatingIfNeeded: channel)
        buffer[2] = UInt8(truncatingIfNeeded: payload.count >> 8)
        buffer[3] = UInt8(truncatingIfNeeded: payload.count)
        if let source = payload.baseAddress, let destination = buffer.baseAddress {
            (destination + 4).copyMemory(from: source, byteCount: payload.count)
        }
        return total
    }

    /// Reads a ChannelData header (RFC 8656 §12.4): the channel number and where its datagram lies in `datagram`;
    /// `nil` when the bytes are shorter than the header or than the length it declares.
    package static func parseChannelData(_ datagram: UnsafeRawBufferPointer) -> (channel: UInt16, payload: Range<Int>)?
    {
        guard let channel = channelNumber(datagram) else { return nil }
        let length = Int(datagram[2]) << 8 | Int(datagram[3])
        guard 4 + length <= datagram.count else { return nil }
        return (channel, 4..<(4 + length))
    }

    /// The channel number a ChannelData header starts with, whatever length it declares; `nil` when the bytes are
    /// shorter than a header.
    package static func channelNumber(_ datagram: UnsafeRawBufferPointer) -> UInt16? {
        guard datagram.count >= 4 else { return nil }
        return UInt16(datagram[0]) << 8 | UInt16(datagram[1])
    }

    // MARK: Received messages

    private func drop() -> Input {
        counters.dropped += 1
        return .dropped
    }

    private func channelData(_ datagram: UnsafeRawBufferPointer) -> Input {
        guard let (channel, payload) = Self.parseChannelData(datagram), let peer = peersByChannel[channel] else {
            return drop()
        }
        counters.datagramsReceived += 1
        return .data(peer: peer, payload: payload)
    }

    private func dataIndication(_ message: STUNMessage, bytes: UnsafeRawBufferPointer) -> Input {
        guard message.method == TURNMethod.data, state == .allocated,
            let peer = message.first({ if case .xorPeerAddress(let address) = $0 { address } else { nil } }),
            let offset = STUNMessageIntegrity.attributeOffset(STUNAttribute.Code.data, in: bytes)
        else { return drop() }
        // The message parsed, so the attribute's declared length lies within the bytes.
        let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        guard offset + 4 + length <= bytes.count else { return drop() }
        counters.datagramsReceived += 1
        return .data(peer: peer, payload: (offset + 4)..<(offset + 4 + length))
    }

    private func succeeded(_ request: Request, _ message: STUNMessage, nowNs: UInt64) {
        switch request {
        case .allocate:
            guard state == .allocating else { return }
            guard
                let relayed = message.first({
                    if case .xorRelayedAddress(let address) = $0 { address } else { nil }
                })
            else {
                fail(TURNError(.malformedResponse, server: server.name, "Allocate success without XOR-RELAYED-ADDRESS"))
                return
            }
            relayedAddress = relayed
            mappedAddress = message.mappedAddress
            granted(lifetime: message.lifetime ?? timing.requestedLifetimeSeconds, nowNs: nowNs)
            state = .allocated
        case .refresh(let lifetime):
            guard lifetime > 0, state == .allocated else { return }
            counters.refreshes += 1
            granted(lifetime: message.lifetime ?? lifetime, nowNs: nowNs)
        case .createPermission(let peers):
            for peer in peers where permissions[peer.host] != nil {
                permissions[peer.host]?.grant = Grant(
                    requested: false, granted: true, renewNs: nowNs + timing.permissionRefreshNs)
                counters.permissionsInstalled += 1
            }
        case .channelBind(_, let peer):
            guard channels[peer] != nil else { return }
            channels[peer]?.grant = Grant(requested: false, granted: true, renewNs: nowNs + timing.channelRefreshNs)
            counters.channelsBound += 1
        }
    }

    /// Schedules the refresh a minute before expiry (half-way for lifetimes of two minutes or less).
    private func granted(lifetime: UInt32, nowNs: UInt64) {
        lifetimeSeconds = lifetime
        let lifetimeNs = UInt64(lifetime) * 1_000_000_000
        refreshNs = nowNs + (lifetime > 120 ? lifetimeNs - 60_000_000_000 : lifetimeNs / 2)
    }

    private func failed(_ transaction: Transaction, _ message: STUNMessage, nowNs: UInt64) {
        counters.errorResponses += 1
        let code = message.errorCode ?? 0
        let reason = message.first { if case .errorCode(_, let reason) = $0 { reason } else { nil } } ?? ""
        if code == 401 && !transaction.authenticated || code == 438 && transaction.nonceRetries < 3 {
            guard let nonce = message.nonce, let realm = message.realm ?? self.realm else {
                fail(TURNError(.malformedResponse, server: server.name, errorCode: code, "\(code) without REALM/NONCE"))
                return
            }
            if code == 438 { counters.staleNonces += 1 }
            self.nonce = nonce
            if realm != self.realm || key == nil {
                self.realm = realm
                key = STUNMessageIntegrity.key(username: server.username, realm: realm, password: server.password)
            }
            send(transaction.request, nowNs: nowNs, nonceRetries: transaction.nonceRetries + (code == 438 ? 1 : 0))
            return
        }
        let error = TURNError(
            code == 401 ? .unauthorized : .rejected, server: server.name, errorCode: code,
            code == 401 ? "credentials refused for user \(server.username)" : reason)
        switch transaction.request {
        case .allocate, .refresh:
            fail(error)
        case .createPermission(let peers):
            lastError = error
            for peer in peers { permissions[peer.host] = nil }
        case .channelBind(let channel, let peer):
            lastError = error
            channels[peer] = nil
            peersByChannel[channel] = nil
        }
    }

    private func fail(_ error: TURNError) {
        lastError = error
        state = .failed
        transactions.removeAll()
        refreshNs = nil
    }

    // MARK: Sending

    private func send(_ request: Request, nowNs: UInt64, nonceRetries: Int = 0) {
        let id = STUNTransactionID.random()
        let bytes = serialize(request, id: id)
        transactions[id] = Transaction(
            request: request, bytes: bytes, authenticated: key != nil,
            schedule: STUNRetransmission(sentAtNs: nowNs, initialTimeoutNs: timing.initialRetransmissionTimeoutNs),
            nonceRetries: nonceRetries)
        transmitQueue.append(bytes)
        counters.requestsSent += 1
    }

    /// The request's bytes: its attributes, the long-term credentials once known, FINGERPRINT.
    private func serialize(_ request: Request, id: STUNTransactionID) -> [UInt8] {
        var attributes = request.attributes
        if key != nil, let realm, let nonce {
            attributes += [.username(server.username), .realm(realm), .nonce(nonce)]
        }
        let message = STUNMessage(.request, method: request.method, transactionID: id, attributes: attributes)
        return message.serialized(integrityKey: key, fingerprint: true)
    }

    private func retransmit(nowNs: UInt64) {
        for (id, transaction) in transactions where transaction.schedule.isDue(atNs: nowNs) {
            var next = transaction
            guard
                next.schedule.retransmit(
                    atNs: nowNs, maximumTimeoutNs: timing.maximumRetransmissionTimeoutNs,
                    maximumTransmissions: timing.maximumTransmissions)
            else {
                transactions[id] = nil
                timedOut(transaction.request, nowNs: nowNs)
                continue
            }
            transactions[id] = next
            transmitQueue.append(next.bytes)
            counters.retransmissions += 1
        }
    }

    private func timedOut(_ request: Request, nowNs: UInt64) {
        let error = TURNError(.timeout, server: server.name, "no answer to \(request.name)")
        switch request {
        case .allocate, .refresh:
            fail(error)
        case .createPermission(let peers):
            // Tried again a little later.
            lastError = error
            for peer in peers { permissions[peer.host]?.grant = Grant(renewNs: nowNs + 5_000_000_000) }
        case .channelBind(_, let peer):
            lastError = error
            channels[peer]?.grant = Grant(renewNs: nowNs + 5_000_000_000)
        }
    }
}
