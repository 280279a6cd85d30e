import CaptureICE
import CaptureNet
import Testing

/// The sans-IO TURN allocation against a scripted server: the long-term credential challenge, stale nonces, refresh,
/// permissions and channels, timeouts, and hostile responses.
@Suite struct TURNAllocationTests {
    static let serverAddress = SocketAddress.loopbackIPv4(port: 3478)
    static let relayed = SocketAddress.loopbackIPv4(port: 50_000)
    static let mapped = SocketAddress.loopbackIPv4(port: 40_000)
    static let peer = SocketAddress.loopbackIPv4(port: 60_000)
    static let server = TURNServer(address: serverAddress, username: "u", password: "p", name: "turn:test")
    static let key = STUNMessageIntegrity.key(username: "u", realm: "test", password: "p")

    static func request(_ allocation: TURNAllocation) throws -> STUNMessage {
        let bytes = try #require(allocation.pollTransmit())
        return try STUNMessage(parsing: bytes)
    }

    static func challenge(_ request: STUNMessage, code: Int = 401, nonce: String = "n1") -> [UInt8] {
        STUNMessage(
            .errorResponse, method: request.method, transactionID: request.transactionID,
            attributes: [.errorCode(code: code, reason: "Unauthorized"), .realm("test"), .nonce(nonce)]
        ).serialized()
    }

    static func success(_ request: STUNMessage, _ attributes: [STUNAttribute], key: [UInt8]? = Self.key) -> [UInt8] {
        STUNMessage(
            .successResponse, method: request.method, transactionID: request.transactionID, attributes: attributes
        )
        .serialized(integrityKey: key, fingerprint: true)
    }

    /// An allocation taken through the 401 challenge to allocated.
    static func allocated() throws -> TURNAllocation {
        let allocation = TURNAllocation(server: server)
        allocation.start(nowNs: 0)
        let first = try request(allocation)
        #expect(allocation.handle(challenge(first), nowNs: 1) == .consumed)
        let second = try request(allocation)
        let ok = success(
            second, [.xorRelayedAddress(relayed), .xorMappedAddress(mapped), .lifetime(600)])
        #expect(allocation.handle(ok, nowNs: 2) == .consumed)
        return allocation
    }

    @Test func longTermKeyIsMD5OfUsernameRealmPassword() {
        // md5("u:test:p")
        let expected: [UInt8] = [
            0x5c, 0x81, 0x57, 0xfd, 0x8e, 0xf5, 0xf6, 0xb5, 0x66, 0x29, 0xb7, 0x39, 0x9d, 0x83, 0xce, 0x25,
        ]
        #expect(Self.key == expected)
    }

    @Test func challengeThenAllocateWithCredentials() throws {
        let allocation = TURNAllocation(server: Self.server)
        allocation.start(nowNs: 0)
        let first = try Self.request(allocation)
        #expect(first.method == TURNMethod.allocate)
        #expect(first.attributes.contains(.requestedTransport(17)))
        #expect(first.username == nil)
        #expect(allocation.handle(Self.challenge(first), nowNs: 1) == .consumed)
        let bytes = try #require(allocation.pollTransmit())
        let second = try STUNMessage(parsing: bytes)
        #expect(second.username == "u")
        #expect(second.realm == "test")
        #expect(second.nonce == "n1")
        #expect(bytes.withUnsafeBytes { STUNMessageIntegrity.verifyIntegrity($0, key: Self.key) } == .valid)
        let ok = Self.success(
            second, [.xorRelayedAddress(Self.relayed), .xorMappedAddress(Self.mapped), .lifetime(300)])
        #expect(allocation.handle(ok, nowNs: 2) == .consumed)
        #expect(allocation.state == .allocated)
        #expect(allocation.relayedAddress == Self.relayed)
        #expect(allocation.mappedAddress == Self.mapped)
        #expect(allocation.lifetimeSeconds == 300)
        // Refresh a minute before expiry; a stale nonce is retried with the new one.
        // Unwrapped first: comparing the UInt64? with a sum inside #expect trips AddressSanitizer in the compiler's
        // AnyHashable thunk (an 8-byte slot read as the 9-byte optional: a stack-buffer-overflow in a dry run).
        let refreshAt = try #require(allocation.nextTimeoutNs)
        #expect(refreshAt == 2 + 240_000_000_000)
        allocation.handleTimeout(nowNs: 2 + 240_000_000_000)
        let refresh = try Self.request(allocation)
        #expect(refresh.method == TURNMethod.refresh)
        #expect(allocation.handle(Self.challenge(refresh, code: 438, nonce: "n2"), nowNs: 3) == .consumed)
        let retried = try Self.request(allocation)
        #expect(retried.method == TURNMethod.refresh)
        #expect(retried.nonce == "n2")
        #expect(allocation.statistics.staleNonces == 1)
        #expect(allocation.handle(Self.success(retried, [.lifetime(600)]), nowNs: 4) == .consumed)
        #expect(allocation.statistics.refreshes == 1)
        allocation.close(nowNs: 5)
        let release = try Self.request(allocation)
        #expect(release.method == TURNMethod.refresh)
        #expect(release.lifetime == 0)
        #expect(allocation.state == .closed)
    }

    @Test func wrongCredentialsAreATypedError() throws {
        let allocation = TURNAllocation(server: Self.server)
        allocation.start(nowNs: 0)
        _ = allocation.handle(Self.challenge(try Self.request(allocation)), nowNs: 1)
        _ = allocation.handle(Self.challenge(try Self.request(allocation)), nowNs: 2)
        #expect(allocation.state == .failed)
        #expect(allocation.lastError?.code == .unauthorized)
        #expect(allocation.lastError?.server == "turn:test")
        #expect(allocation.nextTimeoutNs == nil)
    }

