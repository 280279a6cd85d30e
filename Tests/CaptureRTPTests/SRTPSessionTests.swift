import CaptureRTP
import CaptureTestSupport
import Testing

/// SRTP keying and libsrtp2 sessions: round trips, wrong keys, replays and tampering.
@Suite struct SRTPSessionTests {
    /// A minimal RTP packet: V=2, PT 96, the given sequence number, SSRC 0x11223344, `payload` bytes of a pattern.
    static func rtpPacket(sequence: UInt16, payload: Int = 100) -> [UInt8] {
        [0x80, 96, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence), 0, 0, 0x0B, 0xB8, 0x11, 0x22, 0x33, 0x44]
            + (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    }

    /// Protects `packet` with `session`, returning the SRTP bytes.
    static func protect(_ packet: [UInt8], _ session: SRTPSession, rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.maximumTrailerLength)
        var length = packet.count
        let result = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in
                if rtcp {
                    try session.protectRTCP(bytes, length: &length)
                } else {
                    try session.protectRTP(bytes, length: &length)
                }
            }
        }
        try result.get()
        return Array(buffer[..<length])
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtpAndRTCPRoundTrip(profile: SRTPProfile) throws {
        let keys = SRTPKeyingMaterial.random(profile: profile)
        let sender = try SRTPSession(role: .sender, keyingMaterial: keys, profile: profile)
        let receiver = try SRTPSession(role: .receiver, keyingMaterial: keys, profile: profile)
        for sequence in UInt16(1)...20 {
            let packet = Self.rtpPacket(sequence: sequence)
            let protected = try Self.protect(packet, sender)
            #expect(protected.count > packet.count)
            #expect(protected[12...] != packet[12...])
            #expect(try unprotect(protected, receiver) == packet)
        }
        let report = RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 0x1122_3344)).bytes
        #expect(try unprotect(try Self.protect(report, sender, rtcp: true), receiver, rtcp: true) == report)
        #expect(sender.statistics.protected == 21)
        #expect(receiver.statistics.unprotected == 21)
        #expect(receiver.statistics.authenticationFailures == 0)
    }

    @Test func wrongKeyFailsAuthenticationAndIsCounted() throws {
        let sender = try SRTPSession(role: .sender, keyingMaterial: .random())
        let receiver = try SRTPSession(role: .receiver, keyingMaterial: .random())
        let protected = try Self.protect(Self.rtpPacket(sequence: 1), sender)
        #expect(throws: SRTPError.authenticationFailed) { try unprotect(protected, receiver) }
        #expect(receiver.statistics.authenticationFailures == 1)
        #expect(receiver.statistics.unprotected == 0)
    }

    @Test func replayedPacketIsRejectedAndCounted() throws {
        let keys = SRTPKeyingMaterial.random()
        let sender = try SRTPSession(role: .sender, keyingMaterial: keys)
        let receiver = try SRTPSession(role: .receiver, keyingMaterial: keys)
        let protected = try Self.protect(Self.rtpPacket(sequence: 5), sender)
        _ = try unprotect(protected, receiver)
        #expect(throws: SRTPError.replayed) { try unprotect(protected, receiver) }
        #expect(receiver.statistics.replayRejections == 1)
    }

    @Test func tamperedByteFailsAuthentication() throws {
        let keys = SRTPKeyingMaterial.random()
        let sender = try SRTPSession(role: .sender, keyingMaterial: keys)
        let receiver = try SRTPSession(role: .receiver, keyingMaterial: keys)
        var protected = try Self.protect(Self.rtpPacket(sequence: 9), sender)
        protected[40] ^= 0x01
        #expect(throws: SRTPError.authenticationFailed) { try unprotect(protected, receiver) }
        #expect(receiver.statistics.authenticationFailures == 1)
    }

    @Test func senderCanRepeatASequenceNumberOnlyWithoutReplayProtection() throws {
        let keys = SRTPKeyingMaterial.random()
        let strict = try SRTPSession(role: .sender, keyingMaterial: keys)
        _ = try Self.protect(Self.rtpPacket(sequence: 3), strict)
        #expect(throws: SRTPError.replayed) { try Self.protect(Self.rtpPacket(sequence: 3), strict) }
        let retransmitting = try SRTPSession(role: .sender, keyingMaterial: keys, replayProtection: false)
        _ = try Self.protect(Self.rtpPacket(sequence: 3), retransmitting)
        _ = try Self.protect(Self.rtpPacket(sequence: 3), retransmitting)
        #expect(retransmitting.statistics.protected == 2)
    }

    @Test func bufferWithoutTrailerRoomIsRejected() throws {
        let sender = try SRTPSession(role: .sender, keyingMaterial: .random())
        var packet = Self.rtpPacket(sequence: 1)
        let size = packet.count
        var length = size
        let result = packet.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in try sender.protectRTP(bytes, length: &length) }
        }
        #expect(throws: SRTPError.bufferTooSmall(needed: size + SRTPSession.maximumTrailerLength, available: size)) {
            try result.get()
        }
        #expect(sender.statistics.protected == 0)
    }

    @Test func keyingMaterialBase64RoundTripsAndRejectsBadInput() throws {
        let keys = SRTPKeyingMaterial.random()
        #expect(keys.key.count == 16 && keys.salt.count == 14)
        #expect(keys.base64.count == 40)
        #expect(try SRTPKeyingMaterial(base64: keys.base64) == keys)
        let gcm = SRTPKeyingMaterial.random(profile: .aeadAES128GCM)
        #expect(try SRTPKeyingMaterial(base64: gcm.base64) == gcm)
        #expect(gcm.profile == .aeadAES128GCM)
        // RFC 4568 §6.1 example key (30 bytes).
        let example = try SRTPKeyingMaterial(base64: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
        #expect(example.key == Array("YS___semctl () {".utf8))
        for bad in ["", "WVNf", "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGV", "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGV!"] {
            #expect(throws: SRTPError.invalidBase64(bad)) { try SRTPKeyingMaterial(base64: bad) }
        }
        #expect(throws: SRTPError.self) { try SRTPKeyingMaterial(key: [1, 2, 3], salt: []) }
        #expect(throws: SRTPError.self) {
            try SRTPSession(role: .sender, keyingMaterial: .random(), profile: .aeadAES128GCM)
        }
    }
}
