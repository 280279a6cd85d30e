import CaptureRTP
import Testing

/// RFC 3550 appendix A receive statistics on synthetic arrival sequences, RTT arithmetic, NTP and FIR de-duplication.
@Suite struct RTCPReceiveStatisticsTests {
    /// Feeds `sequences` arriving 1/30 s apart with timestamps 3000 apart (90 kHz, 30 fps), one packet per frame.
    static func feed(_ sequences: [UInt16], into statistics: inout RTPReceiveStatistics) {
        for sequence in sequences {
            let frame = UInt64(sequence)
            statistics.update(
                sequenceNumber: sequence, rtpTimestamp: UInt32(truncatingIfNeeded: frame * 3000),
                arrivalTimeNs: frame * 1_000_000_000 / 30, clockRate: 90000)
        }
    }

    @Test func inOrderStreamHasNoLossAfterProbation() {
        var statistics = RTPReceiveStatistics()
        Self.feed(Array(1000..<1100), into: &statistics)
        // The first packet is spent on probation (RFC 3550 A.1); counting starts at the second.
        #expect(statistics.isValid)
        #expect(statistics.received == 99)
        #expect(statistics.expected == 99)
        #expect(statistics.cumulativeLost == 0)
        #expect(statistics.extendedHighestSequence == 1099)
        let block = statistics.makeReportBlock(ssrc: 7, nowNs: 0, lastSenderReport: nil)
        #expect(block.fractionLost == 0)
        #expect(block.jitter == 0)
        #expect(block.lastSenderReport == 0 && block.delaySinceLastSenderReport == 0)
    }

    @Test func lossAndFractionLostPerInterval() {
        var statistics = RTPReceiveStatistics()
        Self.feed((1000..<1200).filter { $0 % 10 != 0 || $0 == 1000 }, into: &statistics)
        // 1010, 1020, ..., 1190 missing: 19 of the 199 expected from 1001 to 1199.
        #expect(statistics.cumulativeLost == 19)
        let first = statistics.makeReportBlock(ssrc: 7, nowNs: 0, lastSenderReport: nil)
        #expect(first.fractionLost == UInt8(19 * 256 / 199))
        #expect(first.cumulativeLost == 19)
        Self.feed(Array(1200..<1300), into: &statistics)
        let second = statistics.makeReportBlock(ssrc: 7, nowNs: 0, lastSenderReport: nil)
        #expect(second.fractionLost == 0)
        #expect(second.cumulativeLost == 19)
        #expect(second.extendedHighestSequence == 1299)
    }

    @Test func reorderingIsNotLoss() {
        var statistics = RTPReceiveStatistics()
        Self.feed([1000, 1001, 1002, 1004, 1003, 1006, 1005, 1007], into: &statistics)
        #expect(statistics.cumulativeLost == 0)
        #expect(statistics.extendedHighestSequence == 1007)
    }

    @Test func duplicatesMakeLossNegative() {
        var statistics = RTPReceiveStatistics()
        Self.feed([10, 11, 12, 12, 12, 13], into: &statistics)
        #expect(statistics.cumulativeLost == -2)
    }

    @Test func sequenceWrapCountsACycle() {
        var statistics = RTPReceiveStatistics()
        Self.feed(Array(65530...65535) + Array(0...10), into: &statistics)
        #expect(statistics.extendedHighestSequence == 65536 + 10)
        #expect(statistics.cumulativeLost == 0)
        #expect(statistics.received == 16)
    }

    @Test func bigJumpRestartsAfterTwoSequentialPackets() {
        var statistics = RTPReceiveStatistics()
        Self.feed(Array(100...110), into: &statistics)
        Self.feed([40000], into: &statistics)
        #expect(statistics.restarts == 0)
        #expect(statistics.extendedHighestSequence == 110)
        Self.feed([40001, 40002], into: &statistics)
        #expect(statistics.restarts == 1)
        #expect(statistics.extendedHighestSequence == 40002)
        #expect(statistics.cumulativeLost == 0)
    }

    @Test func jitterConvergesToTheArrivalVariation() {
        var statistics = RTPReceiveStatistics()
        // Frames every 1/30 s; arrivals alternately 1 ms early and 1 ms late: |D| = 2 ms = 180 ticks at 90 kHz.
        for frame in 0..<400 {
            let arrival = UInt64(frame) * 1_000_000_000 / 30 + (frame % 2 == 0 ? 11_000_000 : 9_000_000)
            statistics.update(
                sequenceNumber: UInt16(frame), rtpTimestamp: UInt32(frame * 3000), arrivalTimeNs: arrival,
                clockRate: 90000)
        }
        #expect((170...181).contains(statistics.jitter), "jitter \(statistics.jitter)")
    }

