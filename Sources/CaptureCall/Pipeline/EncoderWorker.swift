internal import CaptureConversion
internal import CaptureCore
internal import CaptureVP8
import SystemPackage
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The encoder thread of a ``SendPipeline``: takes the newest frame from the mailbox, applies pending controls,
/// rotates and encodes it, hands it to the sinks and steers the resolution from the measured encode times (CPU) and
/// from the target bit rate and the encoder's QP (bandwidth); the lower resolution of the two wins.
///
/// With simulcast it encodes every layer of each frame through its ``SimulcastEncoders``, feeds the target bit rate to
/// their allocator and leaves the quality scaler off (libwebrtc turns layers off instead); CPU-overuse steps still
/// scale the input, and the layers are laid out again for the new size.
///
/// It owns the `VP8Encoder` (or the simulcast encoders), the overuse detector, the quality scaler and the rotation
/// pool; after ``start(_:)`` only the encoder thread touches them. Shared state goes through the pipeline's
/// `ConditionLock`.
final class EncoderWorker {
    private let configuration: SendPipelineConfiguration
    private let encoder: VP8Encoder
    /// The simulcast layers, or `nil` for one stream (`encoder`).
    private let simulcast: SimulcastEncoders?
    /// Whether the last allocation left some simulcast layer off for want of bit rate.
    private var layersBandwidthLimited = false
    /// The counters of simulcast layers a layout change removed, kept for when they come back.
    private var retiredLayers: [Int: SimulcastLayerStatistics] = [:]
    private let state: ConditionLock<SendPipeline.State>
    private let adapter: VideoAdapter
    private let sinks: [any EncodedFrameSink]
    private let logger: Logger
    private let events: AsyncStream<SendPipelineEvent>.Continuation
    /// Finished as the thread's last act.
    private let finished: Completion
    private var detector: OveruseDetector
    private var scaler: QualityScaler
    /// Computes the level-0 size from the camera's: the configured request only.
    private let baseAdapter: VideoAdapter
    /// The bandwidth resolution level (0 = full), stepped by the quality scaler.
    private var bandwidthLevel = 0
    /// The size and frame rate last requested from the adapter for CPU or bandwidth (`nil`: not limited).
    private var limitedSize: Dimensions?
    private var limitedFPS: Double?
    private var rotationPool: FrameBufferPool?
    /// The adapted size at level 0, the base of the overuse and bandwidth steps.
    private var baseSize: Dimensions?
    /// The capture time of the previous frame taken, for the limitation durations.
    private var lastTimestampNs: UInt64?
    private var framesTaken = 0

    init(
        configuration: SendPipelineConfiguration, encoder: VP8Encoder, simulcast: SimulcastEncoders?,
        state: ConditionLock<SendPipeline.State>, adapter: VideoAdapter, sinks: [any EncodedFrameSink], logger: Logger,
        events: AsyncStream<SendPipelineEvent>.Continuation, finished: Completion
    ) {
        self.configuration = configuration
        self.encoder = encoder
        self.simulcast = simulcast
        self.state = state
        self.adapter = adapter
        self.sinks = sinks
        self.logger = logger
        self.events = events
        self.finished = finished
        detector = OveruseDetector(configuration: configuration.overuse)
        scaler = QualityScaler(configuration: configuration.qualityScaling)
        baseAdapter = VideoAdapter(poolCapacity: 1)
        if let request = configuration.outputRequest {
            baseAdapter.adaptOutputFormat(width: request.width, height: request.height, fps: request.fps)
        }
    }

    /// Holds the worker while it crosses into the new thread.
    private final class Box {
        let worker: EncoderWorker
        init(_ worker: EncoderWorker) { self.worker = worker }
    }

