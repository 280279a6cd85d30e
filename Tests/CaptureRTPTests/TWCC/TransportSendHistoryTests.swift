import CaptureRTP
import CaptureTestSupport
import Testing

/// The send side: the generator's feedback for a scripted run turned back into per-packet results, sequence
/// numbers across the 16-bit wrap, feedback about packets never sent or forgotten, and hostile reference times.
/// (The record paths' allocations are counted by `capture-bench twcc` under the malloc interposer.)
@Suite struct TransportSendHistoryTests {
    typealias Status = RTCPTransportFeedback.PacketStatus

    static let sent: [UInt16] = [65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2, 3, 4, 5]
    static let sendStart: UInt64 = 50_000_000_000
    static func size(_ index: Int) -> Int { 1000 + index }

    @Test func generatorFeedbackBecomesPerPacketResults() throws {
        var history = TransportSendHistory()
        var unwrapped: [Int64] = []
        for (index, sequence) in Self.sent.enumerated() {
            unwrapped.append(
                history.record(
                    sequenceNumber: sequence, sendTimeNs: Self.sendStart + UInt64(index) * 1_000_000,
                    size: Self.size(index), ssrc: 0xAAAA, isRetransmission: sequence == 2,
                    probeClusterID: sequence == 3 ? 7 : nil))
        }
        #expect(unwrapped == (0..<12).map { 131_066 + Int64($0) })
        #expect(history.bytesInFlight == (0..<12).reduce(0) { $0 + Self.size($1) })

        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1))
        for (sequence, time) in TransportFeedbackGeneratorTests.script {
            generator.record(sequenceNumber: sequence, arrivalTimeNs: TransportFeedbackGeneratorTests.at(time))
        }
        let first = try #require(generator.makeFeedback().first)
        let receivedAt = Self.sendStart + 200_000_000
        let report = history.process(first, receivedAtNs: receivedAt)
        let arrival = { (milliseconds: Int64) -> Int64 in Int64(receivedAt) + milliseconds * 1_000_000 }
        #expect(report.packets.map(\.sent.wireSequenceNumber) == Array(Self.sent.prefix(11)))
        // The reference time is mapped to the feedback's arrival; each packet's arrival is 10 ms + its script time.
        let scriptTimes: [Int64?] = [0, 1, 4, 3, 5, 6, 7, nil, 8, 78, 79]
        #expect(report.packets.map(\.arrivalTimeNs) == scriptTimes.map { $0.map { arrival(10 + $0) } })
        #expect(report.lostPackets == 1)
        let acked = (0..<11).filter { $0 != 7 }.reduce(0) { $0 + Self.size($1) }
        #expect(report.newlyAckedBytes == acked)
        #expect(report.bytesInFlight == Self.size(11))
        #expect(report.unknownStatuses == 0 && report.repeatedStatuses == 0)
        #expect(report.packets[8].sent.isRetransmission && report.packets[8].sent.probeClusterID == nil)
        #expect(report.packets[9].sent.probeClusterID == 7 && !report.packets[9].sent.isRetransmission)
        #expect(report.packets[0].sent.sendTimeNs == Self.sendStart && report.packets[0].sent.ssrc == 0xAAAA)

        // The late packet 1 and then 5: 1 is newly acked (it had been reported lost), 2...4 are repeats.
        generator.record(sequenceNumber: 1, arrivalTimeNs: TransportFeedbackGeneratorTests.at(105))
        generator.record(sequenceNumber: 5, arrivalTimeNs: TransportFeedbackGeneratorTests.at(110))
        let second = try #require(generator.makeFeedback().first)
        let later = history.process(second, receivedAtNs: receivedAt + 100_000_000)
        #expect(later.packets.map(\.sent.wireSequenceNumber) == [1, 5])
        // One reference-time unit (64 ms) later than the first message: arrivals stay on the same timeline.
        #expect(later.packets.map(\.arrivalTimeNs) == [arrival(115), arrival(120)])
        #expect(later.repeatedStatuses == 3)
        #expect(later.newlyAckedBytes == Self.size(7) + Self.size(11))
        #expect(later.bytesInFlight == 0)
        // The same message again: nothing new.
        let again = history.process(second, receivedAtNs: receivedAt + 110_000_000)
        #expect(again.packets.isEmpty && again.repeatedStatuses == 5 && again.newlyAckedBytes == 0)
        #expect(history.statistics.feedbackMessages == 3)
    }

    @Test func sequenceNumbersUnwrapAcrossTheWrap() {
        var history = TransportSendHistory(capacity: 64)
        #expect(history.capacity == 64)
        let numbers = [UInt16(65534), 65535, 0, 1].map {
            history.record(sequenceNumber: $0, sendTimeNs: 1_000, size: 100, ssrc: 1)
        }
        #expect(numbers == [131_070, 131_071, 131_072, 131_073])
        let feedback = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: 65534, referenceTime: 0, feedbackPacketCount: 0,
            packets: [.receivedSmallDelta(4), .notReceived, .receivedSmallDelta(4), .receivedLargeDelta(-8)])
        let report = history.process(feedback, receivedAtNs: 2_000_000_000)
        #expect(report.packets.map(\.sent.sequenceNumber) == numbers)
        #expect(
            report.packets.map(\.arrivalTimeNs) == [2_001_000_000, nil, 2_002_000_000, 2_000_000_000])
        #expect(history.packet(sequenceNumber: 131_072)?.wireSequenceNumber == 0)
        #expect(history.packet(sequenceNumber: 131_074) == nil)
    }

    @Test func feedbackForPacketsNeverSentIsIgnored() {
        var history = TransportSendHistory()
        func feedback(base: UInt16, count: Int) -> RTCPTransportFeedback {
            RTCPTransportFeedback(
                senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: base, referenceTime: 0, feedbackPacketCount: 0,
                packets: Array(repeating: .receivedSmallDelta(1), count: count))
        }
        // Before anything was sent.
        #expect(history.process(feedback(base: 10, count: 3), receivedAtNs: 1).unknownStatuses == 3)
        for sequence in UInt16(10)..<20 { history.record(sequenceNumber: sequence, sendTimeNs: 5, size: 10, ssrc: 1) }
        // Entirely ahead of what was sent.
        let ahead = history.process(feedback(base: 20, count: 5), receivedAtNs: 2)
        #expect(ahead.unknownStatuses == 5 && ahead.packets.isEmpty && ahead.newlyAckedBytes == 0)
        // Straddling the first packet sent: 5...9 were never sent.
        let straddling = history.process(feedback(base: 5, count: 10), receivedAtNs: 3)
        #expect(straddling.unknownStatuses == 5)
        #expect(straddling.packets.map(\.sent.wireSequenceNumber) == Array(10..<15))
        // Half the number space away.
        #expect(history.process(feedback(base: 40_000, count: 2), receivedAtNs: 4).unknownStatuses == 2)
        #expect(history.statistics.unknownStatuses == 15)
        #expect(history.bytesInFlight == 50)
    }

    @Test("a lost feedback message: its packets leave the flight once a later message names a newer packet")
    func lostFeedbackLeavesNoPhantomFlight() {
        var history = TransportSendHistory()
        for sequence in UInt16(0)..<30 { history.record(sequenceNumber: sequence, sendTimeNs: 5, size: 100, ssrc: 1) }
        func feedback(base: UInt16, count: Int) -> RTCPTransportFeedback {
            RTCPTransportFeedback(
                senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: base, referenceTime: 0, feedbackPacketCount: 0,
                packets: Array(repeating: .receivedSmallDelta(1), count: count))
        }
        // The message about 0...9 is lost; the next names 10...19: 0...29 were in flight, 20...29 still are.
        let next = history.process(feedback(base: 10, count: 10), receivedAtNs: 1)
        #expect(next.newlyAckedBytes == 1_000)
        #expect(history.bytesInFlight == 1_000, "20...29: the unreported 0...9 are no longer counted")
        // A late, repeated report of 0...9 still acknowledges them, without touching the flight again.
        let late = history.process(feedback(base: 0, count: 10), receivedAtNs: 2)
        #expect(late.newlyAckedBytes == 1_000 && late.packets.count == 10)
        #expect(history.bytesInFlight == 1_000)
    }

    @Test func forgottenPacketsAreUnknownAndLeaveTheFlight() {
        var history = TransportSendHistory(capacity: 64)
        for sequence in 0..<200 {
            history.record(sequenceNumber: UInt16(sequence), sendTimeNs: 5, size: 10, ssrc: 1)
        }
        #expect(history.statistics.forgottenUnreported == 136)
        #expect(history.bytesInFlight == 640)
        let old = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
            packets: Array(repeating: .notReceived, count: 10))
        let report = history.process(old, receivedAtNs: 1)
        #expect(report.unknownStatuses == 10 && report.packets.isEmpty)
    }

    @Test func referenceTimesWrapAndHostileOnesReset() throws {
        var history = TransportSendHistory()
        history.record(sequenceNumber: 1, sendTimeNs: 0, size: 10, ssrc: 1)
        history.record(sequenceNumber: 2, sendTimeNs: 0, size: 10, ssrc: 1)
        history.record(sequenceNumber: 3, sendTimeNs: 0, size: 10, ssrc: 1)
        func message(_ sequence: UInt16, reference: Int32, _ status: Status) -> RTCPTransportFeedback {
            RTCPTransportFeedback(
                senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: sequence, referenceTime: reference,
                feedbackPacketCount: 0, packets: [status])
        }
        // The largest positive reference time, then the most negative: one unit later across the 24-bit wrap.
        let first = history.process(
            message(1, reference: 0x7F_FFFF, .receivedSmallDelta(0)), receivedAtNs: 1_000_000_000)
        let second = history.process(
            message(2, reference: -0x80_0000, .receivedSmallDelta(0)), receivedAtNs: 1_100_000_000)
        // Unwrapped before comparing: `#expect(optionalInt64 == expression)` read one byte past an Int64 on the stack
        // when it wrapped the value for its message (AddressSanitizer, stack-buffer-overflow in
        // `_convertToAnyHashable`, Swift 6.3.1, seen once in a parallel run).
        let firstArrival = try #require(first.packets.first?.arrivalTimeNs)
        let secondArrival = try #require(second.packets.first?.arrivalTimeNs)
        #expect(firstArrival == 1_000_000_000)
        #expect(secondArrival == 1_064_000_000)
        // A reference time that would put the receiver's clock before ours began: mapped afresh, counted.
        let third = history.process(
            message(3, reference: 0x40_0000, .receivedLargeDelta(.min)), receivedAtNs: 1_200_000_000)
        #expect(history.statistics.timeBaseResets == 1)
        let thirdArrival = try #require(third.packets.first?.arrivalTimeNs)
        #expect(thirdArrival == 1_200_000_000 - 8_192_000_000)
        // Deltas at their extremes over the most statuses a message can carry: no trap.
        let extreme = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: 1, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
            packets: Array(repeating: .receivedLargeDelta(.max), count: 65_535))
        #expect(history.process(extreme, receivedAtNs: .max).unknownStatuses == 65_532)
    }
}
