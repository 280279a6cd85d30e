import CaptureCore
import CaptureVP8

/// The `capture` command's delegate: on the capture thread it encodes each frame to VP8 as it arrives (so an unpaced
/// source runs as fast as encoding allows) and writes it to the IVF file; a ``LoopbackScorer`` on a second thread
/// decodes it back and scores it against the captured frame (loopback PSNR). It signals when enough frames were taken
/// or capture stopped.
///
/// Nothing grows with the length of the capture: timing, latency and quality are accumulated as they go (latency in
/// HDR histograms), and neither frames nor encoded bytes are kept beyond the scorer's few reused slots.
final class EncodingConsumer: CameraVideoCapturerDelegate {
    /// What the consumer gathered.
    struct Record {
        var frames = 0
        /// Intervals between the frames' capture timestamps.
        var timing = IntervalAccumulator()
        /// Intervals between the frames' arrivals at the delegate (monotonic clock).
        var arrivals = IntervalAccumulator()
        /// Capture timestamp → arrival at the delegate.
        var deliveryLatency = LatencyHistogram()
        /// Capture timestamp → encoded frame out of libvpx.
        var encodeLatency = LatencyHistogram()
        var framesEncoded = 0
        var keyFrames = 0
        var bytes = 0
        var framesDecoded = 0
        /// Error between the captured and the decoded frames.
        var pictureError = PictureError()
        var framesCompared = 0
        var rotations: Set<Int> = []
        var droppedByEncoder = 0
        /// How often the capture thread waited for the scorer (every slot taken).
        var scorerWaits = 0
        var error: CaptureError?
    }

    private struct State {
        // VP8Encoder and IVFWriter are used only under this lock, from the capture thread, then by finish().
        var encoder: VP8Encoder
        var writer: IVFWriter?
        var record = Record()
        var done = false
    }

    private let state: Locked<State>
    private let scorer: LoopbackScorer
    private let limit: Int
    private let deadlineNs: UInt64?
    private let progress: Bool
    private let finished: AsyncStream<Void>.Continuation
    /// Yields once when the frame count or time limit is reached, or capture stopped.
    let completion: AsyncStream<Void>

    init(
        encoder: sending VP8Encoder, decoder: sending VP8Decoder, writer: sending IVFWriter?, limit: Int,
        deadlineNs: UInt64?, progress: Bool
    ) throws(CaptureError) {
        scorer = try LoopbackScorer(decoder: decoder)
        state = Locked(State(encoder: encoder, writer: writer))
        self.limit = limit
        self.deadlineNs = deadlineNs
        self.progress = progress
        (completion, finished) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        // finish() may not have run (a start that failed): the scorer's thread ends either way.
        scorer.requestFinish()
    }

    func capturer(_ capturer: CameraVideoCapturer, didCapture frame: VideoFrame) {
        let arrival = MonotonicClock.nowNs()
        let (count, encodedCount, reachedEnd) = state.withLock { state -> (Int, Int, Bool) in
            guard !state.done else { return (0, 0, false) }
            state.record.frames += 1
            state.record.timing.add(frame.timestampNs)
            state.record.arrivals.add(arrival)
            state.record.deliveryLatency.record(from: frame.timestampNs, to: arrival)
            state.record.rotations.insert(frame.rotation.degrees)
            do throws(CaptureError) {
                try Self.encode(frame, into: &state, scorer: scorer)
            } catch {
                state.record.error = error
                state.done = true
                return (state.record.frames, state.record.framesEncoded, true)
            }
            let timeUp = deadlineNs.map { MonotonicClock.nowNs() >= $0 } ?? false
            state.done = state.record.frames >= limit || timeUp
            return (state.record.frames, state.record.framesEncoded, state.done)
        }
        if progress, count > 0 { StandardError.write("\rcapturing: \(count) frames, \(encodedCount) encoded") }
        if reachedEnd { finished.yield() }
    }

    /// Encodes `frame`, writes it and hands it to the scorer.
    private static func encode(
        _ frame: VideoFrame, into state: inout State, scorer: LoopbackScorer
    ) throws(CaptureError) {
        guard let result = try state.encoder.encode(frame) else {
            state.record.droppedByEncoder += 1
            return
        }
        state.record.encodeLatency.record(from: frame.timestampNs, to: MonotonicClock.nowNs())
        try state.writer?.write(result)
        state.record.framesEncoded += 1
        state.record.bytes += result.bytes.count
        if result.isKeyFrame { state.record.keyFrames += 1 }
        scorer.submit(result, source: frame.buffer)
    }

    func capturer(_ capturer: CameraVideoCapturer, didStopWith error: CaptureError?) {
        state.withLock { $0.done = true }
        finished.yield()
    }

    /// Called after capture stopped: waits for the scorer, closes the IVF file and returns what was gathered.
    func finish() async throws(CaptureError) -> Record {
        let score = await scorer.finish()
        return try state.withLock { state throws(CaptureError) -> Record in
            state.done = true
            if progress, state.record.frames > 0 { StandardError.write("\n") }
            if let error = state.record.error ?? score.error { throw error }
            try state.writer?.close()
            state.record.framesDecoded = score.framesDecoded
            state.record.pictureError = score.pictureError
            state.record.framesCompared = score.framesCompared
            state.record.scorerWaits = score.waits
            return state.record
        }
    }
}
