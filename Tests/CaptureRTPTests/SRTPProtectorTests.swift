import CSRTP
import CaptureCore
import CaptureTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import CaptureRTP

/// Our SRTP sender transform (OpenSSL's libcrypto) against libsrtp2's own sender as the independent reference: the
/// same master key, the same packets, the same bytes out; libsrtp2's receiver takes ours back. Also the RFC 3711 and
/// RFC 7714 test vectors, and malformed input.
@Suite struct SRTPProtectorTests {
    /// The media SSRC and an RTX-like second SSRC, interleaved in the tests.
    static let ssrcs: [UInt32] = [0x1122_3344, 0x5566_7788]

    /// An RTP packet: V=2, PT 96, the given sequence number and SSRC, `csrcs` CSRCs, a one-byte-header extension
    /// (RFC 8285: `0xBEDE`, one 2-byte element padded to a word) when `extended`, and `payload` bytes of a pattern.
    static func rtpPacket(
        ssrc: UInt32, sequence: UInt16, payload: Int, csrcs: Int = 0, extended: Bool = false, marker: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [
            0x80 | (extended ? 0x10 : 0) | UInt8(csrcs), (marker ? 0x80 : 0) | 96, UInt8(sequence >> 8),
            UInt8(truncatingIfNeeded: sequence), 0x00, 0x01, 0x5F, 0x90,
        ]
        bytes += bigEndian(ssrc)
        for index in 0..<csrcs { bytes += bigEndian(0xC5C0_0000 + UInt32(index)) }
        if extended { bytes += [0xBE, 0xDE, 0x00, 0x01, 0x11, 0xAB, 0xCD, 0x00] }
        bytes += (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ Int(sequence)) }
        return bytes
    }

    /// An RTCP compound packet: a sender report from `ssrc` and an SDES with its CNAME (`cnameLength` characters).
    static func rtcpCompound(ssrc: UInt32, serial: UInt32, cnameLength: Int) -> [UInt8] {
        RTCPCompoundPacket.serialize([
            .senderReport(
                RTCPSenderReport(
                    ssrc: ssrc, ntpTimestamp: NTPTimestamp(seconds: 3_900_000_000 + serial, fraction: serial &* 977),
                    rtpTimestamp: serial &* 3_000, packetCount: serial * 10, octetCount: serial * 12_000)),
            .sourceDescription([
                RTCPSourceDescriptionChunk(
                    ssrc: ssrc, items: [.cname(String(repeating: "c", count: cnameLength))])
            ]),
        ])
    }

    static func bigEndian(_ word: UInt32) -> [UInt8] {
        [
            UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
            UInt8(truncatingIfNeeded: word),
        ]
    }

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).filter { $0 != UInt8(ascii: " ") }
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// Runs `body` on a copy of `packet` with `room` spare bytes after it, returning the bytes it leaves.
    static func run(
        _ packet: [UInt8], room: Int = 64,
        _ body: (UnsafeMutableRawBufferPointer, inout Int) throws(SRTPError) -> Void
    ) throws(SRTPError) -> [UInt8] {
        var buffer = packet + [UInt8](repeating: 0, count: room)
        var length = packet.count
        let result = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in try body(bytes, &length) }
        }
        try result.get()
        return Array(buffer[..<length])
    }

    /// Ours, protecting `packet`.
    static func protect(_ packet: [UInt8], _ protector: SRTPProtector, rtcp: Bool = false) throws(SRTPError) -> [UInt8]
    {
        try run(packet) { (buffer, length) throws(SRTPError) in
            if rtcp {
                try protector.protectRTCP(buffer, length: &length)
            } else {
                try protector.protectRTP(buffer, length: &length)
            }
        }
    }

    /// Ours, created as `SRTPSession` creates it for the sender role.
    static func ours(_ keys: SRTPKeyingMaterial, replayProtection: Bool = true) throws -> SRTPProtector {
        try SRTPProtector(
            keyingMaterial: keys, profile: keys.profile, replayProtection: replayProtection,
            windowSize: SRTPSession.replayWindowSize)
    }

    /// `result`'s bytes or error, for comparing outcomes that may be errors.
    static func outcome(_ body: () throws(SRTPError) -> [UInt8]) -> Result<[UInt8], SRTPError> {
        Result { () throws(SRTPError) in try body() }
    }

    /// A random master key and everything keyed with it: ours, ours behind `SRTPSession`, libsrtp2's sender (the
    /// reference) and libsrtp2's receiver.
    struct Peers {
        let keys: SRTPKeyingMaterial
        let ours: SRTPProtector
        let session: SRTPSession
        let reference: LibSRTPSender
        let receiver: SRTPSession

        init(_ profile: SRTPProfile, replayProtection: Bool = true) throws {
            keys = SRTPKeyingMaterial.random(profile: profile)
            ours = try SRTPProtectorTests.ours(keys, replayProtection: replayProtection)
            session = try SRTPSession(
                role: .sender, keyingMaterial: keys, profile: profile, replayProtection: replayProtection)
            reference = try LibSRTPSender(keys: keys, allowRepeat: !replayProtection)
            receiver = try SRTPSession(role: .receiver, keyingMaterial: keys, profile: profile)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtpIsLibSRTPsBytesForVariedPacketsAndTwoSSRCs(profile: SRTPProfile) throws {
        let peers = try Peers(profile)
        let payloads = [0, 1, 15, 16, 17, 31, 100, 1_000, 1_188]
        var sequences: [UInt16] = [1_000, 40_000]
        for step in 0..<180 {
            let stream = step % 2
            let packet = Self.rtpPacket(
                ssrc: Self.ssrcs[stream], sequence: sequences[stream], payload: payloads[step % payloads.count],
                csrcs: step % 4 == 3 ? 2 : (step % 7 == 0 ? 1 : 0), extended: step % 3 == 0, marker: step % 5 == 0)
            sequences[stream] &+= 1
            let ours = try Self.protect(packet, peers.ours)
            #expect(ours == (try peers.reference.protect(packet)), "packet \(step)")
            #expect(try SRTPSessionTests.protect(packet, peers.session) == ours, "packet \(step) through SRTPSession")
            #expect(try unprotect(ours, peers.receiver) == packet, "packet \(step)")
        }
        #expect(peers.session.statistics.protected == 180)
        #expect(peers.receiver.statistics.unprotected == 180)
    }

    /// Sequence numbers that roll over four times (ROC 0 → 4; after the first wrap in steps under 2^15, so each is
    /// estimated forward),
    /// with late first transmissions, retransmissions of older ones on both sides of a wrap, and one beyond the
    /// 1,024-packet window.
    static let rolloverSequence: [UInt16] = {
        var sequence = Array(UInt16(65_500)...65_535).filter { $0 != 65_530 } + Array(0...40).filter { $0 != 20 }
        sequence += [65_530, 20, 65_533, 5, 40, 39]  // late first time; retransmissions (repeat) across the wrap
        sequence += [0x7000, 0xE000, 0x5000, 0xC000, 0x3000, 0xA000, 0x1000]  // ROC 1 → 4
        sequence += [0x0F00, 0x1001, 0x0FFF, 0x0B00, 0x1001]  // late, new, late, 1,281 back (too old), repeat
        return sequence
    }()

    @Test(arguments: SRTPProfile.allCases, [true, false])
    func rolloverLateAndRepeatedPacketsMatchLibSRTP(profile: SRTPProfile, replayProtection: Bool) throws {
        let peers = try Peers(profile, replayProtection: replayProtection)
        var failures = 0
        for (step, sequence) in Self.rolloverSequence.enumerated() {
            let packet = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: sequence, payload: 50 + step % 17)
            let ours = Self.outcome { () throws(SRTPError) in try Self.protect(packet, peers.ours) }
            let theirs = Self.outcome { () throws(SRTPError) in try peers.reference.protect(packet) }
            #expect(ours == theirs, "step \(step), sequence \(sequence)")
            if case .failure = ours { failures += 1 }
        }
        // Too old: once; repeated: 5 more with replay protection.
        #expect(failures == (replayProtection ? 6 : 1))
    }

    @Test(arguments: SRTPProfile.allCases)
    func libSRTPReceiverFollowsOurRolloverCounter(profile: SRTPProfile) throws {
        let peers = try Peers(profile)
        for sequence in Array(UInt16(65_000)...65_535) + Array(0...600) + [0x4000, 0x8000, 0xC000, 0x0100] {
            let packet = Self.rtpPacket(ssrc: Self.ssrcs[1], sequence: sequence, payload: 20)
            #expect(try unprotect(try Self.protect(packet, peers.ours), peers.receiver) == packet)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func srtcpIsLibSRTPsBytes(profile: SRTPProfile) throws {
        let peers = try Peers(profile)
        for serial in UInt32(0)..<60 {
            let compound = Self.rtcpCompound(
                ssrc: Self.ssrcs[Int(serial % 2)], serial: serial, cnameLength: 1 + Int(serial % 23))
            let ours = try Self.protect(compound, peers.ours, rtcp: true)
            #expect(ours == (try peers.reference.protect(compound, rtcp: true)), "compound \(serial)")
            #expect(try SRTPSessionTests.protect(compound, peers.session, rtcp: true) == ours)
            #expect(try unprotect(ours, peers.receiver, rtcp: true) == compound)
        }
        // The 8-byte minimum: a bare header with its SSRC.
        let bare: [UInt8] = [0x80, 201, 0, 1] + Self.bigEndian(Self.ssrcs[0])
        #expect(try Self.protect(bare, peers.ours, rtcp: true) == (try peers.reference.protect(bare, rtcp: true)))
    }

    /// RFC 3711 Appendix B.3: session keys from the master key and salt (labels 0x00, 0x02, 0x01).
    @Test func rfc3711KeyDerivationVectors() throws {
        let master = try SRTPKeyingMaterial(
            key: Self.bytes("E1F97A0D3E018BE0D64FA32C06DE4139"), salt: Self.bytes("0EC675AD498AFEEBB6960B3AABE6"))
        let keys = try SRTPKeyDerivation.sessionKeys(from: master, profile: .aesCM128HMACSHA1_80, direction: .rtp)
        #expect(keys.encryptionKey == Self.bytes("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(keys.salt == Self.bytes("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(keys.authenticationKey == Self.bytes("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    /// RFC 3711 Appendix B.2: the AES-CM keystream for SSRC 0 and index 0 is the salt-offset counter's.
    @Test func rfc3711KeystreamVector() throws {
        let transform = try SRTPTransform(
            profile: .aesCM128HMACSHA1_80,
            keys: SRTPSessionKeys(
                encryptionKey: Self.bytes("2B7E151628AED2A6ABF7158809CF4F3C"),
                authenticationKey: [UInt8](repeating: 0, count: 20), salt: Self.bytes("F0F1F2F3F4F5F6F7F8F9FAFBFCFD")))
        let packet = Self.rtpPacket(ssrc: 0, sequence: 0, payload: 0) + [UInt8](repeating: 0, count: 48)
        let protected = try Self.run(packet) { (buffer, length) throws(SRTPError) in
            length = try transform.protectRTP(buffer, length: length, headerLength: 12, ssrc: 0, index: 0)
        }
        #expect(
            Array(protected[12..<60])
                == Self.bytes(
                    "E03EAD0935C95E80E166B16DD92B4EB4D23513162B02D0F72A43A2FE4A5F97AB41E95B3BB0A2E8DD477901E4FCA894C0"))
    }

    /// RFC 7714 §16.1.1 (SRTP) and §17.1 (SRTCP, index 0x5d4): AEAD_AES_128_GCM with the given session key and salt.
    @Test func rfc7714Vectors() throws {
        let keys = SRTPSessionKeys(
            encryptionKey: Self.bytes("000102030405060708090a0b0c0d0e0f"), authenticationKey: [],
            salt: Self.bytes("517569642070726f2071756f"))
        let transform = try SRTPTransform(profile: .aeadAES128GCM, keys: keys)
        let rtp = Self.bytes("8040f17b8041f8d35501a0b2") + Array("Gallia est omnis divisa in partes tres".utf8)
        let srtp = try Self.run(rtp) { (buffer, length) throws(SRTPError) in
            length = try transform.protectRTP(
                buffer, length: length, headerLength: 12, ssrc: 0x5501_A0B2, index: 0xF17B)
        }
        #expect(
            srtp
                == Self.bytes(
                    "8040f17b8041f8d35501a0b2 f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b"
                        + "36de3adf8833 899d7f27beb16a9152cf765ee4390cce"))
        let rtcp = Self.bytes(
            "81c8000d4d6172734e5450314e545032525450200000042a0000e9304c756e61deadbeefdeadbeefdeadbeefdeadbeefdeadbeef")
        let srtcp = try Self.run(rtcp) { (buffer, length) throws(SRTPError) in
            length = try transform.protectRTCP(buffer, length: length, ssrc: 0x4D61_7273, index: 0x5D4)
        }
        #expect(
            srtcp
                == Self.bytes(
                    "81c8000d4d617273 63e94885dcdab67ca727d7662f6b7e997ff5c0f76c06f32dc676a5f1730d6fda"
                        + "4ce09b4686303ded0bb9275b c84aa45896cf4d2fc5abf87245d9eade 800005d4"))
    }

    @Test(arguments: SRTPProfile.allCases)
    func malformedPacketsAndShortBuffersThrowTypedErrors(profile: SRTPProfile) throws {
        let peers = try Peers(profile)
        let tag = profile == .aesCM128HMACSHA1_80 ? 10 : 16
        let five: [UInt8] = [0x80, 96, 0, 1, 0]
        #expect(throws: SRTPError.bufferTooSmall(needed: 12, available: 5)) { try Self.protect(five, peers.ours) }
        #expect(throws: SRTPError.bufferTooSmall(needed: 8, available: 5)) {
            try Self.protect(five, peers.ours, rtcp: true)
        }
        // No room for the tag (or the SRTCP trailer).
        let packet = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: 7, payload: 100)
        #expect(throws: SRTPError.bufferTooSmall(needed: packet.count + tag, available: packet.count + tag - 1)) {
            try Self.run(packet, room: tag - 1) { (buffer, length) throws(SRTPError) in
                try peers.ours.protectRTP(buffer, length: &length)
            }
        }
        let compound = Self.rtcpCompound(ssrc: Self.ssrcs[0], serial: 1, cnameLength: 5)
        #expect(throws: SRTPError.bufferTooSmall(needed: compound.count + tag + 4, available: compound.count + tag)) {
            try Self.run(compound, room: tag) { (buffer, length) throws(SRTPError) in
                try peers.ours.protectRTCP(buffer, length: &length)
            }
        }
        // A length beyond the buffer.
        #expect(throws: SRTPError.bufferTooSmall(needed: packet.count + 65, available: packet.count + 64)) {
            try Self.run(packet) { (buffer, length) throws(SRTPError) in
                length += 65
                try peers.ours.protectRTP(buffer, length: &length)
            }
        }
        // 15 CSRCs in a 20-byte packet; an extension header cut off; an extension longer than the packet.
        var csrcs = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: 8, payload: 8)
        csrcs[0] = 0x8F
        #expect(throws: SRTPError.bufferTooSmall(needed: 72, available: 20)) { try Self.protect(csrcs, peers.ours) }
        var cutExtension = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: 9, payload: 0)
        cutExtension[0] = 0x90
        #expect(throws: SRTPError.bufferTooSmall(needed: 16, available: 12)) {
            try Self.protect(cutExtension, peers.ours)
        }
        var longExtension = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: 10, payload: 20, extended: true)
        longExtension[14] = 0x01  // 256 more words
        #expect(throws: SRTPError.bufferTooSmall(needed: 12 + 4 + 4 * 257, available: longExtension.count)) {
            try Self.protect(longExtension, peers.ours)
        }
        // None of that touched the stream: the first good packets are libsrtp's, including the sequence numbers
        // the rejected packets carried.
        for sequence in UInt16(7)...10 {
            let good = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: sequence, payload: 30)
            #expect(try Self.protect(good, peers.ours) == (try peers.reference.protect(good)))
        }
        #expect(
            try Self.protect(compound, peers.ours, rtcp: true) == (try peers.reference.protect(compound, rtcp: true)))
    }

    /// Prints (does not assert) the CPU time per 1,200-byte packet of ours and of libsrtp2's sender, same packets.
    /// Thread CPU time, so that other tests running meanwhile do not count; a debug build weighs our Swift (the
    /// window, the dictionary) far more than a release build does.
    @Test(arguments: SRTPProfile.allCases)
    func printsProtectTimeAgainstLibSRTP(profile: SRTPProfile) throws {
        let peers = try Peers(profile)
        let packet = Self.rtpPacket(ssrc: Self.ssrcs[0], sequence: 0, payload: 1_200 - 12)
        let count = 20_000
        var buffer = [UInt8](repeating: 0, count: packet.count + SRTPSession.maximumTrailerLength)
        func nanosecondsPerPacket(
            _ protect: (UnsafeMutableRawBufferPointer, inout Int) throws(SRTPError) -> Void
        ) throws -> Int {
            let start = Self.threadCPUNanoseconds()
            try buffer.withUnsafeMutableBytes { bytes in
                for index in 0..<count {
                    packet.withUnsafeBytes { bytes.copyMemory(from: $0) }
                    bytes.storeBytes(of: UInt16(truncatingIfNeeded: index).bigEndian, toByteOffset: 2, as: UInt16.self)
                    var length = packet.count
                    try protect(bytes, &length)
                }
            }
            return (Self.threadCPUNanoseconds() - start) / count
        }
        let ours = try nanosecondsPerPacket { (bytes, length) throws(SRTPError) in
            try peers.ours.protectRTP(bytes, length: &length)
        }
        let theirs = try nanosecondsPerPacket { (bytes, length) throws(SRTPError) in
            try peers.reference.protect(bytes, &length)
        }
        print(
            "SRTP protect, 1,200-byte RTP packets, \(profile.sdesName): ours \(ours) ns/packet, libsrtp2 \(theirs) "
                + "ns/packet (thread CPU time; this build's optimization level)")
    }

    /// The calling thread's CPU time.
    static func threadCPUNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}

