import Testing

@testable import CaptureCongestion

private let millisecond: Int64 = 1_000_000
private let second: Int64 = 1_000_000_000

/// One thing the pacer told the owner to send, at a virtual time (nanoseconds from the start).
private struct SentRecord {
    var time: Int64
    var size: Int
    var handle: Int?
    var probeClusterID: Int?
}

/// A packet the owner enqueues at a virtual time.
private struct Arrival {
    var time: Int64
    var size: Int
    var priority: PacingController.Priority = .media
}

/// Drives a pacer as its owner would: enqueues the arrivals on time, drains `poll` at each step, and sleeps until
/// the earlier of the next arrival and `nextDeadline`. Handles are the arrivals' indices.
private struct PacerDriver {
    let start = ContinuousClock.Instant.now
    var pacer: PacingController
    var sent: [SentRecord] = []
    /// Steps at which the deadline had passed and yet nothing left (should not happen).
    var stalls = 0
    var time: Int64 = 0

    init(rate: Int, configuration: PacingController.Configuration = .init()) {
        pacer = PacingController(configuration: configuration, at: start)
        pacer.setPacingRate(rate, at: start)
    }

    func instant(_ nanoseconds: Int64) -> ContinuousClock.Instant { start + .nanoseconds(nanoseconds) }

    mutating func drainPoll(sizes: [Int]) {
        while let output = pacer.poll(at: instant(time)) {
            switch output {
            case .packet(let handle, let probe):
                let size = sizes.indices.contains(handle) ? sizes[handle] : 0
                sent.append(SentRecord(time: time, size: size, handle: handle, probeClusterID: probe))
            case .padding(let size, let probe):
                sent.append(SentRecord(time: time, size: size, handle: nil, probeClusterID: probe))
            }
        }
    }

    mutating func run(_ arrivals: [Arrival], until end: Int64, probes: [(Int64, ProbeClusterRequest)] = []) {
        let sizes = arrivals.map(\.size)
        var next = 0
        var nextProbe = 0
        while time <= end {
            while next < arrivals.count, arrivals[next].time <= time {
                pacer.enqueue(
                    handle: next, size: arrivals[next].size, priority: arrivals[next].priority, at: instant(time))
                next += 1
            }
            while nextProbe < probes.count, probes[nextProbe].0 <= time {
                pacer.addProbeCluster(probes[nextProbe].1, at: instant(time))
                nextProbe += 1
            }
            drainPoll(sizes: sizes)
            var wake = next < arrivals.count ? arrivals[next].time : .max
            if nextProbe < probes.count { wake = min(wake, probes[nextProbe].0) }
            if let deadline = pacer.nextDeadline {
                let offset = Nanoseconds.of(start.duration(to: deadline))
                if offset <= time {
                    stalls += 1
                    wake = min(wake, time + 1000)
                } else {
                    wake = min(wake, offset)
                }
            }
            guard wake != .max else { break }
            time = wake
        }
    }
}

/// 30 fps frames of varying sizes averaging `bitrate`, split into packets of at most 1200 bytes.
private func frames(bitrate: Int, seconds: Int) -> [Arrival] {
    var arrivals: [Arrival] = []
    let mean = Double(bitrate) / 8 / 30
    for frame in 0..<(30 * seconds) {
        // Sizes from 0.5 to 1.5 × the mean, deterministic.
        let factor = 0.5 + Double((frame * 37) % 101) / 100
        var remaining = Int(mean * factor)
        let time = Int64(frame) * second / 30
        while remaining > 0 {
            let size = min(1200, remaining)
            arrivals.append(Arrival(time: time, size: size))
            remaining -= size
        }
    }
    return arrivals
}

