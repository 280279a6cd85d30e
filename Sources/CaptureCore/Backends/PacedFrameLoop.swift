import Foundation
import Synchronization

/// Runs a produce-one-frame closure on a dedicated thread, paced by the monotonic clock at a fixed rate (or unpaced).
///
/// A late frame does not build up debt: when the loop falls more than one interval behind, the schedule restarts from
/// now, as Chrome's file camera does. ``stop()`` is idempotent and returns once the thread has finished: the thread's
/// last act resumes it, so no caller holds a thread while it waits.
package final class PacedFrameLoop: Sendable {
    /// What the body tells the loop after producing a frame.
    package enum Step: Sendable {
        /// Keep going.
        case `continue`
        /// End the loop (the body has reported why).
        case finish
    }

    private let intervalNs: UInt64
    private let paced: Bool
    private let name: String
    private let stopRequested = Atomic<Bool>(false)
    /// Finished by the thread as its last act (or by a stop before the start): any number of ``stop()`` calls wait.
    private let finished = Completion()
    private let state = Locked<(started: Bool, stopped: Bool)>((false, false))

    /// A loop at `fps` frames per second; `paced: false` runs as fast as the body returns.
    package init(fps: Double, paced: Bool, name: String) {
        self.intervalNs = UInt64(1_000_000_000 / max(fps, 0.001))
        self.paced = paced
        self.name = name
    }

    /// Starts the thread; `body(frameIndex, captureTimeNs)` is called once per frame on it. The capture time is the
    /// frame's slot on the schedule (as a sensor's clock would stamp it, however late the thread woke), or the current
    /// monotonic time when unpaced.
    package func start(_ body: @escaping @Sendable (UInt64, UInt64) -> Step) {
        // A loop stopped before it started never starts: its owner has already been told it is over.
        let mayStart = state.withLock { state in
            guard !state.started, !state.stopped else { return false }
            state.started = true
            return true
        }
        guard mayStart else { return }
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run(body)
            finished.finish()
        }
        thread.start()
    }

    private func run(_ body: @Sendable (UInt64, UInt64) -> Step) {
        var next = MonotonicClock.nowNs()
        var index: UInt64 = 0
        while !stopRequested.load(ordering: .acquiring) {
            if paced {
                // Sleep in short slices so that stop() never waits for a whole (possibly long) frame interval.
                while !stopRequested.load(ordering: .acquiring) {
                    let now = MonotonicClock.nowNs()
                    if now >= next { break }
                    // blocking: the loop's own thread waits for the next frame's slot.
                    MonotonicClock.sleep(untilNs: min(next, now + 20_000_000))
                }
                if stopRequested.load(ordering: .acquiring) { break }
            }
            let captureTime = paced ? next : MonotonicClock.nowNs()
            if case .finish = body(index, captureTime) { break }
            index += 1
            next += intervalNs
            let now = MonotonicClock.nowNs()
            if now > next + intervalNs { next = now }
        }
    }

    /// Asks the thread to finish and returns once it has. Safe to call more than once and from several tasks at once
    /// (each call returns once the thread has finished), before ``start(_:)`` (the loop then never starts), and from a
    /// task the loop's body started (the thread finishes without waiting for it).
    package func stop() async {
        stopRequested.store(true, ordering: .releasing)
        let started = state.withLock { state in
            state.stopped = true
            return state.started
        }
        if !started { finished.finish() }
        await finished.wait()
    }
}
