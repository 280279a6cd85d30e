import CaptureConversion
import CaptureCore
import CaptureFileCameras
import CaptureV4L2
import CaptureVP8
import MallocInterposerSwift

#if canImport(Glibc)
    import Glibc
#endif

/// The whole pipeline: a camera (the replay camera on a file, the synthetic camera, or a V4L2 node with `--device`,
/// live at its own rate) → `CameraVideoCapturer` → converter → `VP8Encoder` (WebRTC's real-time configuration, one
/// thread) → IVF, unpaced, for `frames` frames.
///
/// Reports wall time and process CPU time (`CLOCK_PROCESS_CPUTIME_ID`, every thread) from `startCapture` to the
/// last encoded frame, peak RSS (`VmHWM`), frames and bytes encoded. Frames are stamped `index / fps` before encoding,
/// as a file's timestamps are for ffmpeg and GStreamer, so rate control does the same work. With `--streams N` (the
/// synthetic camera only) N capturers each feed their own encoder at once. With the malloc interposer preloaded it
/// also counts heap allocations per frame after `warmup` frames.
struct PipelineBench {
    let options: BenchOptions

    init(_ options: BenchOptions) { self.options = options }

    func run() async throws(CaptureError) {
        MallocInterposerSwift.initialize()
        let size = try options.dimensions()
        let frames = try options.int("frames", default: 150)
        let fps = try options.int("fps", default: 30)
        let kbps = try options.int("kbps", default: 1500)
        let streams = try options.int("streams", default: 1)
        let warmup = min(try options.int("warmup", default: 10), frames / 2)
        let input = options.values["input"]
        let node = options.values["device"]
        var source: ReplaySource?
        if let input {
            let text = try options.string("format")
            guard let format = PixelFormat(fourCC: text.uppercased()) else {
                throw CaptureError(.invalidArgument, "bad --format \(text)")
            }
            source = ReplaySource(path: input, pixelFormat: format, dimensions: size, fps: Double(fps))
        }
        guard (source == nil && node == nil) || streams == 1 else {
            throw CaptureError(.invalidArgument, "--streams is for the synthetic camera (no --input or --device)")
        }
        guard source == nil || node == nil else {
            throw CaptureError(.invalidArgument, "--input and --device exclude each other")
        }
        var preference = PixelFormat.defaultPreference
        if node != nil, let text = options.values["format"] {
            guard let format = PixelFormat(fourCC: text.uppercased()) else {
                throw CaptureError(.invalidArgument, "bad --format \(text)")
            }
            preference = [format]
        }
        let configuration = VP8EncoderConfiguration(targetBitrateKbps: kbps, framerate: Double(fps))
        var sinks: [EncodingSink] = []
        var capturers: [CameraVideoCapturer] = []
        let counter = MallocWindow(warmup: warmup * streams, limit: frames * streams)
        for stream in 0..<streams {
            let ivf = stream == 0 ? options.values["ivf"] : nil
            let sink = try EncodingSink(
                configuration: configuration, size: size, fps: fps, frames: frames, ivfPath: ivf, window: counter)
            let provider: CameraProvider =
                try source.map { source throws(CaptureError) in try .replay(source) }
                ?? (node == nil ? .builtIn : .system)
            let capturer = CameraVideoCapturer(delegate: sink, provider: provider)
            capturer.isPaced = false
            capturer.outputPixelFormat = .i420
            sinks.append(sink)
            capturers.append(capturer)
        }
        let wallStart = MonotonicClock.nowNs()
        let cpuStart = processCPUTimeNs()
        for capturer in capturers {
            if let node {
                try await capturer.startCapture(
                    device: try V4L2Backend.describe(node: node), target: size, fpsLimit: Double(fps),
                    preference: preference)
            } else if let device = capturer.captureDevices().first, source != nil {
                try await capturer.startCapture(device: device, target: size, fpsLimit: Double(fps))
            } else {
                try await capturer.startCapture(target: size, fpsLimit: Double(fps))
            }
        }
        for sink in sinks { await sink.finished() }
        let wall = secondsSince(wallStart)
        let cpu = Double(processCPUTimeNs() - cpuStart) / 1e9
        for capturer in capturers { await capturer.stopCapture() }
        let results = try sinks.map { sink throws(CaptureError) in try sink.close() }
        let statistics = MallocInterposerSwift.getStatistics()
        let measured = max(1, (frames - warmup) * streams)
        let total = frames * streams
        let streamFPS = results.map { Double(frames) / max($0.seconds, 1e-9) }
        print(
            "pipeline source=\(node.map { "v4l2:\($0)" } ?? source.map { "replay:\($0.pixelFormat.fourCC)" } ?? "synthetic") "
                + "granted=\(capturers.first?.configuration?.granted.pixelFormat.fourCC ?? "?") size=\(size) "
                + "streams=\(streams) frames=\(total) encoded=\(results.map(\.encoded).reduce(0, +)) "
                + "bytes=\(results.map(\.bytes).reduce(0, +)) keyframes=\(results.map(\.keyFrames).reduce(0, +)) "
                + "dropped=\(capturers.map(\.statistics.framesDropped).reduce(0, +)) "
                + "cpu_used=\(configuration.resolvedCpuUsed(for: size)) wall_s=\(fixed(wall, 4)) cpu_s=\(fixed(cpu, 4)) "
                + "wall_ms_per_frame=\(fixed(wall * 1000 / Double(total), 3)) "
                + "cpu_ms_per_frame=\(fixed(cpu * 1000 / Double(total), 3)) "
                + "fps_per_stream=\(fixed(streamFPS.min() ?? 0, 1)) peak_rss_kb=\(ProcessMemory.peakResidentKiB() ?? 0) "
                + "mallocs_per_frame=\(fixed(Double(statistics.mallocCount) / Double(measured), 2))")
    }
}

