import CaptureRTP
import CaptureTestSupport
import Testing

/// The receive side: scripted arrivals (loss, reordering, a duplicate, the 16-bit wrap, a 70 ms gap, a late packet)
/// and the feedback the generator makes of them, byte for byte; splitting; history bounds; the deadline.
@Suite struct TransportFeedbackGeneratorTests {
    typealias Status = RTCPTransportFeedback.PacketStatus

    static let t0 = TWCCArrivalScript.t0
    static func at(_ milliseconds: UInt64) -> UInt64 { TWCCArrivalScript.at(milliseconds) }

    static func generator(
        _ configure: (inout TransportFeedbackGenerator.Configuration) -> Void = { _ in }
    )
        -> TransportFeedbackGenerator
    {
        var configuration = TransportFeedbackGenerator.Configuration(senderSSRC: 0x1111_1111)
        configure(&configuration)
        return TransportFeedbackGenerator(configuration: configuration)
    }

    /// The scripted arrivals (TWCCArrivalScript): (sequence number, milliseconds after t0).
    static let script = TWCCArrivalScript.arrivals

    @Test func scriptedArrivalsMakeTheExpectedFeedback() throws {
        var generator = Self.generator()
        #expect(generator.nextDeadlineNs == nil)
        for (sequence, time) in Self.script {
            generator.record(sequenceNumber: sequence, arrivalTimeNs: Self.at(time), mediaSSRC: 0x2222_2222)
        }
        #expect(generator.statistics.packetsRecorded == 10)
        #expect(generator.statistics.duplicates == 1)
        #expect(generator.nextDeadlineNs == Self.at(100))
        #expect(generator.poll(nowNs: Self.at(99)).isEmpty)

        let first = generator.poll(nowNs: Self.at(100))
        #expect(generator.nextDeadlineNs == Self.at(200))
        // Hand-computed: base 65530, 11 statuses, reference time 15 625 (0x003D09), count 0. Deltas in 250 µs ticks:
        // 40 (10 ms after 1000.000 s), 4, 12, −4 (65533 came 1 ms before 65532: large), 8, 4, 4, lost, 4,
        // 280 (70 ms: large), 4. Symbols S S S L S S S | N S L S: a 2-bit vector of 7 (the large delta rules out
        // a 1-bit one), then 4 in a 2-bit vector.
        let expected: [UInt8] = [
            0x8F, 0xCD, 0x00, 0x08, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
            0xFF, 0xFA, 0x00, 0x0B, 0x00, 0x3D, 0x09, 0x00,
            0xD5, 0x95, 0xC6, 0x40,
            0x28, 0x04, 0x0C, 0xFF, 0xFC, 0x08, 0x04, 0x04, 0x04, 0x01, 0x18, 0x04,
        ]
        #expect(first.map { RTCPPacket.transportFeedback($0).bytes } == [expected])

        // The lost packet turns up late, then one more: the next message starts again at 1 (libwebrtc's rule), so the
        // sender learns 1 arrived; 2...4 are repeated.
        generator.record(sequenceNumber: 1, arrivalTimeNs: Self.at(105))
        generator.record(sequenceNumber: 5, arrivalTimeNs: Self.at(110))
        #expect(generator.poll(nowNs: Self.at(150)).isEmpty)
        let second = generator.poll(nowNs: Self.at(200))
        // Reference 15 626 (1000.064 s); 1 at 1000.115 (+204 ticks), 2 at 1000.018 (−388), 3 at 1000.088 (+280),
        // 4 (+4), 5 at 1000.120 (+124).
        #expect(
            second == [
                RTCPTransportFeedback(
                    senderSSRC: 0x1111_1111, mediaSSRC: 0x2222_2222, baseSequenceNumber: 1, referenceTime: 15_626,
                    feedbackPacketCount: 1,
                    packets: [
                        .receivedSmallDelta(204), .receivedLargeDelta(-388), .receivedLargeDelta(280),
                        .receivedSmallDelta(4), .receivedSmallDelta(124),
                    ])
            ])
        #expect(generator.poll(nowNs: Self.at(300)).isEmpty)
        #expect(generator.statistics.feedbackMessages == 2)
        #expect(generator.statistics.reportedReceived == 15)
        #expect(generator.statistics.reportedNotReceived == 1)
    }

    @Test func aLongBurstSplitsAtTheSizeLimit() throws {
        var generator = Self.generator()
        for index in 0..<3000 {
            generator.record(
                sequenceNumber: UInt16(truncatingIfNeeded: index + 64_000),
                arrivalTimeNs: 5_000_000_000 + UInt64(index) * 1_000_000)
        }
        let messages = generator.makeFeedback()
        // 1200 bytes hold 20 of header, one run-length chunk and 1178 one-byte deltas.
        #expect(messages.map(\.packetStatusCount) == [1178, 1178, 644])
        #expect(messages.map(\.feedbackPacketCount) == [0, 1, 2])
        var next: UInt16 = 64_000
        for message in messages {
            let bytes = RTCPPacket.transportFeedback(message).bytes
            #expect(bytes.count <= 1200)
            #expect(try parseRTCP(bytes) == [.transportFeedback(message)])
            #expect(message.baseSequenceNumber == next)
            #expect(message.packets.allSatisfy { $0.isReceived })
            next &+= UInt16(message.packetStatusCount)
        }
        #expect(messages.first?.packets.first == .receivedSmallDelta(32))  // 5.000 s is 8 ms after 78 × 64 ms
        #expect(generator.makeFeedback().isEmpty)
    }

    @Test func aSmallSizeLimitStillMakesValidMessages() throws {
        var generator = Self.generator { $0.maximumPacketSize = 100 }
        var random = SeededGenerator(state: 42)
        var sequence: UInt16 = 65_000
        var time: UInt64 = 1_000_000_000
        for _ in 0..<2000 {
            sequence &+= UInt16.random(in: 1...3, using: &random)
            time += UInt64.random(in: 0...90_000_000, using: &random)
            generator.record(sequenceNumber: sequence, arrivalTimeNs: time)
        }
        let messages = generator.makeFeedback()
        #expect(messages.count > 20)
        for message in messages {
            let bytes = RTCPPacket.transportFeedback(message).bytes
            #expect(bytes.count <= 100)
            #expect(try parseRTCP(bytes) == [.transportFeedback(message)])
        }
        #expect(generator.statistics.reportedReceived == 2000)
    }

    @Test func aDeltaBeyondSixteenBitsStartsANewMessage() {
        var generator = Self.generator()
        generator.record(sequenceNumber: 10, arrivalTimeNs: 1_000_000_000)
        generator.record(sequenceNumber: 13, arrivalTimeNs: 11_000_000_000)  // 10 s later: 40 000 ticks
        let messages = generator.makeFeedback()
        #expect(messages.count == 2)
        #expect(messages.first?.baseSequenceNumber == 10)
        #expect(messages.first?.packets == [.receivedSmallDelta(160)])  // 1 s = 15 × 64 ms + 40 ms
        // The second starts where the first stopped, with the two packets still missing.
        #expect(messages.last?.baseSequenceNumber == 11)
        #expect(messages.last?.packets == [.notReceived, .notReceived, .receivedSmallDelta(224)])
        #expect(messages.last?.referenceTime == 171)
    }

    @Test func historyBoundsDuplicatesAndTheTooOld() {
        var generator = Self.generator { $0.historyCapacity = 64 }
        #expect(generator.configuration.historyCapacity == 64)
        generator.record(sequenceNumber: 1000, arrivalTimeNs: 1_000_000_000)
        generator.record(sequenceNumber: 1100, arrivalTimeNs: 1_001_000_000)  // 100 ahead: 1000 falls out
        generator.record(sequenceNumber: 1000, arrivalTimeNs: 1_002_000_000)  // older than the ring
        generator.record(sequenceNumber: 1100, arrivalTimeNs: 1_003_000_000)
        #expect(generator.statistics.tooOld == 1)
        #expect(generator.statistics.duplicates == 1)
        #expect(generator.makeFeedback().map(\.baseSequenceNumber) == [1100])
        // Reordering within the ring reopens its range.
        generator.record(sequenceNumber: 1102, arrivalTimeNs: 1_004_000_000)
        generator.record(sequenceNumber: 1070, arrivalTimeNs: 1_005_000_000)
        let reopened = generator.makeFeedback()
        #expect(reopened.first?.baseSequenceNumber == 1070)
        #expect(reopened.first?.packetStatusCount == 33)
    }

    @Test func afterAPauseTheMissingPacketsAreStillReported() {
        var generator = Self.generator()
        generator.record(sequenceNumber: 100, arrivalTimeNs: 1_000_000_000)
        generator.record(sequenceNumber: 101, arrivalTimeNs: 1_001_000_000)
        #expect(generator.makeFeedback().count == 1)
        // 600 ms later (past the 500 ms back window) 104 arrives: 102 and 103 are reported missing.
        generator.record(sequenceNumber: 104, arrivalTimeNs: 1_601_000_000)
        let after = generator.makeFeedback()
        #expect(after.map(\.baseSequenceNumber) == [102])
        #expect(after.first?.packets.map(\.isReceived) == [false, false, true])
    }

    @Test func theDeadlineMovesByTheInterval() {
        var generator = Self.generator { $0.intervalNs = 200_000_000 }  // Janus's twcc_period
        #expect(generator.poll(nowNs: 5_000_000_000).isEmpty)
        generator.record(sequenceNumber: 7, arrivalTimeNs: 1_000_000_000)
        #expect(generator.nextDeadlineNs == 1_200_000_000)
        #expect(generator.poll(nowNs: 1_200_000_000).count == 1)
        #expect(generator.nextDeadlineNs == 1_400_000_000)
        // Polled late: the next deadline is an interval from now, not a burst of catching up.
        #expect(generator.poll(nowNs: 1_750_000_000).isEmpty)
        #expect(generator.nextDeadlineNs == 1_950_000_000)
        generator.intervalNs = 50_000_000
        generator.record(sequenceNumber: 8, arrivalTimeNs: 1_900_000_000)
        #expect(generator.poll(nowNs: 1_950_000_000).first?.feedbackPacketCount == 1)
        #expect(generator.nextDeadlineNs == 2_000_000_000)
    }

    @Test func theFeedbackCountWraps() {
        var generator = Self.generator()
        var counts: [UInt8] = []
        for index in 0..<258 {
            generator.record(sequenceNumber: UInt16(index), arrivalTimeNs: 1_000_000_000 + UInt64(index) * 1_000_000)
            counts += generator.makeFeedback().map(\.feedbackPacketCount)
        }
        #expect(counts.count == 258)
        #expect(Array(counts.suffix(3)) == [255, 0, 1])
    }
}
