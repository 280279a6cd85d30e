import CaptureDTLS
import CaptureRTP
import CaptureTestSupport
import Foundation
import Testing

/// Two endpoints wired in memory.
struct DTLSPair {
    let client: DTLSEndpoint
    let server: DTLSEndpoint

    init(
        clientProfiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80],
        serverProfiles: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80],
        clientExpects: DTLSFingerprint? = nil, serverExpects: DTLSFingerprint? = nil,
        mtu: Int = DTLSEndpoint.defaultMTU
    ) throws {
        let clientCertificate = try DTLSCertificate()
        let serverCertificate = try DTLSCertificate()
        client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate,
            remoteFingerprint: clientExpects ?? serverCertificate.fingerprint, profiles: clientProfiles, mtu: mtu)
        server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate,
            remoteFingerprint: serverExpects ?? clientCertificate.fingerprint,
            profiles: serverProfiles, mtu: mtu)
    }

    /// Moves datagrams both ways until neither has any left; `drop` may discard some (returns true to drop).
    /// Returns the errors the endpoints threw.
    @discardableResult
    func pump(
        nowNs: Int64 = 0, maxSize: Int = DTLSEndpoint.defaultMTU,
        drop: (_ fromClient: Bool, _ datagram: [UInt8]) -> Bool = { _, _ in false }
    ) -> [DTLSError] {
        var errors: [DTLSError] = []
        var moved = true
        while moved {
            moved = false
            while let datagram = client.pollTransmit() {
                moved = true
                #expect(datagram.count <= maxSize)
                if drop(true, datagram) { continue }
                do { try server.handle(datagram: datagram, nowNs: nowNs) } catch { errors.append(error) }
            }
            while let datagram = server.pollTransmit() {
                moved = true
                #expect(datagram.count <= maxSize)
                if drop(false, datagram) { continue }
                do { try client.handle(datagram: datagram, nowNs: nowNs) } catch { errors.append(error) }
            }
        }
        return errors
    }
}

