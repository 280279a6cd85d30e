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
}