/// Counts frames over all streams; turns allocation counting on at `warmup` and off at `limit`.
private final class MallocWindow: Sendable {
    private let warmup: Int
    private let limit: Int
    private let seen = Locked(0)

    init(warmup: Int, limit: Int) {
        self.warmup = warmup
        self.limit = limit
    }

    func frameDone() {
        let count = seen.withLock { value -> Int in
            value += 1
            return value
        }
        if count == warmup { MallocInterposerSwift.hook() }
        if count == limit { MallocInterposerSwift.unhook() }
    }
}

/// What one stream did.
private struct SinkResult {
    var encoded = 0
    var keyFrames = 0
    var bytes = 0
    var seconds = 0.0
}

/// A delegate that encodes frames to VP8 (and IVF) on the capture thread until it has `frames`, then signals.
private final class EncodingSink: CameraVideoCapturerDelegate {
    private struct State {
        var encoder: VP8Encoder
        var writer: IVFWriter?
        var result = SinkResult()
        var count = 0
        var startNs: UInt64 = 0
        var error: CaptureError?
    }

    private let state: Locked<State>
    private let frames: Int
    private let fps: Int
    private let window: MallocWindow
    private let done: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(
        configuration: VP8EncoderConfiguration, size: Dimensions, fps: Int, frames: Int, ivfPath: String?,
        window: MallocWindow
    ) throws(CaptureError) {
        let writer = try ivfPath.map { path throws(CaptureError) in
            try IVFWriter(path: path, dimensions: size, timebase: .frameIndex(fps: fps))
        }
        state = Locked(State(encoder: try VP8Encoder(configuration: configuration), writer: writer))
        self.frames = frames
        self.fps = fps
        self.window = window
        (done, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let fps = UInt64(self.fps)
        let finished = state.withLock { state -> Bool in
            guard state.count < frames else { return false }
            if state.count == 0 { state.startNs = MonotonicClock.nowNs() }
            let index = UInt64(state.count)
            let stamped = VideoFrame(
                buffer: frame.buffer, rotation: frame.rotation, timestampNs: index * 1_000_000_000 / fps,
                sequenceNumber: index)
            do throws(CaptureError) {
                if let output = try state.encoder.encode(stamped) {
                    state.result.encoded += 1
                    state.result.bytes += output.bytes.count
                    if output.isKeyFrame { state.result.keyFrames += 1 }
                    try state.writer?.write(output)
                }
            } catch {
                state.error = state.error ?? error
            }
            state.count += 1
            if state.count == frames { state.result.seconds = secondsSince(state.startNs) }
            return state.count == frames
        }
        window.frameDone()
        if finished {
            signal.yield()
            signal.finish()
        }
    }

    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        if let error { state.withLock { $0.error = $0.error ?? error } }
        signal.yield()
        signal.finish()
    }

    func finished() async {
        for await _ in done { return }
    }

    func close() throws(CaptureError) -> SinkResult {
        try state.withLock { state throws(CaptureError) -> SinkResult in
            if let error = state.error { throw error }
            try state.writer?.close()
            return state.result
        }
    }
}

/// CPU time consumed by every thread of the process (`CLOCK_PROCESS_CPUTIME_ID`), in nanoseconds.
func processCPUTimeNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
