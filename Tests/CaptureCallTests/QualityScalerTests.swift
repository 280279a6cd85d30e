import CaptureCall
import CaptureCore
import CaptureVP8
import Foundation
import Testing

/// Pure value tests of the bandwidth quality scaler, on virtual timestamps.
@Suite("QualityScaler")
struct QualityScalerTests {
    /// The 640x480 ladder with WebRTC's steps (3/4, 1/2, …) and the 320x180 floor.
    static let ladder: [Int] = (0..<6).map { level in
        let (n, d) = OveruseConfiguration.scale(level: level)
        return (640 * n / d / 2 * 2) * (480 * n / d / 2 * 2)
    }
    static let minimumPixels = 320 * 180
    static let frameNs: UInt64 = 33_333_333

    /// A simulated sender: a resolution level and frame-rate level driven by the scaler's decisions.
    struct Simulation {
        var scaler: QualityScaler
        var level = 0
        var timestampNs: UInt64 = 1_000_000_000
        var changes: [(timeNs: UInt64, decision: QualityScaler.Decision)] = []

        init(configuration: QualityScalerConfiguration = QualityScalerConfiguration(), level: Int = 0) {
            scaler = QualityScaler(configuration: configuration)
            self.level = level
        }

        var pixels: Int { QualityScalerTests.ladder[level] }
        var fps: Double { 30 * QualityScaler.frameRateFraction(level: scaler.frameRateLevel) }

        /// Feeds one frame (at the current frame rate) and applies the decision.
        mutating func frame(qp: Int?, targetKbps: Int) {
            let canStepDown = QualityScalerTests.ladder[level + 1] >= QualityScalerTests.minimumPixels
            let decision = scaler.addFrame(
                QualityScaler.Frame(
                    qp: qp, timestampNs: timestampNs, targetKbps: targetKbps, pixels: pixels,
                    stepUpPixels: level > 0 ? QualityScalerTests.ladder[level - 1] : nil, canStepDown: canStepDown))
            switch decision {
            case .keep: break
            case .resolutionDown: level += 1
            case .resolutionUp: level -= 1
            case .frameRateDown, .frameRateUp: break
            }
            scaler.didApply(decision)
            if decision != .keep { changes.append((timestampNs, decision)) }
            timestampNs += UInt64(Double(QualityScalerTests.frameNs) * 30 / fps)
        }

        /// Feeds frames for `seconds` of virtual time.
        mutating func run(seconds: Double, targetKbps: Int, qp: (Simulation) -> Int?) {
            let end = timestampNs + UInt64(seconds * 1e9)
            while timestampNs < end { frame(qp: qp(self), targetKbps: targetKbps) }
        }
    }

    /// A QP model: 60 at 0.1 bit per pixel and frame, 30 less for each doubling.
    static func modelQP(targetKbps: Int, pixels: Int, fps: Double) -> Int {
        let bitsPerPixel = Double(targetKbps) * 1000 / (Double(pixels) * fps)
        return min(127, max(0, Int(60 - 30 * log2(bitsPerPixel / 0.1))))
    }

    @Test("VP8 min-start limits: the first entry at least as large as the frame")
    func limits() {
        let configuration = QualityScalerConfiguration()
        #expect(configuration.minStartKbps(pixels: 320 * 180) == 0)
        #expect(configuration.minStartKbps(pixels: 320 * 240) == 200)
        #expect(configuration.minStartKbps(pixels: 480 * 360) == 300)
        #expect(configuration.minStartKbps(pixels: 640 * 480) == 500)
        #expect(configuration.minStartKbps(pixels: 1280 * 720) == 900)
        #expect(configuration.minStartKbps(pixels: 3840 * 2160) == 2000)
    }

    @Test("steady high QP steps down once a 2 s window is complete, not before")
    func highQPStepsDown() {
        var sim = Simulation()
        sim.run(seconds: 1.9, targetKbps: 1000) { _ in 110 }
        #expect(sim.changes.isEmpty)
        sim.run(seconds: 0.3, targetKbps: 1000) { _ in 110 }
        #expect(sim.changes.map(\.decision) == [.resolutionDown])
        #expect(sim.scaler.lastTrigger == .quantizer && sim.scaler.lastAverageQP == 110)
    }

