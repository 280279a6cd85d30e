import CaptureCall
import CaptureCore
import CaptureVP8
import MallocInterposerSwift

#if canImport(Glibc)
    import Glibc
#endif

/// Simulcast against one stream through `SendPipeline`: frames of a raw I420 clip (`--input`, looped if shorter than
/// `--frames`) handed to the pipeline one at a time, each once the previous one's layers are all out, first with
/// `SimulcastConfiguration(maxLayers: --layers, temporalLayers: --temporal-layers)`, then as one stream with the same
/// temporal layers, alternating for `--runs` runs; the best run of each by CPU.
///
/// CPU is the encoder thread's (`CLOCK_THREAD_CPUTIME_ID`, read by the sink, which runs on it: layout, scaling, every
/// layer's encode, the statistics), from frame `--warmup` to the last; on a machine where libvpx gets more than one
/// thread, the process's CPU time (also printed, which includes filling the frames) is the figure to take. With the
/// malloc interposer preloaded it counts the heap allocations of every thread over the same frames. libvpx's frame
/// dropping is off, so every active layer has a frame for every input frame and the hand-off never waits for one that
/// will not come.
struct SimulcastBench {
    let options: BenchOptions

    init(_ options: BenchOptions) { self.options = options }

    /// One run's figures.
    private struct Run {
        var threadCPUNs: UInt64 = 0
        var processCPUNs: UInt64 = 0
        var mallocs = 0
        var frames = 0
        var bytes = 0
        var layers: [SimulcastLayerStatistics] = []
    }

    func run() throws(CaptureError) {
        MallocInterposerSwift.initialize()
        let size = try options.dimensions()
        let frames = try options.int("frames", default: 150)
        let warmup = min(try options.int("warmup", default: 10), frames / 2)
        let kbps = try options.int("kbps", default: 2_500)
        let runs = try options.int("runs", default: 3)
        let layers = try options.int("layers", default: 3)
        let temporalLayers = try options.int("temporal-layers", default: 3)
        let clip = try readFile(try options.string("input"))
        let frameBytes = size.area + 2 * ((size.width + 1) / 2) * ((size.height + 1) / 2)
        let clipFrames = clip.count / frameBytes
        guard clipFrames > 0 else { throw CaptureError(.invalidArgument, "the clip holds no \(size) I420 frame") }
        let simulcast = SimulcastConfiguration(maxLayers: layers, temporalLayers: temporalLayers)
        try simulcast.validate()
        let layout = SimulcastLayout(input: size, maxLayers: layers, temporalLayers: temporalLayers)
        var allocator = SimulcastRateAllocator(streams: layout.streams)
        let active = allocator.allocate(totalKbps: kbps).activeLayerCount
        var encoder = VP8EncoderConfiguration(targetBitrateKbps: kbps, framerate: 30, frameDropThreshold: 0)
        encoder.temporalLayers = temporalLayers

        var best: [Bool: Run] = [:]
        for _ in 0..<runs {
            for isSimulcast in [true, false] {
                let run = try Self.measure(
                    clip: clip, clipFrames: clipFrames, size: size, frames: frames, warmup: warmup,
                    configuration: SendPipelineConfiguration(
                        encoder: encoder, maxBitrateKbps: kbps, overuse: OveruseConfiguration(enabled: false),
                        qualityScaling: QualityScalerConfiguration(enabled: false),
                        simulcast: isSimulcast ? simulcast : nil),
                    outputsPerFrame: isSimulcast ? active : 1)
                if let previous = best[isSimulcast], previous.threadCPUNs <= run.threadCPUNs { continue }
                best[isSimulcast] = run
            }
        }
        guard let many = best[true], let one = best[false] else { return }
        func ms(_ ns: UInt64, _ run: Run) -> Double { Double(ns) / 1e6 / Double(max(1, run.frames)) }
        let layerText = many.layers.map { "\($0.dimensions)@\($0.targetKbps)" }.joined(separator: ",")
        print(
            "simulcast size=\(size) layers=\(layout.streams.count) active=\(active) temporal_layers=\(temporalLayers) "
                + "kbps=\(kbps) streams=\(layerText) frames=\(many.frames) "
                + "threads=\(encoder.resolvedThreads(for: size)) "
                + "simulcast_thread_cpu_ms_per_frame=\(fixed(ms(many.threadCPUNs, many), 3)) "
                + "single_thread_cpu_ms_per_frame=\(fixed(ms(one.threadCPUNs, one), 3)) "
                + "ratio=\(fixed(Double(many.threadCPUNs) / Double(max(1, one.threadCPUNs)), 3)) "
                + "simulcast_process_cpu_ms_per_frame=\(fixed(ms(many.processCPUNs, many), 3)) "
                + "single_process_cpu_ms_per_frame=\(fixed(ms(one.processCPUNs, one), 3)) "
                + "simulcast_kbps_actual=\(many.bytes * 8 * 30 / max(1, many.frames) / 1000) "
                + "single_kbps_actual=\(one.bytes * 8 * 30 / max(1, one.frames) / 1000) "
                + "simulcast_mallocs_per_frame=\(fixed(Double(many.mallocs) / Double(max(1, many.frames)), 2)) "
                + "single_mallocs_per_frame=\(fixed(Double(one.mallocs) / Double(max(1, one.frames)), 2))")
    }

