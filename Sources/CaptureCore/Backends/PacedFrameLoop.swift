import Dispatch
import Foundation
import Synchronization

/// Runs a produce-one-frame closure on a dedicated thread, paced by the monotonic clock at a fixed rate (or unpaced).
///
/// A late frame does not build up debt: when the loop falls more than one interval behind, the schedule restarts from
/// now, as Chrome's file camera does. ``stop()`` is idempotent and returns once the thread has finished.
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
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex<(started: Bool, joined: Bool)>((false, false))

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
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        let thread = Thread { [self] in
            run(body)
            finished.signal()
        }
        thread.name = name
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

    /// Asks the thread to finish and waits until it has. Safe to call more than once, and before ``start(_:)``.
    /// Must not be called from the loop's own thread.
    package func stop() {
        stopRequested.store(true, ordering: .releasing)
        let mustWait = state.withLock { state in
            defer { state.joined = true }
            return state.started && !state.joined
        }
        if mustWait { finished.wait() }
    }
}