@Suite("Pacer")
struct PacerTests {
    @Test("1 Mbit/s over 10 s of 30 fps frames: the sent rate is within 2 % and bursts stay within 40 ms of data")
    func steadyRate() {
        var driver = PacerDriver(rate: 1_000_000)
        driver.run(frames(bitrate: 1_060_000, seconds: 10), until: 10 * second)
        #expect(driver.stalls == 0)
        let bytes = driver.sent.filter { $0.time < 10 * second }.reduce(0) { $0 + $1.size }
        let rate = Double(bytes) * 8 / 10
        #expect(abs(rate - 1_000_000) / 1_000_000 < 0.02, "sent \(rate) bit/s")
        #expect(driver.pacer.statistics.queueTimeLimitRaises == 0)
        // Back-to-back bursts (same instant): at most rate × 40 ms plus one packet.
        var burst = 0
        var largest = 0
        for (index, record) in driver.sent.enumerated() {
            burst = index > 0 && driver.sent[index - 1].time == record.time ? burst + record.size : record.size
            largest = max(largest, burst)
        }
        #expect(largest <= 5000 + 1200, "largest burst \(largest) B")
        #expect(largest >= 4000, "the burst allowance is used: \(largest) B")
        print("pacer steady: sent \(Int(rate)) bit/s over 10 s, largest burst \(largest) B")
        // Any 100 ms window: at most rate × 100 ms + the allowance + one packet.
        var low = 0
        var windowBytes = 0
        for record in driver.sent {
            windowBytes += record.size
            while driver.sent[low].time <= record.time - 100 * millisecond {
                windowBytes -= driver.sent[low].size
                low += 1
            }
            #expect(windowBytes <= 12_500 + 5000 + 1200)
        }
        #expect(driver.pacer.statistics.totalQueueDelay > .zero)
    }

    @Test("A 60 kB key frame at 1.1 Mbit/s drains in about 440 ms")
    func keyFrame() {
        var driver = PacerDriver(rate: 1_100_000)
        let arrivals = Array(repeating: Arrival(time: 0, size: 1200), count: 50)
        driver.run(arrivals, until: 5 * second)
        #expect(driver.sent.count == 50)
        let last = driver.sent.last?.time ?? 0
        #expect(last >= 350 * millisecond && last <= 480 * millisecond, "last packet at \(last / millisecond) ms")
        let atOnce = driver.sent.filter { $0.time == 0 }.count
        print("pacer key frame: last of 50 × 1200 B at \(Double(last) / 1e6) ms, \(atOnce) at once")
        #expect(atOnce <= 6, "\(atOnce) packets at once")
        #expect(driver.pacer.statistics.queueTimeLimitRaises == 0)
        #expect(driver.pacer.queuedPackets == 0 && driver.pacer.nextDeadline == nil)
    }

