import CaptureCore
import CaptureVP8

/// Encodes preloaded frames of a raw I420 clip with ``VP8Encoder``; reports the best run's speed.
struct VP8Bench {
    let options: BenchOptions

    init(_ options: BenchOptions) { self.options = options }

    func run() throws(CaptureError) {
        let size = try options.dimensions()
        let layout = try options.layout("layout")
        let kbps = try options.int("kbps", default: 1000)
        let fps = try options.int("fps", default: 30)
        let runs = try options.int("runs", default: 3)
        let clip = try readFile(try options.string("input"))
        let frameBytes = size.area + 2 * ((size.width + 1) / 2) * ((size.height + 1) / 2)
        let count = min(try options.int("frames", default: 150), clip.count / frameBytes)
        guard count > 0 else { throw CaptureError(.invalidArgument, "the clip holds no \(size) I420 frame") }

        // Like a capture pool: a few buffers, each refilled (untimed) just before it is encoded, so the encoder reads
        // cache-warm pixels as it does after a conversion (and as vpxenc does after reading a frame).
        let buffers = (0..<4).map { _ in VideoFrameBuffer(format: layout, width: size.width, height: size.height) }

        let configuration = VP8EncoderConfiguration(targetBitrateKbps: kbps, framerate: Double(fps))
        var best = Double.infinity, bestCPU = 0.0
        var encoded = 0, bytes = 0, keyFrames = 0
        for run in 0..<runs {
            let encoder = try VP8Encoder(configuration: configuration)
            let writer =
                try run == 0
                ? options.values["ivf"].map { path throws(CaptureError) in
                    try IVFWriter(path: path, dimensions: size, timebase: .frameIndex(fps: fps))
                } : nil
            var outputs: [EncodedFrame] = []
            outputs.reserveCapacity(count)
            var elapsed = 0.0
            let cpuStart = threadCPUTimeNs()
            for index in 0..<count {
                let buffer = buffers[index % buffers.count]
                clip.withUnsafeBufferPointer { raw in
                    Self.fill(buffer, fromI420: raw.baseAddress! + index * frameBytes)
                }
                let frame = VideoFrame(
                    buffer: buffer, rotation: .degrees0, timestampNs: UInt64(index) * 1_000_000_000 / UInt64(fps),
                    sequenceNumber: UInt64(index))
                let start = MonotonicClock.nowNs()
                let output = try encoder.encode(frame)
                elapsed += secondsSince(start)
                if let output { outputs.append(output) }
            }
            let cpu = Double(threadCPUTimeNs() - cpuStart) / 1e9
            for output in outputs { try writer?.write(output) }
            try writer?.close()
            if elapsed < best { bestCPU = cpu }
            best = min(best, elapsed)
            encoded = outputs.count
            bytes = outputs.map(\.bytes.count).reduce(0, +)
            keyFrames = outputs.filter(\.isKeyFrame).count
        }
        let threads = configuration.resolvedThreads(for: size)
        print(
            "vp8 size=\(size) layout=\(layout) frames=\(count) encoded=\(encoded) keyframes=\(keyFrames) "
                + "threads=\(threads) cpu_used=\(configuration.resolvedCpuUsed(for: size)) "
                + "kbps_target=\(kbps) kbps_actual=\(bytes * 8 * fps / max(1, count) / 1000) "
                + "fps=\(fixed(Double(count) / best, 1)) ms_per_frame=\(fixed(best * 1000 / Double(count), 3)) "
                + "thread_cpu_ms_per_frame_incl_fill=\(fixed(bestCPU * 1000 / Double(count), 3))")
    }

    /// Copies one packed I420 frame into a buffer of either layout.
    static func fill(_ buffer: VideoFrameBuffer, fromI420 source: UnsafePointer<UInt8>) {
        let w = buffer.width, h = buffer.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let y = buffer.mutablePlane(0)
        for row in 0..<h { (y + row * buffer.stride(0)).update(from: source + row * w, count: w) }
        let u = source + w * h, v = u + cw * ch
        switch buffer.format {
        case .i420:
            for row in 0..<ch {
                (buffer.mutablePlane(1) + row * buffer.stride(1)).update(from: u + row * cw, count: cw)
                (buffer.mutablePlane(2) + row * buffer.stride(2)).update(from: v + row * cw, count: cw)
            }
        case .nv12:
            let uv = buffer.mutablePlane(1)
            for row in 0..<ch {
                for col in 0..<cw {
                    uv[row * buffer.stride(1) + 2 * col] = u[row * cw + col]
                    uv[row * buffer.stride(1) + 2 * col + 1] = v[row * cw + col]
                }
            }
        }
    }
}
