import CaptureCore
import Testing

@testable import CaptureRTP

@Suite("VP8 packetizer: the mid extension, and RTX")
struct RTPMidExtensionTests {
    @Test("every packet carries the mid, the last one CVO too, and packets stay balanced", arguments: [false, true])
    func midOnEveryPacket(orientation: Bool) throws {
        let configuration = RTPPacketizerConfiguration(
            ssrc: 7, initialSequenceNumber: 1, initialPictureID: 0, videoOrientationExtensionID: orientation ? 3 : nil,
            midExtensionID: 1, mid: "video0")
        let packetizer = VP8Packetizer(configuration: configuration)
        let frame = RTPTestPackets.frame(size: 5_000, key: true)
        let packets = RTPTestPackets.packetize(frame, with: packetizer, timestamp: 0, rotation: .degrees90)
        let lengths = packets.map(\.bytes.count)
        #expect(lengths.allSatisfy { $0 <= 1200 })
        #expect((lengths.max() ?? 0) - (lengths.min() ?? 0) <= 1, "whole packets differ by at most one byte")
        var reassembled: [UInt8] = []
        for (index, captured) in packets.enumerated() {
            let (packet, _, descriptorSize) = try captured.parsed()
            #expect(packet.extensionElement(id: 1)?.data == Array("video0".utf8))
            let isLast = index == packets.count - 1
            #expect((packet.extensionElement(id: 3)?.data == [1]) == (orientation && isLast))
            let start = packet.payloadRange.lowerBound + descriptorSize
            reassembled += captured.bytes[start..<packet.payloadRange.upperBound]
        }
        #expect(reassembled == frame)
    }

    @Test("a mid longer than 16 bytes or an ID outside 1...14 is not sent")
    func invalidMid() throws {
        for (id, mid) in [(UInt8(1), String(repeating: "m", count: 17)), (15, "0"), (0, "0"), (1, "")] {
            let packetizer = VP8Packetizer(
                configuration: RTPPacketizerConfiguration(midExtensionID: id, mid: mid))
            let packets = RTPTestPackets.packetize(
                RTPTestPackets.frame(size: 100, key: true), with: packetizer, timestamp: 0, rotation: .degrees0)
            let (packet, _, _) = try #require(packets.first).parsed()
            #expect(packet.header.extensionForm == nil)
        }
    }

    @Test("RTX keeps the header and extensions, puts the original sequence number first (RFC 4588 §4)")
    func rtxWrapping() throws {
        let packetizer = VP8Packetizer(
            configuration: RTPPacketizerConfiguration(
                ssrc: 0x1111, initialSequenceNumber: 0xABCD, midExtensionID: 1, mid: "0"))
        let captured = try #require(
            RTPTestPackets.packetize(
                RTPTestPackets.frame(size: 300, key: true), with: packetizer, timestamp: 4242, rotation: .degrees0
            ).first)
        let original = try captured.parsed().0
        var rtx = [UInt8](repeating: 0, count: captured.bytes.count + RTXPacket.overhead)
        let length = captured.bytes.withUnsafeBytes { source in
            rtx.withUnsafeMutableBytes {
                RTXPacket.write(wrapping: source, into: $0, payloadType: 97, ssrc: 0x2222, sequenceNumber: 5)
            }
        }
        #expect(length == captured.bytes.count + 2)
        let parsed = try rtx.withUnsafeBytes {
            try RTPPacket(parsing: UnsafeRawBufferPointer(rebasing: $0[0..<length]))
        }
        #expect(parsed.header.payloadType == 97)
        #expect(parsed.header.ssrc == 0x2222)
        #expect(parsed.header.sequenceNumber == 5)
        #expect(parsed.header.timestamp == 4242)
        #expect(parsed.header.marker == original.header.marker)
        #expect(parsed.extensionElement(id: 1)?.data == Array("0".utf8))
        let payload = Array(rtx[parsed.payloadRange])
        #expect(payload.prefix(2) == [0xAB, 0xCD])
        #expect(Array(payload.dropFirst(2)) == Array(captured.bytes[original.payloadRange]))
        // Too small a buffer, or not RTP: nothing written.
        var small = [UInt8](repeating: 0, count: captured.bytes.count)
        let none = captured.bytes.withUnsafeBytes { source in
            small.withUnsafeMutableBytes {
                RTXPacket.write(wrapping: source, into: $0, payloadType: 97, ssrc: 1, sequenceNumber: 1)
            }
        }
        #expect(none == 0)
    }
}