    @Test("Retransmissions leave before queued media; FIFO within a priority")
    func retransmissionsFirst() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.setPacingRate(100_000, at: start)
        for handle in 0..<5 { pacer.enqueue(handle: handle, size: 1200, priority: .media, at: start) }
        #expect(pacer.poll(at: start) == .packet(handle: 0, probeClusterID: nil))
        #expect(pacer.poll(at: start) == nil)
        pacer.enqueue(handle: 100, size: 300, priority: .retransmission, at: start)
        pacer.enqueue(handle: 101, size: 300, priority: .retransmission, at: start)
        #expect(pacer.queuedPackets == 6 && pacer.queuedBytes == 4 * 1200 + 600)
        var order: [Int] = []
        var time = start
        while order.count < 6 {
            if case .packet(let handle, _) = pacer.poll(at: time) {
                order.append(handle)
            } else if let deadline = pacer.nextDeadline {
                time = max(deadline, time)
            } else {
                break
            }
        }
        #expect(order == [100, 101, 1, 2, 3, 4])
        #expect(pacer.statistics.packetsSent == 7)
    }

    @Test("A 300 kB backlog at 100 kbit/s drains within 2 s through the queue-time limit")
    func queueTimeLimit() {
        var driver = PacerDriver(rate: 100_000)
        let arrivals = Array(repeating: Arrival(time: 0, size: 1200), count: 250)
        driver.pacer.enqueue(handle: 0, size: 0, priority: .media, at: driver.start)
        #expect(driver.pacer.expectedQueueTime == .zero)
        driver.run(arrivals, until: 10 * second)
        #expect(driver.sent.count == 251)
        let last = driver.sent.last?.time ?? .max
        #expect(last <= 2 * second, "drained at \(last / millisecond) ms")
        #expect(last >= 1 * second, "not at once: \(last / millisecond) ms")
        #expect(driver.pacer.statistics.queueTimeLimitRaises >= 1)
        #expect(driver.pacer.effectiveRate == driver.pacer.pacingRate)
        print("pacer backlog: 300 kB at 100 kbit/s drained at \(Double(last) / 1e6) ms")
        #expect(driver.pacer.pacingRate == 100_000)
    }

    @Test("The effective rate is raised while the queue needs it and reported")
    func raisedRateReported() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.setPacingRate(100_000, at: start)
        for handle in 0..<250 { pacer.enqueue(handle: handle, size: 1200, priority: .media, at: start) }
        #expect(pacer.effectiveRate >= 1_200_000)
        #expect(pacer.expectedQueueTime <= .seconds(2))
        #expect(pacer.oldestQueueTime(at: start + .milliseconds(30)) == .milliseconds(30))
        pacer.removeAll()
        #expect(pacer.statistics.packetsDropped == 250)
        #expect(pacer.queuedBytes == 0 && pacer.effectiveRate == 100_000)
        #expect(pacer.oldestQueueTime(at: start) == .zero)
    }

    @Test("A step down of the rate caps the debt at the new rate's 500 ms")
    func stepDownCapsDebt() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.setPacingRate(10_000_000, at: start)
        for handle in 0..<500 { pacer.enqueue(handle: handle, size: 1200, priority: .media, at: start) }
        while pacer.poll(at: start) != nil {}
        pacer.setPacingRate(100_000, at: start)
        // Debt at most 100 kbit/s × 500 ms = 6250 B: under 500 ms until the allowance (500 B) is reached.
        let deadline = pacer.nextDeadline ?? start
        #expect(deadline <= start + .milliseconds(500))
        #expect(deadline > start)
    }

    @Test("A 1.8 Mbit/s, 15 ms, 5-packet probe sends padding at that rate and completes")
    func probeCluster() {
        var driver = PacerDriver(rate: 300_000)
        let cluster = ProbeClusterRequest(
            id: 7, bitrate: 1_800_000, minimumBytes: 3375, minimumPackets: 5, duration: .milliseconds(15))
        driver.run([Arrival(time: 0, size: 1000)], until: 1 * second, probes: [(10 * millisecond, cluster)])
        #expect(driver.stalls == 0)
        let probe = driver.sent.filter { $0.probeClusterID == 7 }
        #expect(probe.count == 14)
        #expect(probe.allSatisfy { $0.handle == nil && $0.size == 250 })
        let span = (probe.last?.time ?? 0) - (probe.first?.time ?? 0)
        let bytes = probe.dropLast().reduce(0) { $0 + $1.size }
        let rate = Double(bytes) * 8 / (Double(span) / 1e9)
        #expect(abs(rate - 1_800_000) / 1_800_000 < 0.05, "probe rate \(rate)")
        print("pacer probe: \(probe.count) × 250 B at \(Int(rate)) bit/s over \(Double(span) / 1e6) ms")
        #expect(probe.first?.time == 10 * millisecond)
        let statistics = driver.pacer.statistics
        #expect(statistics.probeClustersStarted == 1 && statistics.probeClustersCompleted == 1)
        #expect(statistics.paddingPacketsSent == 14 && statistics.paddingBytesSent == 3500)
        #expect(driver.pacer.nextDeadline == nil)
    }

    @Test("Queued media leaves in a probe first, tagged; small packets form bursts no closer than 1 ms")
    func probeWithMediaAndBursts() {
        var driver = PacerDriver(rate: 100_000)
        // 20 packets of 100 B: at 1.8 Mbit/s one every 0.44 ms, so about 3 per 1 ms burst.
        var arrivals = [Arrival(time: 0, size: 100)]
        arrivals += Array(repeating: Arrival(time: 5 * millisecond, size: 100), count: 20)
        let cluster = ProbeClusterRequest(
            id: 3, bitrate: 1_800_000, minimumBytes: 3375, minimumPackets: 5, duration: .milliseconds(15))
        driver.run(arrivals, until: 1 * second, probes: [(5 * millisecond, cluster)])
        let probe = driver.sent.filter { $0.probeClusterID == 3 }
        #expect(probe.prefix(20).allSatisfy { $0.handle != nil })
        #expect(probe.dropFirst(20).allSatisfy { $0.handle == nil })
        #expect(driver.pacer.statistics.probeClustersCompleted == 1)
        var instants: [Int64] = []
        for record in probe where instants.last != record.time { instants.append(record.time) }
        #expect(zip(instants, instants.dropFirst()).allSatisfy { $1 - $0 >= millisecond })
        #expect(instants.count < probe.count)
    }

    @Test("A probe before any media waits for it")
    func probeWaitsForMedia() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.addProbeCluster(
            ProbeClusterRequest(id: 1, bitrate: 1_000_000, minimumBytes: 1000, minimumPackets: 5, duration: .zero),
            at: start)
        #expect(pacer.poll(at: start + .milliseconds(100)) == nil)
        #expect(pacer.statistics.probeClustersStarted == 0)
        #expect(pacer.nextDeadline != nil)
        pacer.enqueue(handle: 9, size: 500, priority: .media, at: start + .milliseconds(200))
        #expect(pacer.pendingProbeClusters == 1 && pacer.activeProbeClusterID == nil)
        #expect(pacer.poll(at: start + .milliseconds(200)) == .packet(handle: 9, probeClusterID: 1))
        #expect(pacer.statistics.probeClustersStarted == 1)
        #expect(pacer.pendingProbeClusters == 0 && pacer.activeProbeClusterID == 1)
    }

    @Test("A probe that waited more than 5 s is abandoned")
    func probeAbandoned() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.addProbeCluster(
            ProbeClusterRequest(id: 1, bitrate: 1_000_000, minimumBytes: 1000, minimumPackets: 5, duration: .zero),
            at: start)
        let deadline = pacer.nextDeadline
        #expect(deadline != nil && deadline! > start + .seconds(5))
        #expect(pacer.poll(at: start + .milliseconds(5001)) == nil)
        #expect(pacer.statistics.probeClustersAbandoned == 1)
        #expect(pacer.nextDeadline == nil)
        pacer.enqueue(handle: 1, size: 100, priority: .media, at: start + .seconds(6))
        #expect(pacer.poll(at: start + .seconds(6)) == .packet(handle: 1, probeClusterID: nil))
    }

    @Test("Hostile inputs do not trap")
    func hostileInputs() {
        let start = ContinuousClock.Instant.now
        let far = Duration.seconds(1_000_000_000_000)
        let configuration = PacingController.Configuration(
            burstInterval: .seconds(-1), maximumDebtDuration: far, queueTimeLimit: .zero, paddingPacketSize: -5,
            minimumProbeDelta: .seconds(-3))
        for config in [PacingController.Configuration(), configuration] {
            var pacer = PacingController(configuration: config, at: start)
            for rate in [0, -1, Int.max, Int.min, 1] {
                pacer.setPacingRate(rate, at: start)
                for (index, size) in [-1, Int.min, Int.max, 0, 1200].enumerated() {
                    pacer.enqueue(handle: index, size: size, priority: .media, at: start)
                    pacer.enqueue(handle: index, size: size, priority: .retransmission, at: start - far)
                }
                pacer.addProbeCluster(
                    ProbeClusterRequest(
                        id: 1, bitrate: rate, minimumBytes: Int.max, minimumPackets: Int.min, duration: .zero - far),
                    at: start + far)
                pacer.addProbeCluster(
                    ProbeClusterRequest(
                        id: 2, bitrate: Int.max, minimumBytes: -1, minimumPackets: Int.max, duration: far),
                    at: start - far)
                for instant in [start, start - far, start + far, start + .milliseconds(1), start - .nanoseconds(1)] {
                    var count = 0
                    while pacer.poll(at: instant) != nil, count < 10_000 { count += 1 }
                    _ = pacer.nextDeadline
                    _ = pacer.expectedQueueTime
                    _ = pacer.oldestQueueTime(at: instant)
                    _ = pacer.queuedBytes
                }
            }
            pacer.removeAll()
            #expect(pacer.queuedPackets == 0)
            #expect(pacer.pacingRate == 1000)
        }
    }

    @Test("100 000 packets through the pacer: the rings stop growing after warm-up")
    func noGrowthAfterWarmUp() {
        let start = ContinuousClock.Instant.now
        var pacer = PacingController(at: start)
        pacer.setPacingRate(100_000_000, at: start)
        var handle = 0
        var sent = 0
        var warmCapacity = 0
        for step in 0..<20_000 {
            let now = start + .milliseconds(step)
            for _ in 0..<5 {
                pacer.enqueue(
                    handle: handle, size: 1200, priority: handle % 10 == 0 ? .retransmission : .media, at: now)
                handle += 1
            }
            while pacer.poll(at: now) != nil { sent += 1 }
            if step == 100 { warmCapacity = pacer.capacity }
        }
        #expect(handle == 100_000)
        #expect(sent == 100_000)
        #expect(warmCapacity > 0 && pacer.capacity == warmCapacity)
    }
}

