import CaptureRTP
import CaptureTestSupport
import Testing

/// Round trips of every RTCP packet type against hand-built wire vectors (RFC 3550, 4585, 5104, REMB draft).
@Suite struct RTCPPacketTests {
    static let block = RTCPReportBlock(
        ssrc: 0xAABB_CCDD, fractionLost: 0x40, cumulativeLost: -3, extendedHighestSequence: 0x0001_0005,
        jitter: 42, lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 0x0001_0000)
    static let blockBytes: [UInt8] = [
        0xAA, 0xBB, 0xCC, 0xDD, 0x40, 0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x2A,
        0x12, 0x34, 0x56, 0x78, 0x00, 0x01, 0x00, 0x00,
    ]

    static let vectors: [(RTCPPacket, [UInt8])] = [
        (
            .senderReport(
                RTCPSenderReport(
                    ssrc: 0x1234_5678, ntpTimestamp: NTPTimestamp(seconds: 0xE123_4567, fraction: 0x89AB_CDEF),
                    rtpTimestamp: 90000, packetCount: 10, octetCount: 1000)),
            [
                0x80, 0xC8, 0x00, 0x06, 0x12, 0x34, 0x56, 0x78, 0xE1, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
                0x00, 0x01, 0x5F, 0x90, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x03, 0xE8,
            ]
        ),
        (
            .receiverReport(RTCPReceiverReport(ssrc: 0x0102_0304, reportBlocks: [block])),
            [0x81, 0xC9, 0x00, 0x07, 0x01, 0x02, 0x03, 0x04] + blockBytes
        ),
        (
            .sourceDescription([RTCPSourceDescriptionChunk(ssrc: 0x1122_3344, items: [.cname("abcd")])]),
            [0x81, 0xCA, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x01, 0x04, 0x61, 0x62, 0x63, 0x64, 0x00, 0x00]
        ),
        (
            .goodbye(RTCPBye(ssrcs: [0x1122_3344], reason: "done")),
            [0x81, 0xCB, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x04, 0x64, 0x6F, 0x6E, 0x65, 0x00, 0x00, 0x00]
        ),
        (
            .pictureLossIndication(senderSSRC: 1, mediaSSRC: 2),
            [0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]
        ),
        (
            .fullIntraRequest(senderSSRC: 1, entries: [RTCPFIREntry(ssrc: 2, sequenceNumber: 7)]),
            [0x84, 0xCE, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 7, 0, 0, 0]
        ),
        (
            .genericNACK(senderSSRC: 1, mediaSSRC: 2, entries: [RTCPNACKEntry(packetID: 100, lostBitmask: 5)]),
            [0x81, 0xCD, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x64, 0x00, 0x05]
        ),
        (
            .receiverEstimatedMaximumBitrate(RTCPREMB(senderSSRC: 1, bitrate: 1_000_000, ssrcs: [2])),
            [
                0x8F, 0xCE, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42, 0x01, 0x0B, 0xD0, 0x90,
                0, 0, 0, 2,
            ]
        ),
        (
            .temporaryMaximumBitrateRequest(
                senderSSRC: 1, entries: [RTCPTMMBEntry(ssrc: 2, exponent: 3, mantissa: 0x1_0001, measuredOverhead: 40)]),
            // exp 3 << 26 | 0x10001 << 9 | 40 = 0x0E00_0228
            [0x83, 0xCD, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x0E, 0x00, 0x02, 0x28]
        ),
        (
            .temporaryMaximumBitrateNotification(
                senderSSRC: 1, entries: [RTCPTMMBEntry(ssrc: 2, exponent: 3, mantissa: 0x1_0001, measuredOverhead: 40)]),
            [0x84, 0xCD, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x0E, 0x00, 0x02, 0x28]
        ),
        (
            .unknown(packetType: 204, count: 3, payload: [0, 0, 0, 9, 0x61, 0x62, 0x63, 0x64]),
            [0x83, 0xCC, 0x00, 0x02, 0, 0, 0, 9, 0x61, 0x62, 0x63, 0x64]
        ),
    ]

    @Test("every packet type serializes to its wire vector and parses back", arguments: 0..<vectors.count)
    func roundTrip(index: Int) throws {
        let (packet, bytes) = Self.vectors[index]
        #expect(packet.bytes == bytes)
        #expect(try parseRTCP(bytes) == [packet])
    }