    @Test("low QP steps up only when the target allows the next resolution (× 1.2)")
    func lowQPStepsUpWithRate() {
        // At 480x360, 640x480 needs 1.2 × 500 = 600 kbit/s.
        var sim = Simulation(level: 1)
        sim.run(seconds: 10, targetKbps: 550) { _ in 20 }
        #expect(sim.changes.isEmpty && sim.level == 1)
        sim.run(seconds: 2.2, targetKbps: 600) { _ in 20 }
        #expect(sim.changes.map(\.decision) == [.resolutionUp] && sim.level == 0)
        // Mid QP never steps up.
        var mid = Simulation(level: 1)
        mid.run(seconds: 10, targetKbps: 2000) { _ in 50 }
        #expect(mid.changes.isEmpty)
    }

    @Test("a target clearly below the resolution's min-start rate steps down within 2 s, whatever the QP")
    func rateStepsDown() throws {
        var sim = Simulation()
        sim.run(seconds: 5, targetKbps: 1000) { _ in 50 }
        #expect(sim.changes.isEmpty)
        let dropAt = sim.timestampNs
        sim.run(seconds: 2, targetKbps: 300) { _ in 50 }
        let first = try #require(sim.changes.first)
        #expect(first.decision == .resolutionDown && sim.scaler.lastTrigger == .rate)
        #expect(first.timeNs - dropAt <= 2_000_000_000)
        // 400 kbit/s at 640x480 is 0.8 × 500: not clearly below, no step.
        var edge = Simulation()
        edge.run(seconds: 1, targetKbps: 1000) { _ in 50 }
        edge.run(seconds: 10, targetKbps: 400) { _ in 50 }
        #expect(edge.changes.isEmpty)
    }

    @Test("start: a start rate below the min-start rate starts at the lower resolution, at once")
    func startsLow() {
        var sim = Simulation()
        for _ in 0..<3 { sim.frame(qp: 50, targetKbps: 250) }
        // 640x480 (500) → 480x360 (300) → 320x240 (200 ≤ 250): two steps in the first two frames.
        #expect(sim.changes.map(\.decision) == [.resolutionDown, .resolutionDown] && sim.level == 2)
        #expect(sim.changes.last?.timeNs == 1_000_000_000 + QualityScalerTests.frameNs)
    }

    @Test("no oscillation on a steady target over 60 s (QP modelled from bits per pixel)")
    func noOscillation() {
        for target in [60, 150, 250, 350, 450, 600, 800, 1200, 2000, 4000] {
            var sim = Simulation()
            sim.run(seconds: 60, targetKbps: target) {
                QualityScalerTests.modelQP(targetKbps: target, pixels: $0.pixels, fps: $0.fps)
            }
            let late = sim.changes.filter { $0.timeNs > 1_000_000_000 + 20_000_000_000 }
            #expect(late.isEmpty, "\(target) kbit/s: \(sim.changes)")
            let ups = sim.changes.filter { $0.decision == .resolutionUp || $0.decision == .frameRateUp }
            #expect(ups.isEmpty, "\(target) kbit/s: \(sim.changes)")
        }
    }

    @Test("at the lowest resolution the frame rate halves (30 → 15 → 7.5), and comes back first")
    func frameRateAtFloor() {
        var sim = Simulation(level: 2)  // 320x240: one more step is 240x180, under 320x180
        sim.run(seconds: 1, targetKbps: 500) { _ in 50 }
        sim.run(seconds: 6, targetKbps: 60) { _ in 50 }
        #expect(sim.changes.map(\.decision) == [.frameRateDown, .frameRateDown])
        #expect(sim.level == 2 && sim.fps == 7.5)
        // 15 fps needs 200 / 2 × 1.2 = 120 kbit/s, 30 fps 200 × 1.2 = 240.
        sim.changes = []
        sim.run(seconds: 10, targetKbps: 130) { _ in 20 }
        #expect(sim.changes.map(\.decision) == [.frameRateUp] && sim.fps == 15)
        sim.changes = []
        sim.run(seconds: 20, targetKbps: 1000) { _ in 20 }
        #expect(sim.changes.map(\.decision) == [.frameRateUp, .resolutionUp, .resolutionUp])
        #expect(sim.fps == 30 && sim.level == 0, "\(sim.changes)")
    }

    @Test("frames dropped by rate control: ≥ 60 % in a window steps down, 50 % does not")
    func dropsStepDown() {
        var sim = Simulation()
        var index = 0
        sim.run(seconds: 2.2, targetKbps: 1000) { _ in
            index += 1
            return index % 2 == 0 ? nil : 50
        }
        #expect(sim.changes.isEmpty)
        index = 0
        sim.run(seconds: 2.2, targetKbps: 1000) { _ in
            index += 1
            return index % 10 < 7 ? nil : 50
        }
        #expect(sim.changes.map(\.decision) == [.resolutionDown] && sim.scaler.lastTrigger == .drops)
    }

