import CaptureCore
import Testing

@testable import CaptureRTP

@Suite("TWCC: the transport-wide sequence number in the packetizer's packets")
struct TransportSequenceNumberPacketizerTests {
    @Test(
        "every packet carries a zeroed 2-byte element where the packet says, after the mid; packets stay balanced",
        arguments: [false, true])
    func elementOnEveryPacket(orientation: Bool) throws {
        let packetizer = VP8Packetizer(
            configuration: RTPPacketizerConfiguration(
                ssrc: 7, initialSequenceNumber: 1, initialPictureID: 0,
                videoOrientationExtensionID: orientation ? 2 : nil, midExtensionID: 1, mid: "0",
                transportSequenceNumberExtensionID: 3))
        var offsets: [Int?] = []
        var packets: [[UInt8]] = []
        RTPTestPackets.frame(size: 5_000, key: true).withUnsafeBytes { frame in
            packetizer.packetize(
                frame, rtpTimestamp: 0, isKeyFrame: true, isDroppable: false, rotation: .degrees90
            ) { (packet: inout OutgoingRTPPacket) in
                offsets.append(packet.transportSequenceNumberOffset)
                packets.append(Array(packet.bytes))
            }
        }
        let lengths = packets.map(\.count)
        #expect(lengths.allSatisfy { $0 <= 1200 })
        #expect((lengths.max() ?? 0) - (lengths.min() ?? 0) <= 1, "whole packets differ by at most one byte")
        for (index, bytes) in packets.enumerated() {
            let packet = try bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
            #expect(packet.header.extensionElement(id: 1)?.data == Array("0".utf8))
            #expect(TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: 3) == 0)
            let isLast = index == packets.count - 1
            #expect((packet.header.extensionElement(id: 2) != nil) == (orientation && isLast))
            // 12-byte header, 4-byte extension header, the mid element (2 bytes), then this element's ID byte.
            #expect(offsets[index] == 19)
            #expect(bytes.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == 19)
        }
    }

    @Test("without an id, or with one outside 1...14, no element and no offset")
    func notConfigured() {
        for id: UInt8? in [nil, 0, 15] {
            let packetizer = VP8Packetizer(
                configuration: RTPPacketizerConfiguration(transportSequenceNumberExtensionID: id))
            var offset: Int?? = .none
            RTPTestPackets.frame(size: 100, key: true).withUnsafeBytes { frame in
                packetizer.packetize(
                    frame, rtpTimestamp: 0, isKeyFrame: true, isDroppable: false, rotation: .degrees0
                ) { (packet: inout OutgoingRTPPacket) in offset = .some(packet.transportSequenceNumberOffset) }
            }
            #expect(offset == .some(nil))
        }
    }

    @Test("dataOffset: finds the element in the one-byte and two-byte forms, in an RTX copy, and nothing else")
    func dataOffset() {
        func offset(_ bytes: [UInt8], id: UInt8 = 3) -> Int? {
            bytes.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: id) }
        }
        let fixed: [UInt8] = [0x90, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7]
        // One-byte form: padding, mid "0" under 1, then id 3 with two bytes.
        let oneByte = fixed + [0xBE, 0xDE, 0, 2, 0x00, 0x10, 0x30, 0x31, 0xAB, 0xCD, 0, 0] + [1, 2, 3]
        #expect(offset(oneByte) == 20)
        #expect(offset(oneByte, id: 1) == nil, "the mid is one byte, not this extension")
        #expect(offset(oneByte, id: 4) == nil)
        // Two-byte form (0x1000): id 3, length 2.
        let twoByte = fixed + [0x10, 0x00, 0, 1, 3, 2, 0xAB, 0xCD]
        #expect(offset(twoByte) == 18)
        // Truncated blocks, a length running past the block, id 15, no X bit, a CSRC count past the end.
        #expect(offset(Array(oneByte.prefix(18))) == nil)
        #expect(offset(fixed + [0xBE, 0xDE, 0, 1, 0x3F, 0, 0, 0]) == nil)
        #expect(offset(fixed + [0xBE, 0xDE, 0, 1, 0xF0, 0, 0, 0]) == nil)
        var noExtension = oneByte
        noExtension[0] = 0x80
        #expect(offset(noExtension) == nil)
        var csrcs = oneByte
        csrcs[0] = 0x9F
        #expect(offset(csrcs) == nil)
        #expect(offset([]) == nil)
        // An RTX copy keeps the header, so the element is where it was.
        var rtx = [UInt8](repeating: 0, count: oneByte.count + RTXPacket.overhead)
        let length = oneByte.withUnsafeBytes { source in
            rtx.withUnsafeMutableBytes {
                RTXPacket.write(wrapping: source, into: $0, payloadType: 97, ssrc: 9, sequenceNumber: 5)
            }
        }
        #expect(offset(Array(rtx.prefix(length))) == 20)
    }
}