    /// Starts `worker` on a new, detached thread. The worker must not be used by the caller afterwards: it belongs to
    /// the new thread, which finishes the sinks and the pipeline's `Completion` when it ends.
    static func start(_ worker: EncoderWorker) throws(CaptureError) {
        let box = Unmanaged.passRetained(Box(worker)).toOpaque()
        var id = pthread_t()
        let status = pthread_create(
            &id, nil,
            { argument in
                guard let argument else { return nil }
                let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
                nameCurrentThread("encoder")
                box.worker.run()
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw CaptureError(
                .invalidState, "cannot start the encoder thread", call: "pthread_create",
                errno: Errno(rawValue: status))
        }
        pthread_detach(id)
    }

    /// A frame and the controls to apply before encoding it.
    private struct Job {
        var pending: SendPipeline.PendingFrame
        /// Bit `i`: a key frame on simulcast layer `i` (bit 0: the single stream).
        var keyFrameLayers: UInt32
        var bitrateKbps: Int?
        var targetKbps: Int
        var dropForCongestion: Bool
        var delay: Duration?
        var injected: Duration?
    }

    private func run() {
        while let job = nextJob() {
            process(job)
        }
        for sink in sinks { sink.finish() }
        events.finish()
        logger.debug("send pipeline stopped")
        finished.finish()
    }

    /// Waits for a frame (or the stop); takes it with the pending controls.
    private func nextJob() -> Job? {
        let index = framesTaken
        framesTaken += 1
        // blocking: the encoder thread waits for the next frame or the stop; it is the thread's whole job.
        return state.wait(until: { $0.pending != nil || $0.stopping }) { state -> Job? in
            guard !state.stopping, let pending = state.pending else { return nil }
            state.pending = nil
            defer {
                state.keyFrameLayers = 0
                state.pendingBitrateKbps = nil
            }
            return Job(
                pending: pending, keyFrameLayers: state.keyFrameLayers, bitrateKbps: state.pendingBitrateKbps,
                targetKbps: state.statistics.currentTargetKbps, dropForCongestion: state.congestionDropping,
                delay: state.encodeDelay, injected: state.injectedEncodeDuration?(index))
        }
    }

    private func process(_ job: Job) {
        if let simulcast {
            process(job, layers: simulcast)
            return
        }
        if job.keyFrameLayers & 1 != 0 { encoder.requestKeyFrame() }
        if let kbps = job.bitrateKbps {
            do throws(CaptureError) {
                try encoder.setRates(bitrateKbps: kbps, fps: encoder.configuration.framerate)
            } catch {
                fail(error, stage: "setRates")
            }
        }
        let timestampNs = job.pending.frame.timestampNs
        guard let base = admit(job, timestampNs: timestampNs) else { return }
        let startNs = MonotonicClock.nowNs()
        if let delay = job.delay {
            // blocking: the encoder thread's test hook for a slow encoder.
            MonotonicClock.sleep(untilNs: startNs &+ UInt64(clamping: Self.nanoseconds(delay)))
        }
        var frame = job.pending.frame
        let encoded: EncodedFrame?
        do throws(CaptureError) {
            if configuration.rotatePixels, frame.rotation != .degrees0 { frame = try rotated(frame) }
            encoded = try encoder.encode(frame)
        } catch {
            fail(error, stage: "encode")
            return
        }
        let durationNs = MonotonicClock.nowNs() - startNs
        state.withLock { state in
            state.statistics.addEncodeTime(durationNs)
            if let encoded {
                state.statistics.framesEncoded += 1
                if encoded.isKeyFrame { state.statistics.keyFrames += 1 }
                state.statistics.currentOutputSize = encoded.dimensions
            } else {
                state.statistics.droppedByRateControl += 1
            }
        }
        if let encoded {
            for sink in sinks { sink.consume(encoded) }
        }
        let measured = job.injected.map(Self.nanoseconds) ?? Int64(clamping: durationNs)
        let decision = detector.addSample(encodeDurationNs: measured, frameIntervalNs: job.pending.intervalNs)
        if decision != .keep { adapt(decision) }
        let sample = QualityScaler.Frame(
            qp: encoded?.qp, timestampNs: timestampNs, targetKbps: job.targetKbps,
            pixels: Self.pixels(of: base, level: bandwidthLevel),
            stepUpPixels: bandwidthLevel > 0 ? Self.pixels(of: base, level: bandwidthLevel - 1) : nil,
            canStepDown: Self.pixels(of: base, level: bandwidthLevel + 1) >= configuration.overuse.minimumPixels)
        let step = scaler.addFrame(sample)
        if step != .keep { adaptForBandwidth(step, targetKbps: job.targetKbps) }
    }

    /// What every frame goes through before it is encoded: the time since the previous frame counts towards the
    /// limitation in force, a frame dropped for congestion is counted, and the level-0 size follows the camera's.
    /// The level-0 size, or `nil` when the frame is dropped.
    private func admit(_ job: Job, timestampNs: UInt64) -> Dimensions? {
        let elapsedNs = lastTimestampNs.map { timestampNs > $0 ? timestampNs - $0 : 0 } ?? 0
        lastTimestampNs = timestampNs
        let dropped = job.dropForCongestion
        state.withLock { state in
            let reason = state.statistics.qualityLimitationReason
            state.statistics.qualityLimitationDurations[reason, default: .zero] += .nanoseconds(
                Int64(clamping: elapsedNs))
            if dropped { state.statistics.droppedForCongestion += 1 }
        }
        if dropped { return nil }
        let base = baseAdapter.adaptation(for: job.pending.inputDimensions).output
        if base != baseSize {
            baseSize = base
            if limitedSize != nil { applyLimits() }
        }
        return base
    }

    /// ``process(_:)`` with simulcast: the key-frame requests and the target go to the layers, the layers are laid
    /// out again when the input size changed, every active layer is encoded and handed to the sinks (lowest first),
    /// and the time of it all feeds the overuse detector. No quality scaler.
    private func process(_ job: Job, layers: SimulcastEncoders) {
        if job.keyFrameLayers != 0 { layers.requestKeyFrames(mask: job.keyFrameLayers) }
        var frame = job.pending.frame
        let rotates = configuration.rotatePixels && frame.rotation != .degrees0
        let inputSize = rotates ? frame.dimensions.applying(frame.rotation) : frame.dimensions
        // A new layout allocates the latest target itself.
        if let kbps = job.bitrateKbps, layers.layout?.input == inputSize {
            applyAllocation(layers.setTarget(kbps: kbps), layers: layers)
        }
        let timestampNs = frame.timestampNs
        guard admit(job, timestampNs: timestampNs) != nil else { return }
        if layers.layout?.input != inputSize { relayout(layers, for: inputSize) }
        let startNs = MonotonicClock.nowNs()
        if let delay = job.delay {
            // blocking: the encoder thread's test hook for a slow encoder.
            MonotonicClock.sleep(untilNs: startNs &+ UInt64(clamping: Self.nanoseconds(delay)))
        }
        if rotates {
            do throws(CaptureError) {
                frame = try rotated(frame)
            } catch {
                fail(error, stage: "rotate")
                return
            }
        }
        // The sinks' time is not encoding time.
        var sinkNs: UInt64 = 0
        layers.encode(
            frame,
            deliver: { encoded in
                let sinkStartNs = MonotonicClock.nowNs()
                for sink in sinks { sink.consume(encoded) }
                sinkNs &+= MonotonicClock.nowNs() &- sinkStartNs
            },
            failure: { error, stage in fail(error, stage: stage) })
        let totalNs = MonotonicClock.nowNs() - startNs
        let durationNs = totalNs > sinkNs ? totalNs - sinkNs : 0
        state.withLock { state in
            state.statistics.addEncodeTime(durationNs)
            for index in state.statistics.layers.indices where index < layers.outcomes.count {
                let outcome = layers.outcomes[index]
                if outcome.encoded {
                    state.statistics.framesEncoded += 1
                    state.statistics.layers[index].framesEncoded += 1
                    state.statistics.layers[index].bytesEncoded += outcome.bytes
                    state.statistics.currentOutputSize = state.statistics.layers[index].dimensions
                    if outcome.isKeyFrame {
                        state.statistics.keyFrames += 1
                        state.statistics.layers[index].keyFrames += 1
                    }
                }
                if outcome.droppedByRateControl {
                    state.statistics.droppedByRateControl += 1
                    state.statistics.layers[index].droppedByRateControl += 1
                }
            }
        }
        let measured = job.injected.map(Self.nanoseconds) ?? Int64(clamping: durationNs)
        let decision = detector.addSample(encodeDurationNs: measured, frameIntervalNs: job.pending.intervalNs)
        if decision != .keep { adapt(decision) }
    }

    /// Lays the simulcast layers out for frames of `size`: the pipeline's bit-rate range becomes the layout's, the
    /// last requested target is clamped to it and allocated; logged and reported.
    private func relayout(_ layers: SimulcastEncoders, for size: Dimensions) {
        let layout = layers.layout(for: size)
        let kbps = state.withLock { state -> Int in
            state.bitrateRange = layout.bitrateRange
            state.paddingTargetKbps = layout.paddingTargetKbps
            let applied = SendPipeline.clamp(state.requestedTargetKbps, to: layout.bitrateRange)
            state.statistics.currentTargetKbps = applied
            // Allocated below from the latest request.
            state.pendingBitrateKbps = nil
            let old = state.statistics.layers
            var entries: [SimulcastLayerStatistics] = []
            for (index, stream) in layout.streams.enumerated() {
                var entry =
                    index < old.count
                    ? old[index] : retiredLayers[index] ?? SimulcastLayerStatistics(index: index, stream: stream)
                entry.stream = stream
                entries.append(entry)
            }
            for var entry in old.dropFirst(layout.streams.count) {
                entry.isActive = false
                entry.targetKbps = 0
                retiredLayers[entry.index] = entry
            }
            state.statistics.layers = entries
            return applied
        }
        let switches = layers.relayout(to: layout, totalKbps: kbps)
        logger.info(
            "simulcast layout",
            metadata: [
                "input": "\(size)", "layers": "\(layout.streams.map(\.description).joined(separator: ", "))",
                "range kbit/s": "\(layout.bitrateRange)", "target kbit/s": "\(kbps)",
            ])
        events.yield(.simulcastLayoutChanged(streams: layout.streams))
        applyAllocation(switches, layers: layers, initial: true)
    }

    /// Publishes the layers' allocation: their shares and on/off state in the statistics, a log line and an event
    /// for each layer turned on or off, and the bandwidth limitation.
    private func applyAllocation(
        _ switches: [SimulcastEncoders.Switch], layers: SimulcastEncoders, initial: Bool = false
    ) {
        guard let allocation = layers.allocation else { return }
        state.withLock { state in
            for (index, share) in allocation.layers.enumerated() where index < state.statistics.layers.count {
                state.statistics.layers[index].targetKbps = share.kbps
                state.statistics.layers[index].isActive = share.isActive
            }
            guard !initial else { return }
            for change in switches where change.index < state.statistics.layers.count {
                if change.active {
                    state.statistics.layers[change.index].activations += 1
                } else {
                    state.statistics.layers[change.index].deactivations += 1
                }
            }
        }
        for change in switches {
            let size = layers.layout.map { "\($0.streams[change.index].dimensions)" } ?? "?"
            logger.info(
                "simulcast layer \(change.active ? "on" : "off")",
                metadata: [
                    "layer": "\(change.index)", "size": "\(size)", "kbit/s": "\(change.kbps)",
                    "total kbit/s": "\(layers.totalKbps)",
                ])
            events.yield(.simulcastLayerChanged(index: change.index, active: change.active, kbps: change.kbps))
        }
        if layersBandwidthLimited != allocation.isBandwidthLimited {
            layersBandwidthLimited = allocation.isBandwidthLimited
            applyLimits()
        }
    }

    /// Rotates the frame upright into a pooled buffer (I420), giving rotation 0.
    private func rotated(_ frame: VideoFrame) throws(CaptureError) -> VideoFrame {
        let size = frame.dimensions.applying(frame.rotation)
        if rotationPool?.dimensions != size {
            rotationPool = FrameBufferPool(format: .i420, dimensions: size, capacity: 2)
        }
        guard let output = rotationPool?.take() else {
            throw CaptureError(.invalidState, "no free buffer to rotate into")
        }
        try FrameTransformer.rotate(frame.buffer, by: frame.rotation, into: output)
        return VideoFrame(
            buffer: output, rotation: .degrees0, timestampNs: frame.timestampNs, sequenceNumber: frame.sequenceNumber)
    }

    /// Applies an overuse step through the video adapter, unless it is at a limit.
    private func adapt(_ decision: OveruseDetector.Decision) {
        guard let base = baseSize else { return }
        let level = detector.level + (decision == .stepDown ? 1 : -1)
        guard level >= 0 else { return }
        let size = Self.size(of: base, level: level)
        if decision == .stepDown, size.width * size.height < configuration.overuse.minimumPixels { return }
        detector.didStep(decision)
        let stepUp = decision == .stepUp
        state.withLock { state in
            if stepUp { state.statistics.resolutionStepsUp += 1 } else { state.statistics.resolutionStepsDown += 1 }
        }
        logger.info(
            "CPU \(stepUp ? "underuse: raising" : "overuse: lowering") the resolution",
            metadata: [
                "level": "\(level)", "size": "\(size)",
                "usage %": "\(detector.lastWindowUsage.map { Int(($0 * 100).rounded()) } ?? -1)",
            ])
        events.yield(.resolutionChanged(level: level, maximum: size, stepUp: stepUp))
        applyLimits()
    }

    /// Applies a quality-scaler step (resolution or frame rate), unless it is at a limit.
    private func adaptForBandwidth(_ step: QualityScaler.Decision, targetKbps: Int) {
        switch step {
        case .keep:
            return
        case .resolutionDown:
            bandwidthLevel += 1
        case .resolutionUp:
            guard bandwidthLevel > 0 else {
                scaler.didApply(.keep)
                return
            }
            bandwidthLevel -= 1
        case .frameRateDown, .frameRateUp:
            break
        }
        scaler.didApply(step)
        let down = step == .resolutionDown || step == .frameRateDown
        state.withLock { state in
            if down { state.statistics.bandwidthStepsDown += 1 } else { state.statistics.bandwidthStepsUp += 1 }
        }
        logger.info(
            "bandwidth: \(down ? "lowering" : "raising") the \(step == .frameRateDown || step == .frameRateUp ? "frame rate" : "resolution")",
            metadata: [
                "level": "\(bandwidthLevel)", "frame-rate level": "\(scaler.frameRateLevel)",
                "rule": "\(scaler.lastTrigger.rawValue)", "target kbit/s": "\(targetKbps)",
                "window QP": "\(scaler.lastAverageQP ?? -1)", "window dropped %": "\(scaler.lastDropPercent)",
            ])
        applyLimits()
    }

    /// Requests from the adapter the lower of the CPU and bandwidth resolutions and the bandwidth frame rate; updates
    /// the encoder's frame rate, the statistics and, on a change, logs and reports the limitation.
    private func applyLimits() {
        guard let base = baseSize else { return }
        let level = max(detector.level, bandwidthLevel)
        let size = level > 0 ? Self.size(of: base, level: level) : nil
        let configuredFPS = configuration.outputRequest?.fps ?? 0
        let fullFPS = configuredFPS > 0 ? configuredFPS : configuration.encoder.framerate
        let fps =
            scaler.frameRateLevel > 0 ? fullFPS * QualityScaler.frameRateFraction(level: scaler.frameRateLevel) : nil
        let reason: QualityLimitationReason =
            if detector.level > bandwidthLevel {
                .cpu
            } else if bandwidthLevel > 0 || fps != nil || layersBandwidthLimited {
                .bandwidth
            } else {
                detector.level > 0 ? .cpu : .none
            }
        let sizeChanged = size != limitedSize
        let fpsChanged = fps != limitedFPS
        if sizeChanged || fpsChanged {
            if size == nil, fps == nil, configuration.outputRequest == nil {
                adapter.resetOutputFormat()
            } else {
                let request = configuration.outputRequest
                adapter.adaptOutputFormat(
                    width: size?.width ?? request?.width ?? 0, height: size?.height ?? request?.height ?? 0,
                    fps: fps ?? configuredFPS)
            }
        }
        if fpsChanged {
            do throws(CaptureError) {
                try encoder.setRates(
                    bitrateKbps: encoder.configuration.targetBitrateKbps, fps: fps ?? configuration.encoder.framerate)
            } catch {
                fail(error, stage: "setRates")
            }
        }
        limitedSize = size
        limitedFPS = fps
        let changed = state.withLock { state -> Bool in
            let changed = sizeChanged || fpsChanged || state.statistics.qualityLimitationReason != reason
            if sizeChanged { state.statistics.qualityLimitationResolutionChanges += 1 }
            state.statistics.qualityLimitationReason = reason
            state.statistics.limitedFrameRate = fps
            return changed
        }
        guard changed else { return }
        logger.info(
            "quality limitation changed",
            metadata: [
                "reason": "\(reason.rawValue)", "size": "\(size.map { "\($0)" } ?? "full")",
                "fps": "\(fps.map { "\($0)" } ?? "full")",
            ])
        events.yield(.qualityLimitationChanged(reason: reason, size: size, fps: fps))
    }

    /// `base` scaled to `level` (even sides, at least 2).
    static func size(of base: Dimensions, level: Int) -> Dimensions {
        let (numerator, denominator) = OveruseConfiguration.scale(level: level)
        func side(_ value: Int) -> Int { max(2, value * numerator / denominator / 2 * 2) }
        return Dimensions(width: side(base.width), height: side(base.height))
    }

    /// The pixels of `base` scaled to `level`.
    static func pixels(of base: Dimensions, level: Int) -> Int {
        let size = size(of: base, level: level)
        return size.width * size.height
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000
    }

    private func fail(_ error: CaptureError, stage: String) {
        SendPipeline.reportFailure(error, stage: stage, state: state, logger: logger, events: events)
    }
}