    /// One pipeline, `frames` frames, in lock-step with the sink.
    private static func measure(
        clip: [UInt8], clipFrames: Int, size: Dimensions, frames: Int, warmup: Int,
        configuration: SendPipelineConfiguration, outputsPerFrame: Int
    ) throws(CaptureError) -> Run {
        let frameBytes = clip.count / clipFrames
        let sink = LockStepSink(outputsPerFrame: outputsPerFrame, warmup: warmup, frames: frames)
        // Released when feed(…) returns, the pipeline tells its encoder thread to stop; that thread calls the sink's
        // finish() as it ends.
        let run = try feed(
            clip: clip, clipFrames: clipFrames, frameBytes: frameBytes, size: size, frames: frames, warmup: warmup,
            configuration: configuration, sink: sink)
        sink.waitForFinish()
        return run
    }

    /// Feeds the frames to a new pipeline; returns the run's figures (the pipeline goes when this returns).
    private static func feed(
        clip: [UInt8], clipFrames: Int, frameBytes: Int, size: Dimensions, frames: Int, warmup: Int,
        configuration: SendPipelineConfiguration, sink: LockStepSink
    ) throws(CaptureError) -> Run {
        let pipeline = try SendPipeline(configuration: configuration, sinks: [sink])
        let capturer = CameraVideoCapturer()
        let buffers = (0..<4).map { _ in VideoFrameBuffer(format: .i420, width: size.width, height: size.height) }
        for index in 0..<frames {
            let buffer = buffers[index % buffers.count]
            clip.withUnsafeBufferPointer { raw in
                guard let base = raw.baseAddress else { return }
                VP8Bench.fill(buffer, fromI420: base + (index % clipFrames) * frameBytes)
            }
            let frame = VideoFrame(
                buffer: buffer, rotation: .degrees0, timestampNs: UInt64(index) * 1_000_000_000 / 30,
                sequenceNumber: UInt64(index))
            pipeline.capturer(capturer, didCapture: frame)
            sink.waitForFrame(index + 1)
        }
        let statistics = MallocInterposerSwift.getStatistics()
        MallocInterposerSwift.reset()
        let window = sink.window
        var run = Run()
        run.threadCPUNs = window.threadCPUEndNs &- window.threadCPUStartNs
        run.processCPUNs = window.processCPUEndNs &- window.processCPUStartNs
        run.mallocs = statistics.mallocCount
        run.frames = frames - warmup
        run.bytes = window.bytes
        run.layers = pipeline.statistics.layers
        return run
    }
}

/// Counts the encoded frames on the encoder thread, wakes the feeder when a frame's layers are all out, and takes the
/// encoder thread's and the process's CPU times and turns allocation counting on and off at the window's edges.
private final class LockStepSink: EncodedFrameSink {
    struct Window {
        var outputs = 0
        var bytes = 0
        var threadCPUStartNs: UInt64 = 0
        var threadCPUEndNs: UInt64 = 0
        var processCPUStartNs: UInt64 = 0
        var processCPUEndNs: UInt64 = 0
        var finished = false
    }

    private let outputsPerFrame: Int
    private let warmup: Int
    private let frames: Int
    private let state = ConditionLock(Window())

    init(outputsPerFrame: Int, warmup: Int, frames: Int) {
        self.outputsPerFrame = outputsPerFrame
        self.warmup = warmup
        self.frames = frames
    }

    func consume(_ frame: EncodedFrame) {
        let (outputsPerFrame, warmup, frames) = (self.outputsPerFrame, self.warmup, self.frames)
        state.withLock(signalling: true) { window in
            window.outputs += 1
            let done = window.outputs.isMultiple(of: outputsPerFrame) ? window.outputs / outputsPerFrame : 0
            // Every layer's bytes of the frames after the warm-up (this output belongs to frame `frameIndex`).
            let frameIndex = (window.outputs - 1) / outputsPerFrame + 1
            if frameIndex > warmup { window.bytes += frame.bytes.count }
            if done == warmup {
                window.threadCPUStartNs = threadCPUTimeNs()
                window.processCPUStartNs = processCPUTimeNs()
                MallocInterposerSwift.hook()
            } else if done == frames {
                MallocInterposerSwift.unhook()
                window.threadCPUEndNs = threadCPUTimeNs()
                window.processCPUEndNs = processCPUTimeNs()
            }
        }
    }

    func finish() { state.withLock(signalling: true) { $0.finished = true } }

    /// Waits until the pipeline's encoder thread has finished the sink (its last act but one).
    func waitForFinish() {
        // blocking: the bench's main thread waits for the encoder thread to end.
        state.wait(until: { $0.finished }) { _ in }
    }

    /// Waits until `count` frames have all their layers out.
    func waitForFrame(_ count: Int) {
        let needed = count * outputsPerFrame
        // blocking: the bench's feeding thread waits for the encoder thread, one frame at a time.
        state.wait(until: { $0.outputs >= needed }) { _ in }
    }

    var window: Window { state.withLock { $0 } }
}
