import CaptureCore
import CaptureNet
import CaptureRTP
import Testing

@testable import CaptureCall

@Suite("VideoSender: a simulcast layer's rid on media, repaired-rid on its RTX (RFC 8852)")
struct SenderStreamIDTests {
    /// A sender of layer `rid` (mid 1 "0", rid 4, repaired-rid `repairedRidExtensionID`; SSRC 0xCAFE, RTX 0xBEEF).
    static func sender(rid: String, repairedRidExtensionID: UInt8?) throws -> (VideoSender, RecordingTransport) {
        let transport = RecordingTransport()
        let sender = try VideoSender(
            configuration: VideoSenderConfiguration(
                remote: .loopbackIPv4(port: 9),
                packetizer: RTPPacketizerConfiguration(
                    ssrc: 0xCAFE, initialSequenceNumber: 100, midExtensionID: 1, mid: "0", ridExtensionID: 4,
                    rid: rid, repairedRidExtensionID: repairedRidExtensionID),
                retransmission: RetransmissionConfiguration(
                    rtxPayloadType: 97, rtxSSRC: 0xBEEF, maximumAge: SenderRetransmissionTests.noAgeLimit)),
            transport: transport)
        return (sender, transport)
    }

    @Test("media packets carry rid; NACKed packets come back on the RTX SSRC with repaired-rid and without rid")
    func rtxCarriesRepairedRid() throws {
        let (sender, transport) = try Self.sender(rid: "h", repairedRidExtensionID: 5)
        defer { sender.finish() }
        sender.consume(SenderRetransmissionTests.frame(size: 6_000, seed: 3))
        let media = try SenderRetransmissionTests.rtp(transport.datagrams)
        #expect(media.count == 6)
        for packet in media {
            #expect(packet.extensionElement(id: 4)?.data == Array("h".utf8))
            #expect(packet.extensionElement(id: 5) == nil)
        }
        SenderRetransmissionTests.nack([media[0].header.sequenceNumber, media[3].header.sequenceNumber], to: sender)
        let datagrams = transport.datagrams.filter { DatagramIsRTCP.check($0) == false }
        let rtx = try SenderRetransmissionTests.rtp(datagrams).enumerated().filter { $0.element.header.ssrc == 0xBEEF }
        #expect(rtx.count == 2)
        for ((index, packet), original) in zip(rtx, [media[0], media[3]]) {
            #expect(packet.extensionElement(id: 4) == nil, "an RTX packet must not carry rtp-stream-id")
            #expect(packet.extensionElement(id: 5)?.data == Array("h".utf8))
            #expect(packet.extensionElement(id: 1)?.data == Array("0".utf8))
            // The payload: the original sequence number, then the original payload, byte for byte.
            let bytes = datagrams[index]
            let originalBytes = datagrams[media.firstIndex(of: original) ?? 0]
            let sequenceNumber = original.header.sequenceNumber
            #expect(
                Array(bytes[packet.payloadRange].prefix(2)) == [
                    UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF),
                ])
            #expect(Array(bytes[packet.payloadRange].dropFirst(2)) == Array(originalBytes[original.payloadRange]))
        }
        #expect(sender.statistics.retransmissions == 2)
    }

    @Test("without a repaired-rid id, the RTX copy names no stream (its rid element is padding)")
    func rtxWithoutRepairedRid() throws {
        let (sender, transport) = try Self.sender(rid: "l", repairedRidExtensionID: nil)
        defer { sender.finish() }
        sender.consume(SenderRetransmissionTests.frame(size: 2_000, seed: 4))
        let media = try SenderRetransmissionTests.rtp(transport.datagrams)
        #expect(media.allSatisfy { $0.extensionElement(id: 4)?.data == Array("l".utf8) })
        SenderRetransmissionTests.nack([media[0].header.sequenceNumber], to: sender)
        let rtx = try #require(try SenderRetransmissionTests.rtp(transport.datagrams).last)
        #expect(rtx.header.ssrc == 0xBEEF)
        #expect(rtx.header.extensionElements.map(\.id) == [1])
    }

    @Test("a layer's padding probes carry mid and repaired-rid on the RTX SSRC; a single stream's do not")
    func paddingOnALayer() throws {
        for rid in ["l", ""] {
            let session = try RTPSendSession(
                configuration: VideoSenderConfiguration(
                    remote: .loopbackIPv4(port: 9), rtcpMux: true,
                    packetizer: RTPPacketizerConfiguration(
                        ssrc: 0xCAFE, midExtensionID: 1, mid: "0", transportSequenceNumberExtensionID: 3,
                        ridExtensionID: 4, rid: rid, repairedRidExtensionID: 5),
                    retransmission: RetransmissionConfiguration(rtxPayloadType: 97, rtxSSRC: 0xBEEF)),
                nowNs: 0, transportWide: TransportWideSender(extensionID: 3, initialSequenceNumber: 40))
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_300, alignment: 16)
            defer { buffer.deallocate() }
            let length = session.writePadding(into: buffer, size: 200)
            #expect(length == 200, "the size asked for, whatever the header")
            var sent: [[UInt8]] = []
            #expect(
                session.transmit(buffer, length: length, kind: .padding, probeClusterID: 1, nowNs: 0) {
                    sent.append(Array($0))
                    return true
                })
            let bytes = try #require(sent.first)
            let packet = try bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
            #expect(packet.header.ssrc == 0xBEEF)
            #expect(TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: 3) == 40)
            if rid.isEmpty {
                #expect(packet.header.extensionElements.map(\.id) == [3])
            } else {
                #expect(packet.header.extensionElements.map(\.id) == [1, 5, 3])
                #expect(packet.extensionElement(id: 5)?.data == Array(rid.utf8))
            }
        }
    }

    /// A receiver report from the peer with one block naming each of `ssrcs`.
    static func receiverReport(naming ssrcs: [UInt32]) -> RTCPPacket {
        let blocks = ssrcs.map {
            RTCPReportBlock(
                ssrc: $0, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: 0, delaySinceLastSenderReport: 0)
        }
        return .receiverReport(RTCPReceiverReport(ssrc: 1, reportBlocks: blocks))
    }

    /// Hands `sender` a receiver report naming `ssrcs`, serialized as it would arrive.
    static func report(naming ssrcs: [UInt32], to sender: VideoSender) {
        var bytes = RTCPCompoundPacket.serialize([receiverReport(naming: ssrcs)])
        let length = bytes.count
        bytes.withUnsafeMutableBytes { sender.receiveRTCP($0, length: length) }
    }

    @Test("once the peer reports on the SSRC, media goes without mid and rid; RTX keeps them until it reports on RTX")
    func identifiersStopOnceAcknowledged() throws {
        let (sender, transport) = try Self.sender(rid: "h", repairedRidExtensionID: 5)
        defer { sender.finish() }
        sender.consume(SenderRetransmissionTests.frame(size: 6_000, seed: 5))
        let before = try SenderRetransmissionTests.rtp(transport.datagrams)
        #expect(before.allSatisfy { $0.header.extensionElements.map(\.id) == [1, 4] })
        // A block naming another SSRC changes nothing.
        Self.report(naming: [0x1234], to: sender)
        #expect(sender.statistics.ssrcAcknowledged == false)

        Self.report(naming: [0xCAFE], to: sender)
        #expect(sender.statistics.ssrcAcknowledged)
        #expect(sender.statistics.rtxSSRCAcknowledged == false)
        let sentBefore = transport.datagrams.count
        sender.consume(SenderRetransmissionTests.frame(size: 6_000, seed: 6))
        let after = try SenderRetransmissionTests.rtp(Array(transport.datagrams[sentBefore...]))
        #expect(after.allSatisfy { $0.header.extensionElements.isEmpty }, "no mid, no rid: no extension block")
        // The 6 bytes of elements (and the 4-byte block header, 8 bytes padded) are payload now: the same frame in
        // no more packets, each one smaller or fuller.
        #expect(after.count <= before.count)

        // A NACK for a packet sent without the identifiers: the RTX copy gets the mid and repaired-rid back; one sent
        // with them is relabelled as before.
        let nacked = [before[1].header.sequenceNumber, after[2].header.sequenceNumber]
        var mark = transport.datagrams.count
        SenderRetransmissionTests.nack(nacked, to: sender)
        var rtx = try SenderRetransmissionTests.rtp(Array(transport.datagrams[mark...]))
        #expect(rtx.count == 2)
        #expect(transport.datagrams[mark...].allSatisfy { $0.count <= 1200 + RTXPacket.overhead }, "room was kept")
        for packet in rtx {
            #expect(packet.header.ssrc == 0xBEEF)
            #expect(packet.extensionElement(id: 1)?.data == Array("0".utf8))
            #expect(packet.extensionElement(id: 5)?.data == Array("h".utf8))
            #expect(packet.extensionElement(id: 4) == nil)
        }
        // The appended elements moved the payload, not changed it.
        let originalBytes = try #require(
            transport.datagrams.first { bytes in
                (try? bytes.withUnsafeBytes { try RTPPacket(parsing: $0) })?.header.sequenceNumber == nacked[1]
                    && (try? bytes.withUnsafeBytes { try RTPPacket(parsing: $0) })?.header.ssrc == 0xCAFE
            })
        let original = try originalBytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
        let copyBytes = transport.datagrams[mark + 1]
        #expect(Array(copyBytes[rtx[1].payloadRange].dropFirst(2)) == Array(originalBytes[original.payloadRange]))

        // Once the peer reports on the RTX SSRC too, copies of such packets go without them.
        Self.report(naming: [0xCAFE, 0xBEEF], to: sender)
        #expect(sender.statistics.rtxSSRCAcknowledged)
        mark = transport.datagrams.count
        SenderRetransmissionTests.nack([after[3].header.sequenceNumber], to: sender)
        rtx = try SenderRetransmissionTests.rtp(Array(transport.datagrams[mark...]))
        #expect(rtx.count == 1)
        #expect(rtx.first?.header.extensionElements.isEmpty == true)
    }

    @Test("a layer's padding drops mid and repaired-rid once the peer reports on the RTX SSRC")
    func paddingStopsOnceAcknowledged() throws {
        let session = try RTPSendSession(
            configuration: VideoSenderConfiguration(
                remote: .loopbackIPv4(port: 9), rtcpMux: true,
                packetizer: RTPPacketizerConfiguration(
                    ssrc: 0xCAFE, midExtensionID: 1, mid: "0", transportSequenceNumberExtensionID: 3,
                    ridExtensionID: 4, rid: "l", repairedRidExtensionID: 5),
                retransmission: RetransmissionConfiguration(rtxPayloadType: 97, rtxSSRC: 0xBEEF)),
            nowNs: 0, transportWide: TransportWideSender(extensionID: 3, initialSequenceNumber: 40))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_300, alignment: 16)
        defer { buffer.deallocate() }
        func paddingIDs() throws -> [UInt8] {
            let length = session.writePadding(into: buffer, size: 200)
            let packet = try RTPPacket(parsing: UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
            return packet.header.extensionElements.map(\.id)
        }
        session.handleRTCP(
            [Self.receiverReport(naming: [0xCAFE])], nowNs: 1, currentTargetKbps: nil, output: { _ in true })
        #expect(try paddingIDs() == [1, 5, 3], "the media SSRC's report does not name the RTX SSRC")
        session.handleRTCP(
            [Self.receiverReport(naming: [0xBEEF])], nowNs: 2, currentTargetKbps: nil, output: { _ in true })
        #expect(try paddingIDs() == [3])
        #expect(session.statistics.rtxSSRCAcknowledged)
    }
}