@Suite("Congestion-window pushback")
struct CongestionWindowPushbackTests {
    @Test("The window is (RTT + 350 ms) × target, 100 ms without an RTT")
    func window() {
        var pushback = CongestionWindowPushback()
        #expect(pushback.adjust(500_000) == 500_000)
        pushback.update(
            bytesInFlight: 0, pacerQueueBytes: 0, roundTripTime: .milliseconds(50), targetBitrate: 1_000_000)
        #expect(pushback.window == 50_000)
        pushback.update(bytesInFlight: 0, pacerQueueBytes: 0, roundTripTime: nil, targetBitrate: 1_000_000)
        #expect(pushback.window == 56_250)
        pushback.update(bytesInFlight: 0, pacerQueueBytes: 0, roundTripTime: nil, targetBitrate: 1)
        #expect(pushback.window == 3000)
    }

    @Test("Fill ratio rules, and frame dropping on above 1.0 and off below")
    func fillRules() {
        var pushback = CongestionWindowPushback()
        let target = 1_000_000
        func fill(_ bytes: Int) {
            pushback.update(
                bytesInFlight: bytes / 2, pacerQueueBytes: bytes - bytes / 2, roundTripTime: .milliseconds(50),
                targetBitrate: target)
        }
        fill(100_000)  // 2.0
        #expect(pushback.isDroppingFrames)
        #expect(abs(pushback.adjust(target) - 900_000) <= 1)
        fill(60_000)  // 1.2
        #expect(pushback.isDroppingFrames)
        #expect(abs(pushback.adjust(target) - 855_000) <= 1)
        fill(25_000)  // 0.5
        #expect(!pushback.isDroppingFrames)
        #expect(abs(pushback.adjust(target) - 897_750) <= 1)
        #expect(abs(pushback.adjust(target) - 942_637) <= 1)
        #expect(abs(pushback.adjust(target) - 989_769) <= 1)
        #expect(pushback.adjust(target) == 1_000_000)
        fill(100_000)
        _ = pushback.adjust(target)
        fill(4000)  // 0.08
        #expect(!pushback.isDroppingFrames)
        #expect(pushback.adjust(target) == 1_000_000 && pushback.encodingRateRatio == 1)
    }

