import CaptureCore
import CaptureV4L2
import MallocInterposerSwift
import Synchronization

/// The capture path alone: the synthetic camera, unpaced (or a V4L2 node with `--device`, at its own rate), through
/// `CameraVideoCapturer` to a delegate that only counts. With the malloc interposer preloaded (`LD_PRELOAD=libMallocInterposerSwift.so`, as `Scripts/bench` does),
/// it also counts every heap allocation, on every thread, between frame `warmup` and frame `warmup + frames`: the
/// steady-state allocations per frame.
struct CaptureBench {
    let size: Dimensions
    let frames: Int
    let warmup: Int
    let layout: OutputPixelFormat
    /// Control: the delegate copies every frame out (one allocation a frame), to show the counter counts.
    let copy: Bool
    /// A V4L2 node to capture from instead of the synthetic camera.
    let node: String?
    /// Pixel formats to prefer (`--format YUYV`); the default preference otherwise.
    let preference: [PixelFormat]

    init(_ options: BenchOptions) throws(CaptureError) {
        copy = options.values["copy"] == "yes"
        node = options.values["device"]
        if let text = options.values["format"] {
            guard let format = PixelFormat(fourCC: text) else {
                throw CaptureError(.invalidArgument, "bad --format \(text)")
            }
            preference = [format]
        } else {
            preference = PixelFormat.defaultPreference
        }
        size = try options.dimensions()
        frames = try options.int("frames", default: 1000)
        warmup = try options.int("warmup", default: 100)
        layout = try options.layout("layout")
    }

    func run() async throws(CaptureError) {
        MallocInterposerSwift.initialize()
        let delegate = CountingDelegate(warmup: warmup, limit: warmup + frames, copy: copy)
        let capturer = CameraVideoCapturer(delegate: delegate, provider: node == nil ? .builtIn : .system)
        capturer.isPaced = false
        capturer.outputPixelFormat = layout
        if let node {
            try await capturer.startCapture(
                device: try V4L2Backend.describe(node: node), target: size, fpsLimit: 60, preference: preference)
        } else {
            try await capturer.startCapture(target: size, fpsLimit: 60, preference: preference)
        }
        await delegate.finished()
        await capturer.stopCapture()
        let window = delegate.window.withLock { $0 }
        let seconds = Double(window.endNs &- window.startNs) / 1e9
        let statistics = MallocInterposerSwift.getStatistics()
        print(
            "device=\(capturer.configuration?.device.id ?? "?") "
                + "format=\(capturer.configuration?.granted.pixelFormat.fourCC ?? "?") "
                + "frames=\(frames) size=\(size) layout=\(layout.rawValue) seconds=\(seconds) "
                + "copy=\(copy) fps=\(Double(frames) / seconds) dropped=\(capturer.statistics.framesDropped) "
                + "mallocs=\(statistics.mallocCount) malloc_bytes=\(statistics.mallocBytesCount) "
                + "mallocs_per_frame=\(Double(statistics.mallocCount) / Double(frames))")
    }
}

/// Counts frames, turns allocation counting on at frame `warmup` and off at frame `limit`, then signals.
private final class CountingDelegate: CameraVideoCapturerDelegate {
    private let warmup: Int
    private let limit: Int
    private let copy: Bool
    private let copied = Atomic<Int>(0)
    private let count = Atomic<Int>(0)
    let window = Locked<(startNs: UInt64, endNs: UInt64)>((0, 0))
    private let done: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(warmup: Int, limit: Int, copy: Bool) {
        self.warmup = warmup
        self.limit = limit
        self.copy = copy
        (done, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let seen = count.add(1, ordering: .relaxed).newValue
        if copy { copied.add(frame.buffer.packedBytes(plane: 0).count, ordering: .relaxed) }
        if seen == warmup {
            window.withLock { $0.startNs = MonotonicClock.nowNs() }
            MallocInterposerSwift.hook()
        } else if seen == limit {
            MallocInterposerSwift.unhook()
            window.withLock { $0.endNs = MonotonicClock.nowNs() }
            signal.yield()
            signal.finish()
        }
    }

    func finished() async {
        for await _ in done { return }
    }
}