    @Test func compoundPacketOfEveryTypeRoundTrips() throws {
        let packets = Self.vectors.map(\.0)
        let bytes = RTCPCompoundPacket.serialize(packets)
        #expect(bytes == Self.vectors.flatMap(\.1))
        #expect(try parseRTCP(bytes) == packets)
    }

    @Test func reusedBufferSerializesIdentically() {
        var buffer: [UInt8] = []
        for (packet, bytes) in Self.vectors {
            buffer.removeAll(keepingCapacity: true)
            packet.serialize(into: &buffer)
            #expect(buffer == bytes)
        }
    }

    @Test func reportBlockLossIsTwentyFourBitSigned() throws {
        var block = Self.block
        block.cumulativeLost = 0x7F_FFFF
        let packet = RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: [block]))
        #expect(try parseRTCP(packet.bytes) == [packet])
        #expect(
            RTCPReportBlock(
                ssrc: 0, fractionLost: 0, cumulativeLost: -10_000_000, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: 0, delaySinceLastSenderReport: 0
            ).cumulativeLost == -0x80_0000)
    }

    @Test func paddingOnTheLastPacketIsRemoved() throws {
        // A PLI with the P bit and 4 bytes of padding (count 4 in the last byte).
        let bytes: [UInt8] = [0xA1, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4]
        #expect(try parseRTCP(bytes) == [.pictureLossIndication(senderSSRC: 1, mediaSSRC: 2)])
    }

    @Test func nackEntriesCoverTheLostSequenceNumbers() {
        let lost: [UInt16] = [65534, 65535, 0, 5, 40]
        let entries = RTCPNACKEntry.entries(for: lost)
        #expect(
            entries == [
                RTCPNACKEntry(packetID: 65534, lostBitmask: 0b0100_0011), RTCPNACKEntry(packetID: 40, lostBitmask: 0),
            ])
        #expect(entries.flatMap(\.sequenceNumbers) == lost)
    }

    @Test func rembBitrateRoundsDownToEighteenBits() {
        let remb = RTCPREMB(senderSSRC: 1, bitrate: 1_000_003, ssrcs: [])
        #expect(remb.exponent == 2)
        #expect(remb.mantissa == 250_000)
        #expect(remb.bitrate == 1_000_000)
    }

    @Test func hostileHeadersAreRejected() {
        #expect(throws: RTCPParseError.empty) { try parseRTCP([]) }
        #expect(throws: RTCPParseError.truncatedHeader(offset: 0)) { try parseRTCP([0x80, 0xC8]) }
        #expect(throws: RTCPParseError.unsupportedVersion(1, offset: 0)) {
            try parseRTCP([0x40, 0xC9, 0, 1, 0, 0, 0, 1])
        }
        #expect(throws: RTCPParseError.lengthExceedsDatagram(offset: 0, declared: 12, available: 8)) {
            try parseRTCP([0x80, 0xC9, 0, 2, 0, 0, 0, 1])
        }
        #expect(throws: RTCPParseError.invalidPadding(offset: 0, count: 0)) {
            try parseRTCP([0xA0, 0xC9, 0, 1, 0, 0, 0, 0])
        }
        #expect(throws: RTCPParseError.invalidPadding(offset: 0, count: 9)) {
            try parseRTCP([0xA0, 0xC9, 0, 1, 0, 0, 0, 9])
        }
        // An RR claiming one report block but holding none.
        #expect(throws: RTCPParseError.truncatedBody(packetType: 201, offset: 0, needed: 28, available: 4)) {
            try parseRTCP([0x81, 0xC9, 0, 1, 0, 0, 0, 1])
        }
        // An SDES item running past its packet.
        #expect(throws: RTCPParseError.self) { try parseRTCP([0x81, 0xCA, 0, 2, 0, 0, 0, 1, 1, 9, 0x61, 0x62]) }
        // The second packet of a compound is truncated.
        #expect(throws: RTCPParseError.truncatedHeader(offset: 8)) {
            try parseRTCP([0x80, 0xC9, 0, 1, 0, 0, 0, 1, 0x80])
        }
    }
}
