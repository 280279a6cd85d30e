import CaptureCongestion
import CaptureNetworkSimulator
import CaptureTestSupport

/// A sender, a bottleneck and a feedback path in virtual time: media at the target rate from a 30 fps "encoder",
/// paced at the pacing rate, probe clusters sent as requested, TWCC-like feedback every 100 ms from the receiver
/// back over the same one-way delay.
final class ClosedLoopHarness {
    struct Sent {
        var sendTime: ContinuousClock.Instant
        var size: Int
        var probe: Int?
        var delivery: ContinuousClock.Instant?
    }

    let start = ContinuousClock.Instant.now
    let network: SimulatedNetwork<Int>
    var estimator: SendSideBandwidthEstimator
    private(set) var now: ContinuousClock.Instant
    let tick = Duration.milliseconds(2)
    let feedbackInterval: Duration
    /// The remote clock's arbitrary origin, so the estimator never sees arrival == send.
    let remoteOffset = Duration.seconds(12_345)

    private var sent: [Sent] = []
    private var nextUnreported = 0
    private var reportsInFlight: [(at: ContinuousClock.Instant, report: TransportPacketsFeedback)] = []
    private var nextFeedback: ContinuousClock.Instant
    private var nextFrame: ContinuousClock.Instant
    private var mediaQueue: [Int] = []
    private var mediaHead = 0
    private var pacerTime: ContinuousClock.Instant
    private var probeQueue: [(at: ContinuousClock.Instant, size: Int, id: Int)] = []
    private var lastSend: ContinuousClock.Instant
    private var ceilingSchedule: [(at: Duration, bitrate: Int?)]
    /// (offset from start, queueing delay) per delivered media or probe packet.
    private(set) var queueDelays: [(at: Duration, delay: Duration)] = []
    /// (offset, target) every 100 ms.
    private(set) var targets: [(at: Duration, bitrate: Int)] = []
    private(set) var probeRequests: [ProbeClusterRequest] = []
    private(set) var bytesSent = 0
    /// Feedback reports lost on the way back (their packets are never reported, as with TWCC).
    let feedbackLossRate: Double
    private var feedbackRandom: SeededGenerator
    private(set) var feedbackLost = 0

    init(
        link: LinkConfiguration, configuration: SendSideBandwidthEstimator.Configuration = .init(),
        ceilings: [(at: Duration, bitrate: Int?)] = [], seed: UInt64 = 1, feedbackLossRate: Double = 0,
        feedbackInterval: Duration = .milliseconds(100)
    ) {
        self.feedbackInterval = feedbackInterval
        self.feedbackLossRate = feedbackLossRate
        feedbackRandom = SeededGenerator(state: seed)
        network = SimulatedNetwork(seed: seed, start: start)
        network.setLink(from: 0, to: 1, link)
        estimator = SendSideBandwidthEstimator(configuration: configuration, at: start)
        now = start
        nextFeedback = start + feedbackInterval
        nextFrame = start
        pacerTime = start
        lastSend = start
        ceilingSchedule = ceilings
    }

    /// The one-way delay in force at `instant` (the link's schedule).
    func delay(at instant: ContinuousClock.Instant) -> Duration {
        let link = network.link(from: 0, to: 1)
        var value = link.delay
        for change in link.schedule where start + change.at <= instant {
            if let delay = change.delay { value = delay }
        }
        return value
    }

    /// Runs until `offset` from the start.
    func run(until offset: Duration) {
        let end = start + offset
        while now < end {
            step()
            now += tick
        }
    }

    /// The target at `offset` (the last sample at or before it).
    func target(at offset: Duration) -> Int {
        targets.last { $0.at <= offset }?.bitrate ?? 0
    }

    /// The mean target over samples in `range`.
    func meanTarget(in range: Range<Duration>) -> Int {
        let samples = targets.filter { range.contains($0.at) }.map(\.bitrate)
        return samples.reduce(0, +) / Swift.max(1, samples.count)
    }

    /// The largest queueing delay of packets sent in `range`.
    func maximumQueueDelay(sentIn range: Range<Duration>) -> Duration {
        queueDelays.filter { range.contains($0.at) }.map(\.delay).max() ?? .zero
    }

    /// The `fraction` quantile of the queueing delays of packets sent in `range`.
    func queueDelay(quantile fraction: Double, sentIn range: Range<Duration>) -> Duration {
        let delays = queueDelays.filter { range.contains($0.at) }.map(\.delay).sorted()
        guard !delays.isEmpty else { return .zero }
        return delays[min(delays.count - 1, Int(Double(delays.count) * fraction))]
    }

