import CaptureCore
import CaptureTestSupport
import Testing

@testable import CaptureRTP

@Suite("RTP hostile input")
struct RTPHostileInputTests {
    /// Random bytes, truncations and bit flips of real packets: the parser throws typed errors and the assembler
    /// counts them; neither crashes or reads out of bounds (run under the address sanitizer in Scripts/test).
    @Test("10,000 random, truncated and mutated packets")
    func fuzz() {
        let sent = RTPAssemblerTests.stream(
            sizes: [5000, 1000, 1, 20000], keys: [0], orientationID: 5, rotation: .degrees90)
        let valid = sent.flatMap(\.packets).map(\.bytes)
        var generator = SeededGenerator(state: 0xC0FFEE)
        let assembler = VP8FrameAssembler(configuration: RTPReceiverConfiguration(videoOrientationExtensionID: 5))
        var parseErrors = 0
        var rejectedByAssembler = 0
        for iteration in 0..<10_000 {
            var bytes: [UInt8]
            switch iteration % 4 {
            case 0:
                let count = Int.random(in: 0..<64, using: &generator)
                bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = bytes[0] & 0x3F | 0x80 }
            case 1:
                let packet = valid[Int.random(in: 0..<valid.count, using: &generator)]
                bytes = Array(packet.prefix(Int.random(in: 0...packet.count, using: &generator)))
            default:
                bytes = valid[Int.random(in: 0..<valid.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 0..<min(bytes.count, 32), using: &generator)
                    bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                }
            }
            bytes.withUnsafeBytes { raw in
                do {
                    let packet = try RTPPacket(parsing: raw)
                    #expect(packet.payloadRange.upperBound <= raw.count)
                    #expect(packet.payloadRange.lowerBound <= packet.payloadRange.upperBound)
                } catch {
                    parseErrors += 1
                }
                let before = assembler.statistics
                _ = assembler.insert(raw, arrivalTimeNs: UInt64(iteration) * 1_000_000)
                let after = assembler.statistics
                if after.malformed > before.malformed || after.wrongPayloadType > before.wrongPayloadType {
                    rejectedByAssembler += 1
                }
            }
        }
        #expect(parseErrors > 1000)
        #expect(assembler.statistics.malformed >= parseErrors)
        #expect(rejectedByAssembler >= parseErrors)
        // The assembler still works after the storm: a fresh stream with a new SSRC comes through.
        let packetizer = VP8Packetizer(configuration: RTPPacketizerConfiguration(ssrc: 7))
        let frame = RTPTestPackets.frame(size: 3000, key: true)
        let events = RTPTestPackets.packetize(frame, with: packetizer, timestamp: 0).flatMap { packet in
            packet.bytes.withUnsafeBytes { assembler.insert($0, arrivalTimeNs: 20_000_000_000) }
        }
        #expect(events.contains { if case .frame(let assembled) = $0 { assembled.bytes == frame } else { false } })
    }
}
