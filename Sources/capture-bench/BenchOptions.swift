import CaptureCore

#if canImport(Glibc)
    import Glibc
#endif

/// `--key value` options of capture-bench.
struct BenchOptions {
    var values: [String: String] = [:]

    init?(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let key = arguments[index]
            guard key.hasPrefix("--"), index + 1 < arguments.count else { return nil }
            values[String(key.dropFirst(2))] = arguments[index + 1]
            index += 2
        }
    }

    func string(_ key: String) throws(CaptureError) -> String {
        guard let value = values[key] else { throw CaptureError(.invalidArgument, "missing --\(key)") }
        return value
    }

    func int(_ key: String, default fallback: Int) throws(CaptureError) -> Int {
        guard let text = values[key] else { return fallback }
        guard let value = Int(text), value > 0 else { throw CaptureError(.invalidArgument, "bad --\(key) \(text)") }
        return value
    }

    func dimensions() throws(CaptureError) -> Dimensions {
        let text = try string("size")
        guard let size = Dimensions(parsing: text) else { throw CaptureError(.invalidArgument, "bad --size \(text)") }
        return size
    }

    func layout(_ key: String) throws(CaptureError) -> OutputPixelFormat {
        let text = values[key] ?? "i420"
        guard let layout = OutputPixelFormat(rawValue: text) else {
            throw CaptureError(.invalidArgument, "bad --\(key) \(text) (nv12 or i420)")
        }
        return layout
    }

    static func usage() {
        printError(
            """
            usage: capture-bench vp8 --input clip.yuv --size WxH [--layout i420|nv12] [--frames N] [--kbps K] [--fps F]
                                     [--runs R] [--ivf out.ivf]
                   capture-bench convert --input FILE --format YUYV|MJPG --size WxH [--output nv12|i420] [--frames N]
                                     [--runs R]
                   capture-bench capture --size WxH [--layout nv12|i420] [--frames N] [--warmup W] [--copy yes] [--device /dev/videoN] [--format FOURCC]
                   capture-bench pipeline --size WxH [--input FILE --format YUYV|MJPG] [--frames N] [--kbps K] [--fps F]
                                     [--streams N] [--warmup W] [--ivf out.ivf]
                   capture-bench send --size WxH [--frames N] [--warmup W] [--kbps K] [--srtp no|cm80|gcm] [--webrtc yes] [--paced yes]
                                     [--scope all|sender] [--rid h]
                   capture-bench simulcast --input clip.yuv --size WxH [--layers L] [--temporal-layers T] [--frames N]
                                     [--warmup W] [--kbps K] [--runs R]

            """)
    }
}

/// Reads a whole file.
func readFile(_ path: String) throws(CaptureError) -> [UInt8] {
    guard let file = fopen(path, "rb") else { throw CaptureError(.ioFailure, "cannot open \(path)", device: path) }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n == 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

/// Seconds elapsed on the monotonic clock since `startNs`.
func secondsSince(_ startNs: UInt64) -> Double { Double(MonotonicClock.nowNs() - startNs) / 1e9 }

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), in nanoseconds.
func threadCPUTimeNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// `1234.5` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

/// Writes `text` to standard error.
func printError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