/// libsrtp2's own sender, with the policy `SRTPSession` gives libsrtp2 (`ssrc_any_outbound`, window 1,024): the
/// reference our bytes are compared with.
final class LibSRTPSender {
    private let context: OpaquePointer

    init(keys: SRTPKeyingMaterial, allowRepeat: Bool = false) throws {
        context = try SRTPSession.libsrtpContext(
            role: .sender, keyingMaterial: keys, profile: keys.profile, replayProtection: !allowRepeat)
    }

    deinit {
        srtp_dealloc(context)
    }

    /// Protects `buffer[0..<length]` in place (RTP, or RTCP when `rtcp`).
    func protect(_ buffer: UnsafeMutableRawBufferPointer, _ length: inout Int, rtcp: Bool = false) throws(SRTPError) {
        var size = Int32(length)
        let status =
            rtcp
            ? srtp_protect_rtcp(context, buffer.baseAddress, &size) : srtp_protect(context, buffer.baseAddress, &size)
        switch status {
        case srtp_err_status_ok: length = Int(size)
        case srtp_err_status_replay_fail: throw .replayed
        case srtp_err_status_replay_old: throw .replayTooOld
        default:
            throw .libsrtp(
                call: rtcp ? "srtp_protect_rtcp" : "srtp_protect", status: Int32(bitPattern: status.rawValue))
        }
    }

    /// Protects a copy of `packet`.
    func protect(_ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
        try SRTPProtectorTests.run(packet) { (buffer, length) throws(SRTPError) in
            try protect(buffer, &length, rtcp: rtcp)
        }
    }
}
