import CaptureCore
import Testing

@testable import CaptureRTP

/// RFC 7741's temporal fields on the wire: TID, Y and TL0PICIDX written by the packetizer, read back by the
/// descriptor parser and the assembler.
@Suite("VP8 packetizer: temporal layers")
struct TemporalLayerPacketizerTests {
    /// Packetizes frames of the L1T3 pattern (0 2 1 2 …); returns each frame's packets.
    static func layered(
        _ layers: [UInt8], syncs: [Bool], size: Int = 3000, packetizer: VP8Packetizer
    ) -> [[CapturedPacket]] {
        layers.enumerated().map { index, layer in
            RTPTestPackets.packetize(
                RTPTestPackets.frame(size: size, key: index == 0, seed: index), with: packetizer,
                timestamp: UInt32(index * 3000), key: index == 0, droppable: layer == 2, layer: layer,
                sync: syncs[index])
        }
    }

    static func descriptor(_ packet: CapturedPacket) throws -> VP8PayloadDescriptor {
        try packet.parsed().descriptor
    }

    @Test("Every packet carries TID and Y; TL0PICIDX counts base-layer frames; packets stay within the MTU")
    func fieldsOnTheWire() throws {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(maxPacketSize: 1200))
        let layers: [UInt8] = [0, 2, 1, 2, 0, 2, 1, 2, 0]
        let syncs = [false, true, true, false, false, false, true, false, false]
        let frames = Self.layered(layers, syncs: syncs, packetizer: packetizer)
        for (index, packets) in frames.enumerated() {
            #expect(packets.count == 3)
            for packet in packets {
                #expect(packet.bytes.count <= 1200)
                let descriptor = try Self.descriptor(packet)
                #expect(descriptor.temporalLayerIndex == layers[index])
                #expect(descriptor.isLayerSync == syncs[index])
                // Incremented on each layer-0 frame: 1 for frames 0-3, 2 for 4-7, 3 for 8.
                #expect(descriptor.tl0PictureIndex == UInt8(index / 4 + 1))
                #expect(descriptor.isNonReference == (layers[index] == 2))
            }
        }
        #expect(packetizer.tl0PictureIndex == 3)
    }

    @Test("The assembler hands the fields on with each frame")
    func assembled() {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(ssrc: 7))
        let frames = Self.layered([0, 2, 1, 2], syncs: [false, true, true, false], packetizer: packetizer)
        let assembler = VP8FrameAssembler(configuration: RTPReceiverConfiguration())
        var out: [AssembledFrame] = []
        for (index, packet) in frames.joined().enumerated() {
            let events = packet.bytes.withUnsafeBytes {
                assembler.insert($0, arrivalTimeNs: 1_000_000_000 + UInt64(index) * 1_000_000)
            }
            for case .frame(let frame) in events { out.append(frame) }
        }
        #expect(out.map(\.temporalLayerIndex) == [0, 2, 1, 2])
        #expect(out.map(\.isLayerSync) == [false, true, true, false])
        #expect(out.map(\.tl0PictureIndex) == [1, 1, 1, 1])
    }

    @Test("Without a layer, no TID, Y or TL0PICIDX is written (the 4-byte descriptor as before)")
    func unlayered() throws {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration())
        let packets = RTPTestPackets.packetize(
            RTPTestPackets.frame(size: 100, key: true), with: packetizer, timestamp: 0)
        let descriptor = try Self.descriptor(try #require(packets.first))
        #expect(descriptor.temporalLayerIndex == nil && descriptor.tl0PictureIndex == nil)
        #expect(descriptor.encodedSize == 4)
    }
}
