import CaptureCore
import Testing

@testable import CaptureRTP

@Suite("VP8 packetizer")
struct RTPPacketizerTests {
    @Test(
        "frames are split into balanced packets within maxPacketSize",
        arguments: [1, 1000, 1187, 5000, 100_000], [false, true])
    func balancedSplit(size: Int, orientation: Bool) throws {
        let configuration = RTPPacketizerConfiguration(
            ssrc: 0x1234_5678, initialSequenceNumber: 100, initialPictureID: 7,
            videoOrientationExtensionID: orientation ? 3 : nil)
        let packetizer = VP8Packetizer(configuration: configuration)
        let frame = RTPTestPackets.frame(size: size, key: true)
        let packets = RTPTestPackets.packetize(frame, with: packetizer, timestamp: 9000, rotation: .degrees90)
        let expectedCount = (size + (orientation ? 8 : 0) + 1183) / 1184
        #expect(packets.count == max(expectedCount, 1))
        let lengths = packets.map(\.bytes.count)
        #expect(lengths.allSatisfy { $0 <= 1200 })
        #expect((lengths.max() ?? 0) - (lengths.min() ?? 0) <= 1, "whole packets differ by at most one byte")
        var reassembled: [UInt8] = []
        for (index, captured) in packets.enumerated() {
            let (packet, descriptor, descriptorSize) = try captured.parsed()
            let header = packet.header
            let isLast = index == packets.count - 1
            #expect(header.sequenceNumber == UInt16(100 + index))
            #expect(captured.sequenceNumber == header.sequenceNumber)
            #expect(header.timestamp == 9000)
            #expect(header.ssrc == 0x1234_5678)
            #expect(header.payloadType == 96)
            #expect(header.marker == isLast)
            #expect(captured.isLast == isLast)
            #expect(captured.isFirst == (index == 0))
            #expect(descriptor.isStartOfPartition == (index == 0))
            #expect(descriptor.partitionID == 0)
            #expect(descriptor.pictureID == 7)
            #expect(descriptor.pictureIDIsLong)
            #expect(!descriptor.isNonReference)
            let orientationElement = packet.extensionElement(id: 3)
            if orientation && isLast {
                #expect(orientationElement?.data == [1], "CVO 90° (R1R0 = 01) on the last packet")
            } else {
                #expect(orientationElement == nil)
                #expect(header.extensionForm == nil)
            }
            let start = packet.payloadRange.lowerBound + descriptorSize
            reassembled += captured.bytes[start..<packet.payloadRange.upperBound]
        }
        #expect(reassembled == frame)
        let statistics = packetizer.statistics
        #expect(statistics.frames == 1)
        #expect(statistics.packets == packets.count)
        #expect(statistics.payloadBytes == size)
        #expect(statistics.overheadBytes == lengths.reduce(0, +) - size)
    }

    @Test("a frame that exactly fills one packet stays in one packet")
    func exactFit() {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(videoOrientationExtensionID: 2))
        let one = RTPTestPackets.packetize(RTPTestPackets.frame(size: 1176, key: true), with: packetizer, timestamp: 0)
        #expect(one.map(\.bytes.count) == [1200])
        let two = RTPTestPackets.packetize(RTPTestPackets.frame(size: 1177, key: true), with: packetizer, timestamp: 1)
        #expect(two.count == 2)
    }

    @Test("picture ID wraps 32767 → 0 and sequence numbers wrap 65535 → 0")
    func wraps() throws {
        let packetizer = VP8Packetizer(
            configuration: RTPPacketizerConfiguration(initialSequenceNumber: 65534, initialPictureID: 32767))
        let first = RTPTestPackets.packetize(
            RTPTestPackets.frame(size: 3000, key: true), with: packetizer, timestamp: 0)
        let second = RTPTestPackets.packetize(
            RTPTestPackets.frame(size: 10, key: false), with: packetizer, timestamp: 3000)
        #expect(first.map(\.sequenceNumber) == [65534, 65535, 0])
        #expect(second.map(\.sequenceNumber) == [1])
        #expect(try first.map { try $0.parsed().descriptor.pictureID } == [32767, 32767, 32767])
        #expect(try second[0].parsed().descriptor.pictureID == 0)
        #expect(packetizer.nextSequenceNumber == 2)
        #expect(packetizer.nextPictureID == 1)
    }

    @Test("droppable frames carry the N bit on every packet")
    func nonReference() throws {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration())
        let packets = RTPTestPackets.packetize(
            RTPTestPackets.frame(size: 4000, key: false), with: packetizer, timestamp: 0, key: false, droppable: true)
        #expect(try packets.allSatisfy { try $0.parsed().descriptor.isNonReference })
    }

    @Test("CVO carries each rotation as R1R0", arguments: VideoRotation.allCases)
    func orientation(rotation: VideoRotation) throws {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(videoOrientationExtensionID: 14))
        let packets = RTPTestPackets.packetize(
            RTPTestPackets.frame(size: 100, key: true), with: packetizer, timestamp: 0, rotation: rotation)
        let byte = try #require(try packets.last?.parsed().packet.extensionElement(id: 14)?.data.first)
        #expect(Int(byte) == rotation.degrees / 90)
        #expect(VideoOrientationExtension.rotation(from: byte) == rotation)
    }

    @Test("an error thrown by emit stops packetization")
    func emitError() {
        struct Stop: Error {}
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration())
        var calls = 0
        let frame = RTPTestPackets.frame(size: 5000, key: true)
        #expect(throws: Stop.self) {
            try frame.withUnsafeBytes { raw in
                try packetizer.packetize(
                    raw, rtpTimestamp: 0, isKeyFrame: true, isDroppable: false, rotation: .degrees0
                ) { (_: inout OutgoingRTPPacket) throws(Stop) in
                    calls += 1
                    throw Stop()
                }
            }
        }
        #expect(calls == 1)
    }

    @Test("the packet buffer keeps the trailer capacity free for SRTP")
    func trailer() {
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(trailerCapacity: 16))
        var capacities: [Int] = []
        RTPTestPackets.frame(size: 5000, key: true).withUnsafeBytes { raw in
            packetizer.packetize(raw, rtpTimestamp: 0, isKeyFrame: true, isDroppable: false, rotation: .degrees0) {
                (packet: inout OutgoingRTPPacket) in
                capacities.append(packet.buffer.count - packet.length)
                packet.length += 10
            }
        }
        #expect(capacities.allSatisfy { $0 >= 16 })
    }
}
