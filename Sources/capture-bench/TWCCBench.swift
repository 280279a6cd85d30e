import CaptureCore
import CaptureRTP
import MallocInterposerSwift

/// The per-packet paths of transport-wide congestion control: ``TransportSendHistory`` recording each packet sent
/// and ``TransportFeedbackGenerator`` recording each packet received, `--packets N` of each (ring wraps and the
/// 16-bit sequence wrap included) after `--warmup W`. With the malloc interposer preloaded (`LD_PRELOAD=
/// libMallocInterposerSwift.so`) it counts the heap allocations of exactly those calls, per packet; the feedback
/// messages, made every 100 packets and processed by the history outside the counted span, are not counted.
struct TWCCBench {
    let packets: Int
    let warmup: Int

    init(_ options: BenchOptions) throws(CaptureError) {
        packets = try options.int("packets", default: 100_000)
        warmup = try options.int("warmup", default: 1_000)
    }

    func run() {
        MallocInterposerSwift.initialize()
        var history = TransportSendHistory()
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1))
        var acked = 0
        var index = 0
        while index < warmup + packets {
            // 100 packets a round, as ~100 ms of a 10 Mbit/s stream; 1 in 50 lost, every 10th pair swapped.
            if index == warmup { MallocInterposerSwift.hook() }
            for step in 0..<100 {
                let sequence = UInt16(truncatingIfNeeded: index + step)
                let sendNs = UInt64(index + step) * 1_000_000
                history.record(sequenceNumber: sequence, sendTimeNs: sendNs, size: 1200, ssrc: 7)
                guard step % 50 != 49 else { continue }
                let arrival = sendNs + 20_000_000 + (step % 10 == 1 ? 2_000_000 : 0)
                generator.record(sequenceNumber: sequence, arrivalTimeNs: arrival)
            }
            index += 100
            if index > warmup { MallocInterposerSwift.unhook() }
            for feedback in generator.makeFeedback() {
                acked +=
                    history.process(feedback, receivedAtNs: UInt64(index) * 1_000_000 + 40_000_000)
                    .newlyAckedBytes
            }
            if index > warmup { MallocInterposerSwift.hook() }
        }
        MallocInterposerSwift.unhook()
        let statistics = MallocInterposerSwift.getStatistics()
        print(
            "packets=\(packets) recorded_sent=\(history.statistics.packetsRecorded) "
                + "recorded_received=\(generator.statistics.packetsRecorded) acked_bytes=\(acked) "
                + "mallocs=\(statistics.mallocCount) mallocs_per_packet=\(Double(statistics.mallocCount) / Double(packets))"
        )
    }
}
