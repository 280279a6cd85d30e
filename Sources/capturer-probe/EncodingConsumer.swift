import CaptureCore
import CaptureVP8
import Synchronization

/// The `capture` command's delegate: on the capture thread it encodes each frame to VP8 as it arrives (so an unpaced
/// source runs as fast as encoding allows), writes it to the IVF file, keeps a copy of the frame for the loopback
/// PSNR, and signals when enough frames were taken or capture stopped.
final class EncodingConsumer: CameraVideoCapturerDelegate {
    /// What the consumer gathered.
    struct Record {
        var timestamps: [UInt64] = []
        /// When each frame reached the delegate (monotonic clock).
        var arrivals: [UInt64] = []
        var latenciesMs: [Double] = []
        /// Sizes and key-frame flags of the encoded frames.
        var encoded: [(byteCount: Int, isKeyFrame: Bool)] = []
        /// The encoded bytes, kept only when no file is written.
        var encodedBytes: [[UInt8]] = []
        /// Copies of the frames that were encoded, in order (up to ``copyBudget`` bytes).
        var copies: [I420Picture] = []
        var rotations: Set<Int> = []
        var droppedByEncoder = 0
        var error: CaptureError?
    }

    private struct State {
        // VP8Encoder and IVFWriter are used only under this lock, from the capture thread, then handed back to the
        // caller after capture stopped.
        var encoder: VP8Encoder
        var writer: IVFWriter?
        var record = Record()
        var copiedBytes = 0
        var done = false
    }

    /// The largest total size of frame copies kept for the PSNR comparison.
    static let copyBudget = 384 << 20

    private let state: Mutex<State>
    private let limit: Int
    private let deadlineNs: UInt64?
    private let progress: Bool
    private let finished: AsyncStream<Void>.Continuation
    /// Yields once when the frame count or time limit is reached, or capture stopped.
    let completion: AsyncStream<Void>

    init(encoder: sending VP8Encoder, writer: sending IVFWriter?, limit: Int, deadlineNs: UInt64?, progress: Bool) {
        state = Mutex(State(encoder: encoder, writer: writer))
        self.limit = limit
        self.deadlineNs = deadlineNs
        self.progress = progress
        (completion, finished) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let arrival = MonotonicClock.nowNs()
        let (count, encodedCount, reachedEnd) = state.withLock { state -> (Int, Int, Bool) in
            guard !state.done else { return (0, 0, false) }
            state.record.timestamps.append(frame.timestampNs)
            state.record.arrivals.append(arrival)
            state.record.rotations.insert(frame.rotation.degrees)
            do throws(CaptureError) {
                if let result = try state.encoder.encode(frame) {
                    state.record.latenciesMs.append(Double(MonotonicClock.nowNs() &- frame.timestampNs) / 1e6)
                    try state.writer?.write(result)
                    if state.writer == nil { state.record.encodedBytes.append(result.bytes) }
                    state.record.encoded.append((result.bytes.count, result.isKeyFrame))
                    if state.copiedBytes < Self.copyBudget {
                        let copy = I420Picture(copying: frame.buffer)
                        state.copiedBytes += copy.byteCount
                        state.record.copies.append(copy)
                    }
                } else {
                    state.record.droppedByEncoder += 1
                }
            } catch {
                state.record.error = error
                state.done = true
                return (state.record.timestamps.count, state.record.encoded.count, true)
            }
            let count = state.record.timestamps.count
            let timeUp = deadlineNs.map { MonotonicClock.nowNs() >= $0 } ?? false
            state.done = count >= limit || timeUp
            return (count, state.record.encoded.count, state.done)
        }
        if progress, count > 0 { StandardError.write("\rcapturing: \(count) frames, \(encodedCount) encoded") }
        if reachedEnd { finished.yield() }
    }

    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        state.withLock { $0.done = true }
        finished.yield()
    }

    /// Called after capture stopped: closes the IVF file and returns what was gathered.
    func finish() throws(CaptureError) -> Record {
        return try state.withLock { state throws(CaptureError) -> Record in
            state.done = true
            if progress, !state.record.timestamps.isEmpty { StandardError.write("\n") }
            if let error = state.record.error { throw error }
            try state.writer?.close()
            return state.record
        }
    }
}