    @Test("an oscillation doubles the low-QP windows the next step up needs")
    func backOff() {
        var sim = Simulation(level: 1)
        sim.run(seconds: 2.2, targetKbps: 2000) { _ in 20 }
        #expect(sim.level == 0)
        sim.run(seconds: 2.2, targetKbps: 2000) { _ in 110 }
        #expect(sim.level == 1 && sim.scaler.requiredLowQPWindows == 2)
        sim.changes = []
        // The first window after the step down still holds high QPs; the next low one alone no longer steps up.
        sim.run(seconds: 2.5, targetKbps: 2000) { _ in 20 }
        sim.run(seconds: 2, targetKbps: 2000) { _ in 20 }
        #expect(sim.changes.isEmpty)
        sim.run(seconds: 2.5, targetKbps: 2000) { _ in 20 }
        #expect(sim.changes.map(\.decision) == [.resolutionUp])
    }

    @Test("hostile inputs (QP > 127 or negative, timestamps going back, zero target and pixels) do not trap")
    func hostileInputs() {
        var scaler = QualityScaler()
        var timestamp: UInt64 = 5_000_000_000
        for index in 0..<2_000 {
            let qp: Int? = [Int.max, Int.min, -1, 500, 127, 0, nil][index % 7]
            let decision = scaler.addFrame(
                QualityScaler.Frame(
                    qp: qp, timestampNs: timestamp, targetKbps: [Int.min, 0, -5, Int.max][index % 4],
                    pixels: [Int.min, 0, -1, Int.max][index % 4], stepUpPixels: index % 3 == 0 ? Int.min : Int.max,
                    canStepDown: index % 2 == 0))
            scaler.didApply(decision)
            timestamp = index % 10 == 0 ? timestamp / 2 : (index % 13 == 0 ? UInt64.max - 5 : timestamp &+ 33_333_333)
        }
        var zero = QualityScaler()
        _ = zero.addFrame(
            QualityScaler.Frame(qp: 50, timestampNs: 0, targetKbps: 0, pixels: 0, stepUpPixels: nil, canStepDown: false)
        )
        var disabled = QualityScaler(configuration: QualityScalerConfiguration(enabled: false))
        #expect(
            disabled.addFrame(
                QualityScaler.Frame(
                    qp: 127, timestampNs: 0, targetKbps: 1, pixels: 640 * 480, stepUpPixels: nil, canStepDown: true))
                == .keep)
    }
}

/// The quality scaler in a ``SendPipeline`` with the real libvpx encoder, on synthetic frames with virtual timestamps.
@Suite("SendPipeline bandwidth adaptation", .serialized)
struct PipelineBandwidthTests {
    /// Feeds frames of `frames`, cycled, at 30 fps of virtual time, one at a time (each taken by the encoder or
    /// dropped by the adapter before the next), until `done` holds or `seconds` of virtual time have passed.
    final class Feeder {
        let pipeline: SendPipeline
        let capturer: CameraVideoCapturer
        let frames: [VideoFrame]
        var index = 0

        init(_ pipeline: SendPipeline, size: Dimensions) {
            self.pipeline = pipeline
            capturer = CameraVideoCapturer(delegate: pipeline)
            frames = (0..<8).map { PipelineFixtures.markedFrame(size, index: $0 * 3) }
        }

        var timestampNs: UInt64 { UInt64(index + 1) * 33_333_333 }

        static func handled(_ statistics: SendPipelineStatistics) -> Int {
            statistics.framesEncoded + statistics.droppedByRateControl + statistics.encodeFailures
                + statistics.droppedByAdapter + statistics.droppedForCongestion
        }

        /// Returns the virtual time it took, in seconds, or `nil` when `done` never held.
        func feed(seconds: Double, until done: () -> Bool) async throws -> Double? {
            let start = timestampNs
            while timestampNs - start < UInt64(seconds * 1e9) {
                if done() { return Double(timestampNs - start) / 1e9 }
                let source = frames[index % frames.count]
                let frame = VideoFrame(
                    buffer: source.buffer, rotation: .degrees0, timestampNs: timestampNs,
                    sequenceNumber: UInt64(index))
                index += 1
                let before = Self.handled(pipeline.statistics)
                pipeline.capturer(capturer, didCapture: frame)
                let deadline = ContinuousClock.now + .seconds(5)
                while Self.handled(pipeline.statistics) <= before {
                    try #require(ContinuousClock.now < deadline, "frame \(index) not handled")
                    try await Task.sleep(for: .microseconds(200))
                }
            }
            return done() ? seconds : nil
        }
    }

