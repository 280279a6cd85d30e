import CaptureRTP
import CaptureTestSupport
import Testing

/// Random, truncated and mutated RTCP datagrams: every one is parsed or rejected with a typed error, none crashes.
@Suite struct RTCPFuzzTests {
    @Test func tenThousandHostileDatagramsNeverCrash() {
        var generator = SeededGenerator(state: 0x5EED)
        let valid = RTCPCompoundPacket.serialize(RTCPPacketTests.vectors.map(\.0))
        var parsed = 0
        var rejected = 0
        for round in 0..<10_000 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0:  // pure noise, with a version-2 first byte half of the time
                bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if !bytes.isEmpty && Bool.random(using: &generator) { bytes[0] = 0x80 | bytes[0] & 0x3F }
            case 1:  // truncated valid compound packet
                bytes = Array(valid.prefix(Int.random(in: 0...valid.count, using: &generator)))
            case 2:  // a valid compound packet with a few bytes changed (lengths, counts, padding bits)
                bytes = valid
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            default:  // one vector with a lying length field and junk appended
                bytes = RTCPPacketTests.vectors[round % RTCPPacketTests.vectors.count].1
                bytes[3] = UInt8.random(in: 0...255, using: &generator)
                bytes += (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            }
            do {
                let packets = try parseRTCP(bytes)
                // Whatever parses must serialize and parse again to the same packets.
                let again = try parseRTCP(RTCPCompoundPacket.serialize(packets))
                #expect(again == packets, "round \(round)")
                parsed += 1
            } catch {
                rejected += 1
            }
        }
        #expect(parsed + rejected == 10_000)
        #expect(rejected > 1000)
    }
}