    @Test func noAnswerTimesOut() {
        let allocation = TURNAllocation(server: Self.server)
        allocation.start(nowNs: 0)
        var now: UInt64 = 0
        while let next = allocation.nextTimeoutNs, now < 60_000_000_000 {
            now = next
            allocation.handleTimeout(nowNs: now)
        }
        #expect(allocation.state == .failed)
        #expect(allocation.lastError?.code == .timeout)
        #expect(allocation.statistics.retransmissions == 6)
        #expect(now < 12_000_000_000, "7 transmissions, about 9.75 s")
    }

    @Test func permissionsChannelsAndData() throws {
        let allocation = try Self.allocated()
        allocation.addPermission(for: Self.peer)
        allocation.bindChannel(to: Self.peer)
        let next = try #require(allocation.nextTimeoutNs)
        #expect(next == 0)
        allocation.handleTimeout(nowNs: 10)
        let permission = try Self.request(allocation)
        #expect(permission.method == TURNMethod.createPermission)
        #expect(permission.attributes.contains(.xorPeerAddress(Self.peer)))
        let bind = try Self.request(allocation)
        #expect(bind.method == TURNMethod.channelBind)
        #expect(bind.attributes.contains(.channelNumber(0x4000)))
        // Before the binding: a Send indication.
        let indication = try STUNMessage(parsing: allocation.wrap([1, 2, 3], to: Self.peer))
        #expect(indication.method == TURNMethod.send && indication.messageClass == .indication)
        #expect(indication.attributes.contains(.data([1, 2, 3])))
        _ = allocation.handle(Self.success(permission, []), nowNs: 11)
        _ = allocation.handle(Self.success(bind, []), nowNs: 12)
        #expect(allocation.boundChannel(to: Self.peer) == 0x4000)
        #expect(allocation.wrap([1, 2, 3], to: Self.peer) == [0x40, 0x00, 0x00, 0x03, 1, 2, 3])
        // From the server: ChannelData and a Data indication, unwrapped in place.
        let channelData: [UInt8] = [0x40, 0x00, 0x00, 0x02, 9, 8, 0, 0]
        #expect(allocation.handle(channelData, nowNs: 13) == .data(peer: Self.peer, payload: 4..<6))
        let data = STUNMessage(
            .indication, method: TURNMethod.data, attributes: [.xorPeerAddress(Self.peer), .data([7, 7, 7])]
        ).serialized()
        guard case .data(let peer, let payload) = allocation.handle(data, nowNs: 14) else {
            Issue.record("no data")
            return
        }
        #expect(peer == Self.peer)
        #expect(Array(data[payload]) == [7, 7, 7])
        // Permissions renew every 4 minutes, channels every 9.
        let refreshAt = try #require(allocation.nextTimeoutNs)
        #expect(refreshAt == 11 + 240_000_000_000)
    }

    @Test func hostileServerInputIsDroppedNeverTraps() throws {
        let allocation = try Self.allocated()
        var hostile: [[UInt8]] = [
            [], [0x40], [0x40, 0x00, 0xFF, 0xFF, 1], [0x4F, 0xFF, 0x00, 0x00], [0x00, 0x01],
            [UInt8](repeating: 0xFF, count: 64),
            // A Data indication without DATA, and one without a peer.
            STUNMessage(.indication, method: TURNMethod.data, attributes: [.xorPeerAddress(Self.peer)]).serialized(),
            STUNMessage(.indication, method: TURNMethod.data, attributes: [.data([1])]).serialized(),
            // A response to no transaction.
            STUNMessage(.successResponse, method: TURNMethod.refresh).serialized(),
        ]
        // Truncations of a valid Data indication at every length.
        let valid = STUNMessage(
            .indication, method: TURNMethod.data, attributes: [.xorPeerAddress(Self.peer), .data([1, 2, 3, 4, 5])]
        ).serialized()
        for length in 0..<valid.count { hostile.append(Array(valid.prefix(length))) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var bytes = valid
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            hostile.append(bytes)
        }
        for bytes in hostile { _ = allocation.handle(bytes, nowNs: 20) }
        #expect(allocation.state == .allocated)
        #expect(allocation.statistics.dropped >= 9)
    }

    @Test func unsignedOrIncompleteSuccessIsRefused() throws {
        let allocation = TURNAllocation(server: Self.server)
        allocation.start(nowNs: 0)
        _ = allocation.handle(Self.challenge(try Self.request(allocation)), nowNs: 1)
        let second = try Self.request(allocation)
        // Without MESSAGE-INTEGRITY, or with the wrong key: ignored (a retransmission may still be answered).
        #expect(
            allocation.handle(Self.success(second, [.xorRelayedAddress(Self.relayed)], key: nil), nowNs: 2) == .dropped)
        #expect(
            allocation.handle(Self.success(second, [.xorRelayedAddress(Self.relayed)], key: [1, 2, 3]), nowNs: 2)
                == .dropped)
        #expect(allocation.state == .allocating)
        // Signed but without XOR-RELAYED-ADDRESS: a typed failure.
        #expect(allocation.handle(Self.success(second, [.lifetime(600)]), nowNs: 3) == .consumed)
        #expect(allocation.state == .failed)
        #expect(allocation.lastError?.code == .malformedResponse)
    }
}