    @Test func packetsOfOneFrameDoNotAddJitter() {
        var statistics = RTPReceiveStatistics()
        var sequence: UInt16 = 0
        for frame in 0..<100 {
            for packet in 0..<5 {
                let arrival = UInt64(frame) * 1_000_000_000 / 30 + UInt64(packet) * 2_000_000
                statistics.update(
                    sequenceNumber: sequence, rtpTimestamp: UInt32(frame * 3000), arrivalTimeNs: arrival,
                    clockRate: 90000)
                sequence &+= 1
            }
        }
        #expect(statistics.jitter <= 1)
    }

    @Test func delaySinceLastSenderReportIsInSixtyFourKiloUnits() {
        var statistics = RTPReceiveStatistics()
        Self.feed([1, 2, 3], into: &statistics)
        let block = statistics.makeReportBlock(
            ssrc: 9, nowNs: 1_500_000_000, lastSenderReport: (ntpMiddle32: 0xABCD_1234, receivedAtNs: 1_000_000_000))
        #expect(block.lastSenderReport == 0xABCD_1234)
        #expect(block.delaySinceLastSenderReport == 32768)
    }

    @Test func roundTripTimeIsArrivalMinusLSRMinusDLSR() {
        var block = RTCPReportBlock(
            ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
            lastSenderReport: 0x3_0000, delaySinceLastSenderReport: 0x1_8000)
        // Arrival at 5.5 s: middle 32 bits 0x5_8000; 5.5 − 3 − 1.5 = 1 s.
        let arrival = NTPTimestamp(seconds: 5, fraction: 0x8000_0000)
        #expect(arrival.middle32 == 0x5_8000)
        #expect(RoundTripTime.compute(reportBlock: block, receivedAt: arrival) == .seconds(1))
        block.delaySinceLastSenderReport = 0x3_0000
        #expect(RoundTripTime.compute(reportBlock: block, receivedAt: arrival) == nil)
        block.lastSenderReport = 0
        #expect(RoundTripTime.compute(reportBlock: block, receivedAt: arrival) == nil)
    }

    @Test func ntpTimestampsFromTheUnixEpoch() {
        let epoch = NTPTimestamp(unixNanoseconds: 500_000_000)
        #expect(epoch.seconds == 2_208_988_800)
        #expect(epoch.fraction == 0x8000_0000)
        #expect(NTPTimestamp(rawValue: epoch.rawValue) == epoch)
        let mapping = NTPClockMapping(monotonicNanoseconds: 10_000_000_000, ntp: epoch)
        let later = mapping.ntp(atMonotonicNanoseconds: 12_250_000_000)
        #expect(later == NTPTimestamp(seconds: 2_208_988_802, fraction: 0xC000_0000))
        #expect(mapping.monotonicNanoseconds(at: later) == 12_250_000_000)
        #expect(mapping.ntp(atMonotonicNanoseconds: 9_500_000_000) == NTPTimestamp(seconds: 2_208_988_800, fraction: 0))
        let now = NTPTimestamp.now()
        #expect(now.seconds > 3_900_000_000)  // after 2023
    }

    @Test func repeatedFIRSequenceNumbersAreIgnored() {
        var tracker = FIRSequenceTracker()
        let answers = [
            tracker.isNewRequest(RTCPFIREntry(ssrc: 1, sequenceNumber: 0)),
            tracker.isNewRequest(RTCPFIREntry(ssrc: 1, sequenceNumber: 0)),
            tracker.isNewRequest(RTCPFIREntry(ssrc: 2, sequenceNumber: 0)),
            tracker.isNewRequest(RTCPFIREntry(ssrc: 1, sequenceNumber: 1)),
            tracker.containsNewRequest(in: [RTCPFIREntry(ssrc: 1, sequenceNumber: 1)], for: 1),
            tracker.containsNewRequest(in: [RTCPFIREntry(ssrc: 3, sequenceNumber: 5)], for: 1),
            tracker.containsNewRequest(in: [RTCPFIREntry(ssrc: 1, sequenceNumber: 2)], for: 1),
        ]
        #expect(answers == [true, false, true, true, false, false, true])
    }
}
