import CaptureCore
import Testing

@testable import CaptureRTP

@Suite("VP8 packetizer: the rid extension on media, repaired-rid on RTX (RFC 8852)")
struct RTPStreamIDExtensionTests {
    /// mid 1, rid 4, repaired-rid 5, transport-wide 3, CVO 2: the ids the publish offer uses.
    static func simulcastConfiguration(
        rid: String = "h", repairedRidExtensionID: UInt8? = 5, orientation: Bool = true
    ) -> RTPPacketizerConfiguration {
        RTPPacketizerConfiguration(
            ssrc: 0x1111, initialSequenceNumber: 0xFFFE, initialPictureID: 0,
            videoOrientationExtensionID: orientation ? 2 : nil, midExtensionID: 1, mid: "0",
            transportSequenceNumberExtensionID: 3, ridExtensionID: 4, rid: rid,
            repairedRidExtensionID: repairedRidExtensionID)
    }

    /// Packetizes `frame` and copies each packet out with its transport-wide offset.
    static func packetize(
        _ frame: [UInt8], with packetizer: VP8Packetizer
    ) -> [(bytes: [UInt8], transportOffset: Int?)] {
        var packets: [(bytes: [UInt8], transportOffset: Int?)] = []
        frame.withUnsafeBytes { raw in
            packetizer.packetize(
                raw, rtpTimestamp: 9000, isKeyFrame: true, isDroppable: false, rotation: .degrees90
            ) { (packet: inout OutgoingRTPPacket) in
                packets.append((Array(packet.bytes), packet.transportSequenceNumberOffset))
            }
        }
        return packets
    }

    /// The RTX packet for `original` as `RTXPacket.write` builds it with rid 4 and `repairedRidExtensionID`.
    static func rtx(of original: [UInt8], repairedRidExtensionID: UInt8?) -> [UInt8] {
        var rtx = [UInt8](repeating: 0xEE, count: original.count + RTXPacket.overhead)
        let length = original.withUnsafeBytes { source in
            rtx.withUnsafeMutableBytes {
                RTXPacket.write(
                    wrapping: source, into: $0, payloadType: 97, ssrc: 0x2222, sequenceNumber: 7, ridExtensionID: 4,
                    repairedRidExtensionID: repairedRidExtensionID)
            }
        }
        return Array(rtx.prefix(length))
    }