    @Test("A dead feedback path (bytes in flight growing without bound) drives the rate to the minimum")
    func deadFeedback() {
        var pushback = CongestionWindowPushback()
        var rate = 1_000_000
        for step in 1...200 {
            pushback.update(
                bytesInFlight: step * 12_500, pacerQueueBytes: 0, roundTripTime: .milliseconds(100),
                targetBitrate: 1_000_000)
            rate = pushback.adjust(1_000_000)
        }
        #expect(rate == 30_000)
        #expect(pushback.isDroppingFrames)
        #expect(pushback.adjust(20_000) == 20_000)
        pushback.update(bytesInFlight: .max, pacerQueueBytes: .max, roundTripTime: .seconds(-1), targetBitrate: .min)
        _ = pushback.adjust(-5)
        pushback.update(bytesInFlight: -1, pacerQueueBytes: -1, roundTripTime: .seconds(Int64.max), targetBitrate: .max)
        _ = pushback.adjust(.max)
    }
}

@Suite("Pacer: padding to a rate")
struct PacerPaddingTests {
    /// Bytes the driver sent in [from, to) seconds: media and padding apart.
    private static func bytes(_ sent: [SentRecord], from: Int64, to: Int64) -> (media: Int, padding: Int) {
        let window = sent.filter { $0.time >= from * second && $0.time < to * second }
        return (
            window.filter { $0.handle != nil }.reduce(0) { $0 + $1.size },
            window.filter { $0.handle == nil }.reduce(0) { $0 + $1.size }
        )
    }

