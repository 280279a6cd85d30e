/// A one-shot signal from a thread to async code: the thread's last act is ``finish()``, and any number of tasks
/// ``wait()`` for it without holding a thread.
///
/// ## Use
/// A component that owns a thread (a capture loop, an encoder, an RTCP reader) makes one `Completion` per thread. Its
/// `stop() async` asks the thread to end and then awaits ``wait()``; the thread, once it has released everything it
/// owned, calls ``finish()``. That replaces a semaphore wait, a `pthread_join` or a sleep loop, each of which would
/// hold one of the cooperative pool's few threads for as long as the thread took to end.
///
/// ## Threading
/// ``finish()`` may be called from any thread, any number of times (only the first counts); ``wait()`` from any task,
/// before or after ``finish()``. Waiting is not cancellable: a stop completes, and the threads that finish these are
/// built to notice a stop request within a short slice (100 ms at most).
package final class Completion: Sendable {
    private enum State {
        case pending([CheckedContinuation<Void, Never>])
        case finished
    }

    private let state = Locked<State>(.pending([]))

    package init() {}

    /// Whether ``finish()`` has been called.
    package var isFinished: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// Marks the work finished and resumes every waiter (outside the lock). Later calls do nothing.
    package func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .pending(let waiters) = state else { return [] }
            state = .finished
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once ``finish()`` has been called (at once if it has been).
    package func wait() async {
        if isFinished { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finishedAlready = state.withLock { state -> Bool in
                switch state {
                case .finished:
                    return true
                case .pending(var waiters):
                    state = .pending([])  // moved out and back, so the array is not copied
                    waiters.append(continuation)
                    state = .pending(waiters)
                    return false
                }
            }
            if finishedAlready { continuation.resume() }
        }
    }
}
