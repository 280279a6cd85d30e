import CaptureCall
import CaptureCore
import CaptureVP8

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The `capture` command's loopback check on a thread of its own: it decodes every encoded frame back, in order, and
/// scores it against a copy of the captured frame (PSNR), while the capture thread goes on encoding.
///
/// Memory is bounded and does not grow with the capture: at most ``capacity`` frames wait, each in a slot whose byte
/// array and picture are reused. When every slot is taken, ``submit(_:source:)`` waits for the scorer: the decoder
/// needs every frame (each inter frame depends on the one before), so a frame is never skipped; a capture thread that
/// outpaces the decoder slows down as it did when it scored frames itself, and no sooner.
final class LoopbackScorer: Sendable {
    /// What the scorer found.
    struct Score: Sendable {
        var framesDecoded = 0
        /// Error between the captured and the decoded frames.
        var pictureError = PictureError()
        var framesCompared = 0
        /// The first decoding failure; the scorer stops decoding at it.
        var error: CaptureError?
        /// How often the capture thread found every slot taken and waited for the scorer.
        var waits = 0
    }

    /// One encoded frame and the picture it was encoded from.
    private struct Slot: Sendable {
        var bytes: [UInt8] = []
        var source: I420Picture?
    }

    private struct State: Sendable {
        var pending: [Slot] = []
        var free: [Slot] = []
        var finishing = false
        var exited = false
        var score = Score()
    }

    /// The most frames waiting to be scored.
    let capacity: Int
    private let state: ConditionLock<State>
    /// Finished by the scoring thread as its last act.
    private let exited = Completion()

    /// Starts the scorer's thread with `decoder`, which belongs to that thread from now on.
    init(decoder: sending VP8Decoder, capacity: Int = 4) throws(CaptureError) {
        self.capacity = capacity
        var initial = State()
        initial.pending.reserveCapacity(capacity)
        initial.free = Array(repeating: Slot(), count: capacity)
        state = ConditionLock(initial)
        let box = Unmanaged.passRetained(Box(scorer: self, decoder: decoder)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
                box.scorer.run(box.decoder)
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw CaptureError(.invalidState, "cannot start the loopback scoring thread (pthread_create: \(status))")
        }
        pthread_detach(thread)
    }

    /// Carries the scorer and its decoder into the new thread, which alone uses the decoder.
    private final class Box {
        let scorer: LoopbackScorer
        let decoder: VP8Decoder
        init(scorer: LoopbackScorer, decoder: sending VP8Decoder) {
            self.scorer = scorer
            self.decoder = decoder
        }
    }

    /// Queues `frame` (its bytes copied into a slot) and a copy of `source` for scoring; waits while every slot is
    /// taken. Frames after ``finish()`` are ignored.
    func submit(_ frame: EncodedFrame, source: VideoFrameBuffer) {
        state.withLock { if $0.free.isEmpty && !$0.finishing { $0.score.waits += 1 } }
        guard
            var slot = state.wait(
                until: { !$0.free.isEmpty || $0.finishing }, { $0.finishing ? nil : $0.free.popLast() })
        else { return }
        slot.bytes.removeAll(keepingCapacity: true)
        slot.bytes.append(contentsOf: frame.bytes)
        slot.source = I420Picture(copying: source)
        state.withLock(signalling: true) { $0.pending.append(slot) }
    }

    /// Scores what is queued, stops the thread and returns the score once the thread has ended (its last act
    /// resumes this; no thread is held meanwhile).
    func finish() async -> Score {
        requestFinish()
        await exited.wait()
        return state.withLock { $0.score }
    }

    /// Tells the thread to end once the queue is scored, without waiting for it.
    func requestFinish() {
        state.withLock(signalling: true) { $0.finishing = true }
    }

    private func run(_ decoder: VP8Decoder) {
        while var slot = nextSlot() {
            score(slot, with: decoder)
            slot.source = nil
            state.withLock(signalling: true) { $0.free.append(slot) }
        }
        state.withLock(signalling: true) { $0.exited = true }
        exited.finish()
    }

    /// The oldest waiting slot, or `nil` once finishing and nothing waits.
    private func nextSlot() -> Slot? {
        // blocking: the scoring thread waits for the next frame; it is the thread's whole job.
        state.wait(until: { !$0.pending.isEmpty || $0.finishing }) { state in
            state.pending.isEmpty ? nil : state.pending.removeFirst()
        }
    }

    private func score(_ slot: Slot, with decoder: VP8Decoder) {
        guard state.withLock({ $0.score.error == nil }) else { return }
        let picture: VideoFrameBuffer?
        do throws(CaptureError) {
            picture = try decoder.decode(slot.bytes)
        } catch {
            state.withLock { $0.score.error = error }
            return
        }
        guard let picture else { return }
        let error = slot.source.flatMap { PictureError(I420Picture(copying: picture), $0) }
        state.withLock { state in
            state.score.framesDecoded += 1
            if let error {
                state.score.pictureError = state.score.pictureError + error
                state.score.framesCompared += 1
            }
        }
    }
}