    @Test("media at 400 kbit/s and a padding rate of 1 Mbit/s: padding fills the rest, nothing before the first packet")
    func fillsUpToTheRate() {
        var driver = PacerDriver(rate: 2_500_000)
        driver.pacer.setPaddingRate(1_000_000, at: driver.instant(0))
        #expect(driver.pacer.paddingRate == 1_000_000)
        // The first frame at 1 s: the pacer pads only once media has been seen.
        let arrivals = frames(bitrate: 400_000, seconds: 10).map {
            Arrival(time: $0.time + second, size: $0.size, priority: $0.priority)
        }
        driver.run(arrivals, until: 11 * second)
        #expect(driver.stalls == 0)
        #expect(driver.sent.first?.handle == 0, "no padding before the first media packet")
        let (media, padding) = Self.bytes(driver.sent, from: 2, to: 11)
        let total = Double(media + padding) * 8 / 9
        #expect(abs(total - 1_000_000) / 1_000_000 < 0.03, "media and padding at \(Int(total)) bit/s")
        #expect(Double(media) * 8 / 9 > 350_000, "every media byte still sent")
        let paddings = driver.sent.filter { $0.handle == nil }
        #expect(paddings.allSatisfy { $0.size == 250 && $0.probeClusterID == nil })
        #expect(driver.pacer.statistics.paddingBytesSent == paddings.reduce(0) { $0 + $1.size })
        // Bursts of 5 ms at the padding rate (625 B: three packets), not one wake-up per packet.
        let instants = Set(paddings.filter { $0.time >= 5 * second && $0.time < 6 * second }.map(\.time)).count
        let packets = paddings.filter { $0.time >= 5 * second && $0.time < 6 * second }.count
        #expect(instants * 2 <= packets, "\(packets) padding packets at \(instants) instants in one second")
        print("pacer padding: media \(media * 8 / 9) bit/s, padding \(padding * 8 / 9) bit/s")
    }

    @Test("media above the padding rate leaves no room for padding; a rate of 0 stops it")
    func noPaddingAboveTheRateOrAtZero() {
        var driver = PacerDriver(rate: 2_500_000)
        driver.pacer.setPaddingRate(1_000_000, at: driver.instant(0))
        driver.run(frames(bitrate: 1_500_000, seconds: 5), until: 5 * second)
        let (media, padding) = Self.bytes(driver.sent, from: 1, to: 5)
        #expect(padding * 100 <= media, "padding \(padding) B beside \(media) B of media")

        var stopped = PacerDriver(rate: 2_500_000)
        stopped.pacer.setPaddingRate(1_000_000, at: stopped.instant(0))
        stopped.pacer.setPaddingRate(-5, at: stopped.instant(0))
        #expect(stopped.pacer.paddingRate == 0)
        stopped.run(frames(bitrate: 300_000, seconds: 3), until: 4 * second)
        #expect(stopped.sent.allSatisfy { $0.handle != nil })
        #expect(stopped.pacer.nextDeadline == nil, "idle without padding: nothing to wake for")
    }

    @Test("a zero maximum debt duration still lets padding leave at the rate, not without end")
    func zeroDebtDuration() {
        var pacer = PacingController(
            configuration: PacingController.Configuration(maximumDebtDuration: .zero), at: ContinuousClock.now)
        let start = ContinuousClock.now
        pacer.setPacingRate(2_000_000, at: start)
        pacer.setPaddingRate(1_000_000, at: start)
        pacer.enqueue(handle: 1, size: 1000, priority: .media, at: start)
        var outputs = 0
        while pacer.poll(at: start) != nil, outputs < 1_000 { outputs += 1 }
        #expect(outputs < 10, "one packet and one burst at one instant, not \(outputs)")
    }

    @Test("a probe cluster pads with its id; the padding rate resumes after it")
    func probesKeepTheirPadding() {
        var driver = PacerDriver(rate: 2_500_000)
        driver.pacer.setPaddingRate(500_000, at: driver.instant(0))
        let probe = ProbeClusterRequest(
            id: 7, bitrate: 3_000_000, minimumBytes: 30_000, minimumPackets: 5, duration: .milliseconds(80))
        driver.run(frames(bitrate: 200_000, seconds: 4), until: 4 * second, probes: [(2 * second, probe)])
        #expect(driver.stalls == 0)
        let probed = driver.sent.filter { $0.probeClusterID == 7 }
        #expect(probed.reduce(0) { $0 + $1.size } >= 30_000)
        #expect(driver.sent.contains { $0.handle == nil && $0.probeClusterID == nil && $0.time > 3 * second })
        let (media, padding) = Self.bytes(driver.sent, from: 3, to: 4)
        #expect(abs(Double(media + padding) * 8 - 500_000) / 500_000 < 0.05)
    }
}