@Suite struct DTLSEndpointTests {
    @Test(arguments: [SRTPProfile.aeadAES128GCM, .aesCM128HMACSHA1_80])
    func handshakeExportsCrosswiseKeys(profile: SRTPProfile) throws {
        let pair = try DTLSPair(clientProfiles: [profile], serverProfiles: [profile])
        #expect(pair.client.state == .new)
        pair.client.start(nowNs: 0)
        #expect(pair.client.state == .connecting)
        #expect(pair.client.nextTimeoutNs != nil)
        #expect(pair.pump().isEmpty)
        #expect(pair.client.state == .connected)
        #expect(pair.server.state == .connected)
        #expect(pair.client.nextTimeoutNs == nil)
        let client = try #require(pair.client.srtpKeys)
        let server = try #require(pair.server.srtpKeys)
        #expect(client.profile == profile && server.profile == profile)
        #expect(client.local == server.remote)
        #expect(client.remote == server.local)
        #expect(client.local != client.remote)
        #expect(client.local.salt.count == profile.saltLength)

        // The keys work: what the client protects, the server unprotects.
        let sender = try SRTPSession(role: .sender, keyingMaterial: client.local, profile: profile)
        let receiver = try SRTPSession(role: .receiver, keyingMaterial: server.remote, profile: profile)
        // A minimal RTP packet (version 2, PT 96, seq 1, ts 0, SSRC 1) and a payload, with room for the tag.
        let packet: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1] + Array(repeating: 0xAB, count: 20)
        var buffer = packet + Array(repeating: 0, count: 256)
        var length = packet.count
        let protected = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in try sender.protectRTP(bytes, length: &length) }
        }
        try protected.get()
        #expect(length > packet.count)
        let unprotected = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in try receiver.unprotectRTP(bytes, length: &length) }
        }
        try unprotected.get()
        #expect(Array(buffer[0..<length]) == packet)
    }

    @Test func defaultOfferPrefersGCM() throws {
        let pair = try DTLSPair()
        pair.client.start(nowNs: 0)
        pair.pump()
        #expect(pair.client.srtpKeys?.profile == .aeadAES128GCM)
        #expect(pair.server.srtpKeys?.profile == .aeadAES128GCM)
    }

    @Test(arguments: [true, false])
    func negotiatesTheOnlyCommonProfile(clientLimited: Bool) throws {
        let both: [SRTPProfile] = [.aeadAES128GCM, .aesCM128HMACSHA1_80]
        let pair = try DTLSPair(
            clientProfiles: clientLimited ? [.aesCM128HMACSHA1_80] : both,
            serverProfiles: clientLimited ? both : [.aesCM128HMACSHA1_80])
        pair.client.start(nowNs: 0)
        pair.pump()
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(pair.client.srtpKeys?.profile == .aesCM128HMACSHA1_80)
        #expect(pair.server.srtpKeys?.profile == .aesCM128HMACSHA1_80)
        #expect(pair.client.srtpKeys?.local.salt.count == 14)
    }

    @Test func noCommonProfileFails() throws {
        let pair = try DTLSPair(clientProfiles: [.aeadAES128GCM], serverProfiles: [.aesCM128HMACSHA1_80])
        pair.client.start(nowNs: 0)
        let errors = pair.pump()
        #expect(!errors.isEmpty)
        #expect(pair.client.srtpKeys == nil && pair.server.srtpKeys == nil)
        for endpoint in [pair.client, pair.server] {
            guard case .failed = endpoint.state else {
                Issue.record("\(endpoint.role) is \(endpoint.state)")
                continue
            }
        }
    }

    @Test func wrongRemoteFingerprintFailsWithoutKeys() throws {
        let stranger = try DTLSCertificate().fingerprint
        let pair = try DTLSPair(clientExpects: stranger)
        pair.client.start(nowNs: 0)
        let errors = pair.pump()
        guard case .failed(.fingerprintMismatch(let expected, let actual)) = pair.client.state else {
            Issue.record("client is \(pair.client.state)")
            return
        }
        #expect(expected == stranger)
        #expect(actual != stranger)
        #expect(pair.client.srtpKeys == nil)
        #expect(errors.contains { if case .fingerprintMismatch = $0 { true } else { false } })
        // Nothing more comes out of a failed endpoint, and input is ignored.
        #expect(pair.client.pollTransmit() == nil || pair.client.pollTransmit() == nil)
        #expect(pair.client.nextTimeoutNs == nil)
    }

    @Test func serverRefusingTheClientCertificateLeavesNobodyConnected() throws {
        let stranger = try DTLSCertificate().fingerprint
        let pair = try DTLSPair(serverExpects: stranger)
        pair.client.start(nowNs: 0)
        let errors = pair.pump()
        guard case .failed(.fingerprintMismatch(let expected, _)) = pair.server.state else {
            Issue.record("server is \(pair.server.state)")
            return
        }
        #expect(expected == stranger)
        #expect(pair.server.srtpKeys == nil)
        // The server refused the certificate inside the handshake (bad_certificate alert, before its Finished): the
        // client fails too, and never gets keys.
        guard case .failed(.handshakeFailure(_, let reason)) = pair.client.state else {
            Issue.record("client is \(pair.client.state)")
            return
        }
        #expect(reason.contains("bad certificate"), "\(reason)")
        #expect(pair.client.srtpKeys == nil)
        #expect(errors.count == 2)
    }

    @Test func datagramsRespectTheMTU() throws {
        let pair = try DTLSPair(mtu: 300)
        pair.client.start(nowNs: 0)
        #expect(pair.pump(maxSize: 300).isEmpty)
        #expect(pair.client.state == .connected && pair.server.state == .connected)
    }

    @Test func badMTUAndNoProfilesAreRefused() throws {
        let certificate = try DTLSCertificate()
        #expect(throws: DTLSError.self) {
            try DTLSEndpoint(
                role: .client, certificate: certificate, remoteFingerprint: certificate.fingerprint, mtu: 10)
        }
        #expect(throws: DTLSError.self) {
            try DTLSEndpoint(
                role: .client, certificate: certificate, remoteFingerprint: certificate.fingerprint, profiles: [])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func droppedFlightIsRetransmittedAfterTheTimer() async throws {
        let pair = try DTLSPair()
        let start = monotonicNowNs()
        pair.client.start(nowNs: start)
        // The ClientHello is lost.
        var lost = 0
        while pair.client.pollTransmit() != nil { lost += 1 }
        #expect(lost == 1)
        let due = try #require(pair.client.nextTimeoutNs)
        #expect(due > start && due <= start + 1_100_000_000)
        // Early: nothing to retransmit.
        pair.client.handleTimeout(nowNs: monotonicNowNs())
        #expect(pair.client.retransmissions == 0)
        #expect(pair.client.pollTransmit() == nil)
        // OpenSSL's timer runs on the real clock (1 s initially).
        try await Task.sleep(for: .milliseconds(1_100))
        pair.client.handleTimeout(nowNs: monotonicNowNs())
        #expect(pair.client.retransmissions == 1)
        #expect(pair.pump(nowNs: monotonicNowNs()).isEmpty)
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(pair.client.srtpKeys?.local == pair.server.srtpKeys?.remote)
    }

    @Test func handshakeDeadlineFails() throws {
        let pair = try DTLSPair()
        pair.client.start(nowNs: 0)
        _ = pair.client.pollTransmit()
        pair.client.handleTimeout(nowNs: DTLSEndpoint.handshakeTimeoutNs)
        #expect(pair.client.state == .failed(.timeout(milliseconds: 30_000)))
        #expect(pair.client.nextTimeoutNs == nil)
    }

    @Test func garbageIsIgnoredOrDropped() throws {
        let pair = try DTLSPair()
        var generator = SystemRandomNumberGenerator()
        // Not DTLS by the first byte: counted and ignored.
        for datagram in [[], [0x00, 0x01], [0x80, 0x60, 0x00], [UInt8](repeating: 0xFF, count: 100)] {
            try pair.server.handle(datagram: datagram, nowNs: 0)
        }
        #expect(pair.server.ignoredDatagrams == 4)
        #expect(pair.server.state == .new)
        // Random bytes dressed as DTLS records (content types 20–23, DTLS 1.2 version): OpenSSL drops them.
        for index in 0..<200 {
            var datagram = (0..<Int.random(in: 1...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            datagram[0] = UInt8(20 + index % 4)
            if datagram.count > 2 { (datagram[1], datagram[2]) = (0xFE, 0xFD) }
            for endpoint in [pair.server, pair.client] {
                do { try endpoint.handle(datagram: datagram, nowNs: 0) } catch {
                    // A typed error is acceptable; the endpoint has then failed.
                    guard case .failed = endpoint.state else {
                        Issue.record("threw \(error) in state \(endpoint.state)")
                        continue
                    }
                }
            }
        }
        // Whatever the garbage did, a fresh pair still connects; and this pair is either still able to or failed.
        while pair.client.pollTransmit() != nil {}
        while pair.server.pollTransmit() != nil {}
        let fresh = try DTLSPair()
        fresh.client.start(nowNs: 0)
        fresh.pump()
        #expect(fresh.client.state == .connected)
    }

    @Test func garbageDuringHandshakeDoesNotStopIt() throws {
        let pair = try DTLSPair()
        pair.client.start(nowNs: 0)
        var generator = SystemRandomNumberGenerator()
        var moved = true
        while moved {
            moved = false
            while let datagram = pair.client.pollTransmit() {
                moved = true
                var junk = datagram
                for _ in 0..<3 { junk[Int.random(in: 13..<junk.count, using: &generator)] ^= 0x5A }
                try? pair.server.handle(datagram: Array(junk.prefix(5)), nowNs: 0)  // truncated header
                try pair.server.handle(datagram: datagram, nowNs: 0)
            }
            while let datagram = pair.server.pollTransmit() {
                moved = true
                try? pair.client.handle(datagram: [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 40), nowNs: 0)
                try pair.client.handle(datagram: datagram, nowNs: 0)
            }
        }
        #expect(pair.client.state == .connected && pair.server.state == .connected)
    }

    @Test func closeSendsCloseNotify() throws {
        let pair = try DTLSPair()
        pair.client.start(nowNs: 0)
        pair.pump()
        #expect(pair.client.state == .connected)
        pair.client.close()
        #expect(pair.client.state == .closed)
        let alert = try #require(pair.client.pollTransmit())
        #expect(alert.first == 21)  // an alert record
        #expect {
            try pair.server.handle(datagram: alert, nowNs: 0)
        } throws: { error in
            (error as? DTLSError) == .closedByPeer
        }
        #expect(pair.server.state == .closed)
        // Keys exported before the close stay readable for media in flight.
        #expect(pair.server.srtpKeys != nil)
        pair.client.close()  // idempotent
        try pair.server.handle(datagram: alert, nowNs: 0)
        #expect(pair.server.ignoredDatagrams == 1)
    }
}
