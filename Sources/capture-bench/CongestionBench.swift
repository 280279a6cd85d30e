import CaptureCongestion
import CaptureCore
import MallocInterposerSwift

/// The congestion controller's per-packet work alone, in virtual time: `--packets N` packets (after `--warmup W`) of a
/// 2 Mbit/s stream of 30 fps frames of five 1,200-byte packets through ``PacingController`` (enqueued, then polled
/// out at its deadlines), with every packet's result fed to ``SendSideBandwidthEstimator`` in feedback reports of 100
/// ms (20 ms one way, the estimator's timer run at its deadlines) and the window's pushback updated per report. With
/// the malloc interposer preloaded (`LD_PRELOAD=libMallocInterposerSwift.so`) it counts the heap allocations of that,
/// per packet; run under `valgrind --tool=callgrind` (Scripts/bench does), instructions per packet.
struct CongestionBench {
    let packets: Int
    let warmup: Int

    init(_ options: BenchOptions) throws(CaptureError) {
        packets = try options.int("packets", default: 100_000)
        warmup = try options.int("warmup", default: 2_000)
    }

    func run() {
        MallocInterposerSwift.initialize()
        let start = ContinuousClock.Instant.now
        var now = start
        var pacer = PacingController(at: start)
        var estimator = SendSideBandwidthEstimator(
            configuration: .init(minimumBitrate: 30_000, startBitrate: 2_000_000, maximumBitrate: 2_500_000),
            at: start)
        var pushback = CongestionWindowPushback()
        var feedback = TransportPacketsFeedback(receivedAt: start, results: [])
        feedback.results.reserveCapacity(512)
        var nextFeedback = start + .milliseconds(100)
        var sent = 0
        var frame = 0
        var hooked = false
        while sent < warmup + packets {
            if !hooked, sent >= warmup {
                MallocInterposerSwift.hook()
                hooked = true
            }
            for packet in 0..<5 { pacer.enqueue(handle: frame * 5 + packet, size: 1_200, priority: .media, at: now) }
            frame += 1
            let frameEnd = now + .microseconds(33_333)
            while now < frameEnd {
                while let output = pacer.poll(at: now) {
                    let size: Int
                    let cluster: Int?
                    switch output {
                    case .packet(_, let probe):
                        size = 1_200
                        cluster = probe
                    case .padding(let padding, let probe):
                        size = padding
                        cluster = probe
                    }
                    feedback.results.append(
                        PacketResult(
                            sendTime: now, size: size, arrival: now - start + .milliseconds(20),
                            probeClusterID: cluster))
                    sent += 1
                }
                if now >= nextFeedback {
                    feedback.receivedAt = now
                    estimator.onFeedback(feedback, now: now)
                    feedback.results.removeAll(keepingCapacity: true)
                    nextFeedback = now + .milliseconds(100)
                    pushback.update(
                        bytesInFlight: 12_000, pacerQueueBytes: pacer.queuedBytes, roundTripTime: .milliseconds(40),
                        targetBitrate: estimator.targetBitrate)
                    pacer.setPacingRate(pushback.adjust(estimator.pacingBitrate), at: now)
                    for request in estimator.takeProbeClusterRequests() { pacer.addProbeCluster(request, at: now) }
                }
                if estimator.nextDeadline <= now { estimator.process(now: now) }
                var wake = min(min(nextFeedback, estimator.nextDeadline), frameEnd)
                if let due = pacer.nextDeadline { wake = min(wake, due) }
                now = max(now + .microseconds(100), wake)
            }
        }
        MallocInterposerSwift.unhook()
        let statistics = MallocInterposerSwift.getStatistics()
        let counted = max(1, sent - warmup)
        print(
            "packets=\(counted) target_bps=\(estimator.targetBitrate) pacing_bps=\(pacer.pacingRate) "
                + "probes=\(pacer.statistics.probeClustersStarted) mallocs=\(statistics.mallocCount) "
                + "mallocs_per_packet=\(Double(statistics.mallocCount) / Double(counted))")
    }
}