    /// When, after `offset`, the queueing delay first fell under `bound` and stayed there for the next 500 ms.
    func queueSettled(under bound: Duration, after offset: Duration) -> Duration? {
        let samples = queueDelays.filter { $0.at >= offset }
        for (index, sample) in samples.enumerated() where sample.delay < bound {
            let window = samples[index...].prefix { $0.at < sample.at + .milliseconds(500) }
            if window.allSatisfy({ $0.delay < bound }) { return sample.at - offset }
        }
        return nil
    }

    private func step() {
        while let ceiling = ceilingSchedule.first, start + ceiling.at <= now {
            estimator.onReceiverEstimatedMaximum(ceiling.bitrate, now: now)
            ceilingSchedule.removeFirst()
        }
        while let first = reportsInFlight.first, first.at <= now {
            reportsInFlight.removeFirst()
            estimator.onRoundTripTime(delay(at: now) * 2, now: now)
            estimator.onFeedback(first.report, now: now)
        }
        if now >= estimator.nextDeadline { estimator.process(now: now) }
        for request in estimator.takeProbeClusterRequests() { enqueueProbe(request) }
        if now >= nextFrame {
            var frameBytes = max(1, estimator.targetBitrate / 8 / 30)
            while frameBytes > 0 {
                let size = min(1200, frameBytes)
                mediaQueue.append(size)
                frameBytes -= size
            }
            nextFrame += .microseconds(33_333)
        }
        sendDue()
        while network.popDelivery(notAfter: now) != nil {}
        if now >= nextFeedback {
            makeFeedback(at: now)
            nextFeedback += feedbackInterval
        }
        if Int((now - start) / .milliseconds(1)) % 100 == 0 {
            targets.append((now - start, estimator.targetBitrate))
        }
    }

    private func enqueueProbe(_ request: ProbeClusterRequest) {
        probeRequests.append(request)
        let size = min(1200, max(100, request.minimumBytes / request.minimumPackets))
        let count = max(request.minimumPackets, (request.minimumBytes + size - 1) / size)
        let spacing = Duration.seconds(size * 8) / max(1, request.bitrate)
        var at = max(now, probeQueue.last?.at ?? now)
        for _ in 0..<count {
            probeQueue.append((at, size, request.id))
            at += spacing
        }
    }

    private func sendDue() {
        while true {
            let mediaDue = mediaHead < mediaQueue.count && pacerTime <= now
            let probeDue = probeQueue.first.map { $0.at <= now } ?? false
            if probeDue, !mediaDue || probeQueue[0].at <= pacerTime {
                let probe = probeQueue.removeFirst()
                send(size: probe.size, probe: probe.id, at: probe.at)
            } else if mediaDue {
                let size = mediaQueue[mediaHead]
                mediaHead += 1
                send(size: size, probe: nil, at: pacerTime)
                pacerTime += .seconds(size * 8) / max(1, estimator.pacingBitrate)
            } else {
                break
            }
        }
        if mediaHead == mediaQueue.count {
            mediaQueue.removeAll(keepingCapacity: true)
            mediaHead = 0
            if pacerTime < now { pacerTime = now }
        }
    }

    private func send(size: Int, probe: Int?, at scheduled: ContinuousClock.Instant) {
        let at = max(scheduled, lastSend)
        lastSend = at
        bytesSent += size
        let outcome = network.send([UInt8](repeating: 0, count: size), from: 0, to: 1, at: at)
        let delivery = outcome.deliveryTime
        sent.append(Sent(sendTime: at, size: size, probe: probe, delivery: delivery))
        if let delivery {
            queueDelays.append((at - start, delivery - at - delay(at: at)))
        }
    }

    private func makeFeedback(at instant: ContinuousClock.Instant) {
        var last = -1
        var index = nextUnreported
        while index < sent.count {
            if let delivery = sent[index].delivery, delivery <= instant { last = index }
            index += 1
        }
        guard last >= nextUnreported else { return }
        var results: [PacketResult] = []
        for packet in sent[nextUnreported...last] {
            var arrival: Duration?
            if let delivery = packet.delivery, delivery <= instant {
                arrival = start.duration(to: delivery) + remoteOffset
            }
            results.append(
                PacketResult(
                    sendTime: packet.sendTime, size: packet.size, arrival: arrival, probeClusterID: packet.probe))
        }
        nextUnreported = last + 1
        if Double(feedbackRandom.next() % 1_000_000) / 1_000_000 < feedbackLossRate {
            feedbackLost += 1
            return
        }
        let report = TransportPacketsFeedback(receivedAt: instant + delay(at: instant), results: results)
        reportsInFlight.append((instant + delay(at: instant), report))
    }
}
