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
/// rotates and encodes it, hands it to the sinks and steers the resolution from the measured encode times.
///
/// It owns the `VP8Encoder`, the overuse detector and the rotation pool; after ``start(_:)`` only the encoder thread
/// touches them. Shared state goes through the pipeline's `ConditionLock`.
final class EncoderWorker {
    private let configuration: SendPipelineConfiguration
    private let encoder: VP8Encoder
    private let state: ConditionLock<SendPipeline.State>
    private let adapter: VideoAdapter
    private let sinks: [any EncodedFrameSink]
    private let logger: Logger
    private let events: AsyncStream<SendPipelineEvent>.Continuation
    /// Finished as the thread's last act.
    private let finished: Completion
    private var detector: OveruseDetector
    private var rotationPool: FrameBufferPool?
    /// The adapted size at level 0, the base of the overuse steps.
    private var baseSize: Dimensions?
    private var framesTaken = 0

    init(
        configuration: SendPipelineConfiguration, encoder: VP8Encoder, state: ConditionLock<SendPipeline.State>,
        adapter: VideoAdapter, sinks: [any EncodedFrameSink], logger: Logger,
        events: AsyncStream<SendPipelineEvent>.Continuation, finished: Completion
    ) {
        self.configuration = configuration
        self.encoder = encoder
        self.state = state
        self.adapter = adapter
        self.sinks = sinks
        self.logger = logger
        self.events = events
        self.finished = finished
        detector = OveruseDetector(configuration: configuration.overuse)
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
        var forceKeyFrame: Bool
        var bitrateKbps: Int?
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
                state.keyFrameRequested = false
                state.pendingBitrateKbps = nil
            }
            return Job(
                pending: pending, forceKeyFrame: state.keyFrameRequested, bitrateKbps: state.pendingBitrateKbps,
                delay: state.encodeDelay, injected: state.injectedEncodeDuration?(index))
        }
    }

    private func process(_ job: Job) {
        if job.forceKeyFrame { encoder.requestKeyFrame() }
        if let kbps = job.bitrateKbps {
            do throws(CaptureError) {
                try encoder.setRates(bitrateKbps: kbps, fps: encoder.configuration.framerate)
            } catch {
                fail(error, stage: "setRates")
            }
        }
        let startNs = MonotonicClock.nowNs()
        if let delay = job.delay {
            // blocking: the encoder thread's test hook for a slow encoder.
            MonotonicClock.sleep(untilNs: startNs &+ UInt64(clamping: Self.nanoseconds(delay)))
        }
        var frame = job.pending.frame
        if baseSize == nil || detector.level == 0 { baseSize = frame.dimensions }
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
        let fps = configuration.outputRequest?.fps ?? 0
        if level == 0, configuration.outputRequest == nil {
            adapter.resetOutputFormat()
        } else {
            adapter.adaptOutputFormat(width: size.width, height: size.height, fps: fps)
        }
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
    }

    /// `base` scaled to `level` (even sides, at least 2).
    static func size(of base: Dimensions, level: Int) -> Dimensions {
        let (numerator, denominator) = OveruseConfiguration.scale(level: level)
        func side(_ value: Int) -> Int { max(2, value * numerator / denominator / 2 * 2) }
        return Dimensions(width: side(base.width), height: side(base.height))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000
    }

    private func fail(_ error: CaptureError, stage: String) {
        SendPipeline.reportFailure(error, stage: stage, state: state, logger: logger, events: events)
    }
}