    @Test(
        "every media packet carries mid, then rid, then the transport-wide element at the offset it says; payload intact",
        arguments: ["h", "layer_2-HIGH", String(repeating: "r", count: 16)], [false, true])
    func ridOnEveryPacket(rid: String, orientation: Bool) throws {
        let packetizer = VP8Packetizer(configuration: Self.simulcastConfiguration(rid: rid, orientation: orientation))
        #expect(packetizer.configuration.ridExtensionID == 4)
        #expect(packetizer.configuration.repairedRidExtensionID == 5)
        let frame = RTPTestPackets.frame(size: 5_000, key: true)
        let packets = Self.packetize(frame, with: packetizer)
        #expect(packets.count > 1)
        let lengths = packets.map(\.bytes.count)
        #expect(lengths.allSatisfy { $0 <= 1200 })
        #expect((lengths.max() ?? 0) - (lengths.min() ?? 0) <= 1, "whole packets differ by at most one byte")
        var reassembled: [UInt8] = []
        for (index, (bytes, transportOffset)) in packets.enumerated() {
            let (packet, descriptorSize) = try bytes.withUnsafeBytes { raw in
                let packet = try RTPPacket(parsing: raw)
                let (_, size) = try VP8PayloadDescriptor.parse(
                    UnsafeRawBufferPointer(rebasing: raw[packet.payloadRange]))
                return (packet, size)
            }
            let elements = packet.header.extensionElements
            let isLast = index == packets.count - 1
            #expect(elements.map(\.id) == [1, 4, 3] + (orientation && isLast ? [2] : []), "mid, rid, transport-wide")
            #expect(packet.extensionElement(id: 4)?.data == Array(rid.utf8))
            #expect(packet.extensionElement(id: 5) == nil)
            // 12-byte header, 4-byte extension header, mid "0" (2 bytes), then the rid element (1 + its length).
            let ridLocation = bytes.withUnsafeBytes { RTPHeaderExtensionElement.locate(id: 4, in: $0) }
            #expect(ridLocation?.idOffset == 18)
            #expect(ridLocation?.dataLength == rid.utf8.count)
            #expect(transportOffset == 18 + 1 + rid.utf8.count + 1)
            #expect(
                bytes.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == transportOffset)
            #expect(TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: 3) == 0)
            reassembled += bytes[(packet.payloadRange.lowerBound + descriptorSize)..<packet.payloadRange.upperBound]
        }
        #expect(reassembled == frame)
    }

    @Test("a rid that is not an RFC 8851 rid-id of 1…16 bytes, or an id outside 1...14, is not sent; nor is rrid then")
    func invalidRid() throws {
        let cases: [(UInt8?, String)] = [
            (4, ""), (4, String(repeating: "r", count: 17)), (4, "h m"), (4, "hé"), (4, "~h"), (0, "h"), (15, "h"),
            (nil, "h"),
        ]
        for (id, rid) in cases {
            let packetizer = VP8Packetizer(
                configuration: RTPPacketizerConfiguration(
                    midExtensionID: 1, mid: "0", ridExtensionID: id, rid: rid, repairedRidExtensionID: 5))
            #expect(packetizer.configuration.ridExtensionID == nil, "\(rid)")
            #expect(packetizer.configuration.repairedRidExtensionID == nil, "\(rid)")
            let packets = Self.packetize(RTPTestPackets.frame(size: 100, key: true), with: packetizer)
            let packet = try #require(packets.first).bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
            #expect(packet.header.extensionElements.map(\.id) == [1])
        }
        // A repaired-rid id outside 1...14, or the rid's own id, is dropped; the rid is still sent.
        for repaired: UInt8 in [0, 15, 4] {
            let packetizer = VP8Packetizer(
                configuration: RTPPacketizerConfiguration(ridExtensionID: 4, rid: "l", repairedRidExtensionID: repaired)
            )
            #expect(packetizer.configuration.ridExtensionID == 4)
            #expect(packetizer.configuration.repairedRidExtensionID == nil)
        }
        #expect(RTPStreamIDExtension.isValid("Aa0-_"))
        #expect(!RTPStreamIDExtension.isValid("a,b"))
        #expect(!RTPStreamIDExtension.isValid("a;b"))
    }

    @Test("an RTX copy carries repaired-rid with the same rid and no rid; mid and the transport-wide offset stay")
    func rtxCarriesRepairedRid() throws {
        let packetizer = VP8Packetizer(configuration: Self.simulcastConfiguration(rid: "m"))
        let packets = Self.packetize(RTPTestPackets.frame(size: 3_000, key: true), with: packetizer)
        for (original, transportOffset) in packets {
            let rtx = Self.rtx(of: original, repairedRidExtensionID: 5)
            #expect(rtx.count == original.count + RTXPacket.overhead)
            let parsed = try rtx.withUnsafeBytes { try RTPPacket(parsing: $0) }
            let source = try original.withUnsafeBytes { try RTPPacket(parsing: $0) }
            #expect(parsed.header.ssrc == 0x2222)
            #expect(parsed.header.payloadType == 97)
            #expect(parsed.header.sequenceNumber == 7)
            #expect(
                parsed.header.extensionElements.map(\.id)
                    == source.header.extensionElements.map { $0.id == 4 ? 5 : $0.id })
            #expect(parsed.extensionElement(id: 4) == nil, "no rtp-stream-id on RTX (RFC 8852 §3.2)")
            #expect(parsed.extensionElement(id: 5)?.data == Array("m".utf8))
            #expect(parsed.extensionElement(id: 1)?.data == Array("0".utf8))
            #expect(
                rtx.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == transportOffset)
            let payload = Array(rtx[parsed.payloadRange])
            let sequenceNumber = source.header.sequenceNumber
            #expect(Array(payload.prefix(2)) == [UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)])
            #expect(Array(payload.dropFirst(2)) == Array(original[source.payloadRange]))
        }
    }

    @Test("without a repaired-rid id the RTX copy's rid element becomes padding: no id names the stream")
    func rtxWithoutRepairedRid() throws {
        let packetizer = VP8Packetizer(
            configuration: Self.simulcastConfiguration(rid: "low", repairedRidExtensionID: nil))
        let (original, transportOffset) = try #require(
            Self.packetize(RTPTestPackets.frame(size: 500, key: true), with: packetizer).first)
        let rtx = Self.rtx(of: original, repairedRidExtensionID: nil)
        let parsed = try rtx.withUnsafeBytes { try RTPPacket(parsing: $0) }
        #expect(parsed.header.extensionElements.map(\.id) == [1, 3, 2], "mid, transport-wide, CVO (one packet)")
        #expect(Array(rtx[18..<22]) == [0, 0, 0, 0], "the rid element's four bytes are zero padding")
        #expect(rtx.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == transportOffset)
        // The same with a repaired-rid id that does not fit the one-byte form.
        let invalid = Self.rtx(of: original, repairedRidExtensionID: 15)
        #expect(invalid == rtx)
    }

    @Test("RTX rewrites rid in a two-byte block too, and leaves a packet without rid as it was")
    func rtxOtherHeaders() throws {
        let fixed: [UInt8] = [0x90, 96, 0x12, 0x34, 0, 0, 0, 9, 0, 0, 0, 7]
        // Two-byte form (0x1000): padding, rid "hi" under 4, transport-wide under 3; payload 0xAA 0xBB.
        let twoByte = fixed + [0x10, 0x00, 0, 3, 0, 4, 2, 0x68, 0x69, 3, 2, 0, 0, 0, 0, 0] + [0xAA, 0xBB]
        let rewritten = Self.rtx(of: twoByte, repairedRidExtensionID: 200)
        let parsed = try rewritten.withUnsafeBytes { try RTPPacket(parsing: $0) }
        #expect(parsed.header.extensionForm == .twoByte)
        #expect(parsed.header.extensionElements.map(\.id) == [200, 3])
        #expect(parsed.extensionElement(id: 200)?.data == [0x68, 0x69])
        #expect(Array(rewritten[parsed.payloadRange]) == [0x12, 0x34, 0xAA, 0xBB])
        let blanked = try Self.rtx(of: twoByte, repairedRidExtensionID: nil).withUnsafeBytes {
            try RTPPacket(parsing: $0)
        }
        #expect(blanked.header.extensionElements.map(\.id) == [3])
        // No rid element (mid only), or no extension at all: copied unchanged apart from the RTX fields.
        let midOnly = fixed + [0xBE, 0xDE, 0, 1, 0x10, 0x30, 0, 0] + [0xAA]
        #expect(Array(Self.rtx(of: midOnly, repairedRidExtensionID: 5)[12..<20]) == Array(midOnly[12..<20]))
        var plain = fixed + [0xAA]
        plain[0] = 0x80
        #expect(Self.rtx(of: plain, repairedRidExtensionID: 5).count == plain.count + 2)
    }

    @Test("once the identifiers stop, packets carry no mid or rid; the transport-wide offset and budget follow")
    func identifiersStop() throws {
        let packetizer = VP8Packetizer(configuration: Self.simulcastConfiguration(rid: "h", orientation: true))
        let frame = RTPTestPackets.frame(size: 5_000, key: true)
        let before = Self.packetize(frame, with: packetizer)
        packetizer.stopSendingStreamIdentifiers()
        packetizer.stopSendingStreamIdentifiers()  // idempotent
        #expect(!packetizer.sendsStreamIdentifiers)
        #expect(packetizer.configuration.ridExtensionID == 4, "the ids stay: RTX relabels packets sent before")
        let after = Self.packetize(frame, with: packetizer)
        #expect(after.map(\.bytes.count).allSatisfy { $0 <= 1200 })
        // Transport-wide (4 bytes) only: an 8-byte block instead of 12 (mid 2 + rid 2 + transport-wide 4).
        #expect(after[0].bytes.count <= before[0].bytes.count)
        var reassembled: [UInt8] = []
        for (index, (bytes, transportOffset)) in after.enumerated() {
            let packet = try bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
            let isLast = index == after.count - 1
            #expect(packet.header.extensionElements.map(\.id) == [3] + (isLast ? [2] : []))
            #expect(transportOffset == 12 + 4 + 1)
            #expect(
                bytes.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == transportOffset)
            let size = try bytes.withUnsafeBytes {
                try VP8PayloadDescriptor.parse(UnsafeRawBufferPointer(rebasing: $0[packet.payloadRange])).1
            }
            reassembled += bytes[(packet.payloadRange.lowerBound + size)..<packet.payloadRange.upperBound]
        }
        #expect(reassembled == frame)
        // With room kept for the identifiers an RTX copy gets back: no copy is larger than the packet limit + 2.
        let kept = VP8Packetizer(configuration: Self.simulcastConfiguration(rid: "h", orientation: true))
        kept.stopSendingStreamIdentifiers(reservingRoom: 4)
        for (bytes, _) in Self.packetize(frame, with: kept) {
            #expect(Self.rtx(of: bytes, appending: [0x10, 0x30, 0x50, 0x68]).count <= 1200 + RTXPacket.overhead)
        }
        kept.releaseReservedRoom()
        #expect(Self.packetize(frame, with: kept).map(\.bytes.count) == after.map(\.bytes.count))
        // The budget: a frame that needed two packets with the identifiers fits one without them.
        let fresh = VP8Packetizer(configuration: Self.simulcastConfiguration(rid: "h", orientation: false))
        let bigger = RTPTestPackets.frame(size: 1200 - 12 - 8 - 6, key: true)
        #expect(Self.packetize(bigger, with: fresh).count == 2)
        fresh.stopSendingStreamIdentifiers()
        #expect(Self.packetize(bigger, with: fresh).count == 1)
    }

    /// The RTX packet for `original` with `elements` appended (rid 4 relabelled to 5), in a buffer of `room` bytes.
    static func rtx(of original: [UInt8], appending elements: [UInt8], room: Int? = nil) -> [UInt8] {
        var rtx = [UInt8](
            repeating: 0xEE,
            count: room ?? original.count + RTXPacket.overhead + RTXPacket.maximumGrowth(appending: elements.count))
        let length = original.withUnsafeBytes { source in
            elements.withUnsafeBytes { elements in
                rtx.withUnsafeMutableBytes {
                    RTXPacket.write(
                        wrapping: source, into: $0, payloadType: 97, ssrc: 0x2222, sequenceNumber: 7,
                        ridExtensionID: 4, repairedRidExtensionID: 5, appending: elements)
                }
            }
        }
        return Array(rtx.prefix(length))
    }

    @Test("RTX appends the mid and repaired-rid an original went without: to its block, or in a block of its own")
    func rtxAppendsIdentifiers() throws {
        let identifiers: [UInt8] = [0x10, 0x30, 0x50, 0x68]  // mid "0" under 1, repaired-rid "h" under 5
        let fixed: [UInt8] = [0x90, 96, 0x12, 0x34, 0, 0, 0, 9, 0, 0, 0, 7]
        // A one-byte block with the transport-wide element only (3 bytes, one of padding), payload AA BB CC.
        let withBlock = fixed + [0xBE, 0xDE, 0, 1, 0x31, 0x00, 0x2A, 0x00] + [0xAA, 0xBB, 0xCC]
        var plain = fixed + [0xAA, 0xBB, 0xCC]
        plain[0] = 0x80
        for original in [withBlock, plain] {
            let rtx = Self.rtx(of: original, appending: identifiers)
            let parsed = try rtx.withUnsafeBytes { try RTPPacket(parsing: $0) }
            let source = try original.withUnsafeBytes { try RTPPacket(parsing: $0) }
            #expect(parsed.header.extensionForm == .oneByte)
            #expect(
                parsed.header.extensionElements.map(\.id) == source.header.extensionElements.map(\.id) + [1, 5])
            #expect(parsed.extensionElement(id: 1)?.data == Array("0".utf8))
            #expect(parsed.extensionElement(id: 5)?.data == Array("h".utf8))
            #expect((parsed.payloadRange.lowerBound - 12) % 4 == 0, "the block stays 32-bit aligned")
            #expect(Array(rtx[parsed.payloadRange]) == [0x12, 0x34, 0xAA, 0xBB, 0xCC])
            #expect(rtx.count <= original.count + RTXPacket.overhead + RTXPacket.maximumGrowth(appending: 4))
            if original == withBlock {
                #expect(rtx.withUnsafeBytes { TransportSequenceNumberExtension.dataOffset(in: $0, id: 3) } == 17)
            }
            // A buffer too small for the grown copy: nothing written.
            #expect(Self.rtx(of: original, appending: identifiers, room: original.count + 2).isEmpty)
        }
        // A two-byte block cannot take one-byte elements: copied as without them.
        let twoByte = fixed + [0x10, 0x00, 0, 1, 3, 2, 0, 0] + [0xAA]
        let copy = Self.rtx(of: twoByte, appending: identifiers)
        #expect(copy.count == twoByte.count + RTXPacket.overhead)
        #expect(try copy.withUnsafeBytes { try RTPPacket(parsing: $0) }.header.extensionElements.map(\.id) == [3])
    }

    @Test("locate: both forms, padding, ID 15, malformed blocks")
    func locate() {
        func location(_ bytes: [UInt8], id: UInt8) -> RTPHeaderExtensionElement.Location? {
            bytes.withUnsafeBytes { RTPHeaderExtensionElement.locate(id: id, in: $0) }
        }
        let fixed: [UInt8] = [0x90, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7]
        // One-byte: a padding byte, mid "0" under 1, rid "ab" under 4, a padding byte.
        let oneByte = fixed + [0xBE, 0xDE, 0, 2, 0x00, 0x10, 0x30, 0x41, 0x61, 0x62, 0, 0]
        #expect(
            location(oneByte, id: 4)
                == RTPHeaderExtensionElement.Location(form: .oneByte, idOffset: 19, dataOffset: 20, dataLength: 2))
        #expect(location(oneByte, id: 4)?.elementRange == 19..<22)
        #expect(location(oneByte, id: 1)?.dataOffset == 18)
        #expect(location(oneByte, id: 2) == nil)
        #expect(location(oneByte, id: 0) == nil)
        // ID 15 stops the parsing: the rid after it is not found.
        #expect(location(fixed + [0xBE, 0xDE, 0, 1, 0xF0, 0x41, 0x61, 0x62], id: 4) == nil)
        // A length past the block, a block past the packet, a CSRC count past the end, another profile.
        #expect(location(fixed + [0xBE, 0xDE, 0, 1, 0x00, 0x00, 0x43, 0x61], id: 4) == nil)
        #expect(location(Array(oneByte.prefix(20)), id: 4) == nil)
        var csrcs = oneByte
        csrcs[0] = 0x9F
        #expect(location(csrcs, id: 4) == nil)
        #expect(location(fixed + [0x12, 0x34, 0, 1, 0x41, 0x61, 0x62, 0], id: 4) == nil)
        // Two-byte: id 4, length 0 (allowed there); a truncated element.
        #expect(
            location(fixed + [0x10, 0x00, 0, 1, 4, 0, 0, 0], id: 4)
                == RTPHeaderExtensionElement.Location(form: .twoByte, idOffset: 16, dataOffset: 18, dataLength: 0))
        #expect(location(fixed + [0x10, 0x00, 0, 1, 0, 0, 0, 4], id: 4) == nil)
        #expect(location([], id: 4) == nil)
    }

    @Test("padding probes on a layer's RTX stream carry mid and repaired-rid, then the transport-wide element")
    func paddingNamesItsStream() throws {
        var buffer = [UInt8](repeating: 0xEE, count: 300)
        let header = RTPPaddingPacket.headerLength(transportWideID: 3, midID: 1, mid: "0", repairedRidID: 5, rid: "m")
        // Fixed header, extension header, mid (2) + rrid (2) + transport-wide (3) = 7 bytes, padded to 8.
        #expect(header == 12 + 4 + 8)
        let length = buffer.withUnsafeMutableBytes {
            RTPPaddingPacket.write(
                into: $0, payloadType: 97, ssrc: 0x2222, sequenceNumber: 9, timestamp: 90, transportWideID: 3,
                paddingLength: 200, midID: 1, mid: "0", repairedRidID: 5, rid: "m")
        }
        #expect(length == header + 200)
        let bytes = Array(buffer.prefix(length))
        let packet = try bytes.withUnsafeBytes { try RTPPacket(parsing: $0) }
        #expect(packet.header.extensionElements.map(\.id) == [1, 5, 3])
        #expect(packet.extensionElement(id: 1)?.data == Array("0".utf8))
        #expect(packet.extensionElement(id: 5)?.data == Array("m".utf8))
        #expect(packet.extensionElement(id: 4) == nil)
        #expect(TransportSequenceNumberExtension.sequenceNumber(in: packet.header, id: 3) == 0)
        #expect(packet.header.paddingLength == 200)
        #expect(packet.payloadRange.isEmpty)
        #expect(bytes[header + 199] == 200)
        // Invalid ids or values leave their element out, and are not counted in the header.
        #expect(
            RTPPaddingPacket.headerLength(transportWideID: 3, midID: 15, mid: "0", repairedRidID: 5, rid: "m m")
                == RTPPaddingPacket.headerLength(transportWideID: 3))
    }

    @Test("a padding packet with only the transport-wide element is byte for byte the former layout")
    func paddingWithoutStreamIDsUnchanged() {
        var buffer = [UInt8](repeating: 0xEE, count: 40)
        let length = buffer.withUnsafeMutableBytes {
            RTPPaddingPacket.write(
                into: $0, payloadType: 97, ssrc: 0x0102_0304, sequenceNumber: 0x0506, timestamp: 0x0708_090A,
                transportWideID: 3, paddingLength: 4)
        }
        #expect(length == 24)
        #expect(
            Array(buffer.prefix(length)) == [
                0xB0, 97, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x01, 0x02, 0x03, 0x04,
                0xBE, 0xDE, 0x00, 0x01, 0x31, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x04,
            ])
        #expect(RTPPaddingPacket.headerLength(transportWideID: nil) == 12)
    }
}