    @Test("640x480: 100 kbit/s ends at ≤ 320x240 for bandwidth; 2000 kbit/s brings 640x480 back")
    func followsTheTarget() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: OveruseConfiguration(enabled: false)), sinks: [sink])
        let full = Dimensions(width: 640, height: 480)
        let feeder = Feeder(pipeline, size: full)
        func last() -> EncodedFrame? { sink.recorded.withLock { $0.frames.last } }
        _ = try await feeder.feed(seconds: 1) { false }
        #expect(last()?.dimensions == full)
        let qpAtFull = last()?.qp ?? -1

        pipeline.setTargetBitrate(kbps: 100, reason: .senderEstimate)
        let down = try await feeder.feed(seconds: 8) {
            guard let size = last()?.dimensions else { return false }
            return size.width * size.height <= 320 * 240
        }
        let downTime = try #require(down, "still \(String(describing: last()?.dimensions)) at 100 kbit/s")
        _ = try await feeder.feed(seconds: 3) { false }
        let low = pipeline.statistics
        let qpAtLow = last()?.qp ?? -1
        #expect(low.qualityLimitationReason == .bandwidth, "\(low)")
        #expect((last()?.dimensions.width ?? .max) <= 320)

        pipeline.setTargetBitrate(kbps: 2000, reason: .senderEstimate)
        let up = try await feeder.feed(seconds: 20) { last()?.dimensions == full }
        let upTime = try #require(up, "still \(String(describing: last()?.dimensions)) at 2000 kbit/s")
        _ = try await feeder.feed(seconds: 0.5) { false }
        await pipeline.stop()
        let statistics = pipeline.statistics
        #expect(statistics.qualityLimitationReason == QualityLimitationReason.none)
        #expect(statistics.limitedFrameRate == nil)
        #expect(statistics.qualityLimitationResolutionChanges >= 4, "\(statistics)")
        #expect((statistics.qualityLimitationDurations[.bandwidth] ?? .zero) > .seconds(3))
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events {
            if case .qualityLimitationChanged = event { events.append(event) }
        }
        #expect(
            events.first
                == .qualityLimitationChanged(reason: .bandwidth, size: Dimensions(width: 480, height: 360), fps: nil))
        #expect(events.last == .qualityLimitationChanged(reason: .none, size: nil, fps: nil))
        var sizes: [Dimensions] = []
        for size in sink.frames.map(\.dimensions) where sizes.last != size { sizes.append(size) }
        print(
            "bandwidth: 640x480 → ≤ 320x240 in \(downTime) s at 100 kbit/s (QP \(qpAtFull) at 1000 kbit/s, \(qpAtLow) at"
                + " 100 kbit/s, frame rate \(low.limitedFrameRate.map { "\($0)" } ?? "full")); back to 640x480 in"
                + " \(upTime) s at 2000 kbit/s; sizes \(sizes); steps down \(statistics.bandwidthStepsDown), up"
                + " \(statistics.bandwidthStepsUp); key frames \(statistics.keyFrames); durations"
                + " \(statistics.qualityLimitationDurations)")
    }

    @Test("congestion frame dropping: frames are dropped before encoding while on, counted, reported")
    func congestionDropping() async throws {
        let sink = RecordingSink()
        let pipeline = try SendPipeline(
            configuration: SendPipelineConfiguration(overuse: OveruseConfiguration(enabled: false)), sinks: [sink])
        let feeder = Feeder(pipeline, size: PipelineFixtures.qvga)
        _ = try await feeder.feed(seconds: 0.2) { false }
        let encodedBefore = sink.count
        pipeline.setCongestionFrameDropping(true)
        pipeline.setCongestionFrameDropping(true)
        let firstDropped = feeder.index
        _ = try await feeder.feed(seconds: 0.3) { false }
        let dropped = feeder.index - firstDropped
        // At most the frame the encoder had already taken before the switch comes out (a loaded run showed it).
        #expect(sink.count <= encodedBefore + 1, "encoded while dropping: \(sink.count - encodedBefore)")
        pipeline.setCongestionFrameDropping(false)
        _ = try await feeder.feed(seconds: 0.2) { false }
        await pipeline.stop()
        let statistics = pipeline.statistics
        #expect(statistics.droppedForCongestion == dropped && dropped >= 9, "\(statistics)")
        #expect(sink.count > encodedBefore)
        var events: [SendPipelineEvent] = []
        for await event in pipeline.events {
            if case .congestionFrameDropping = event { events.append(event) }
        }
        #expect(events == [.congestionFrameDropping(true), .congestionFrameDropping(false)])
    }
}
