import Foundation

/// The threads where blocking system work runs, so that it never holds one of the cooperative pool's threads: opening
/// a device or a file, an `ioctl` on a slow driver, `mmap`, `getaddrinfo`, generating a key.
///
/// ## Use
/// ``run(_:)`` runs a synchronous closure on one of its threads and resumes the caller when it returns. It is also a
/// `TaskExecutor` (SE-0417): `Task(executorPreference: BlockingExecutor.shared) { … }` runs a task's nonisolated code
/// on these threads.
///
/// ## Why a TaskExecutor of our own, not NIO's `NIOThreadPool`
/// The capture modules (CaptureCore, CaptureV4L2, the file cameras) do not depend on NIO, and a camera app that only
/// captures should not link it; the pool is a queue and up to four parked threads. A TaskExecutor also lets Swift's
/// own scheduling put whole tasks here, which `NIOThreadPool` cannot.
///
/// ## Threading
/// Threads are made on demand, up to `maximumThreads` (work beyond that waits its turn in order), and then stay parked
/// on a condition variable: an idle executor wakes nothing. Work is not cancelled once it has started.
package final class BlockingExecutor: TaskExecutor {
    /// The executor the package uses for blocking system work.
    package static let shared = BlockingExecutor(name: "capture-blocking", maximumThreads: 4)

    private enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
    }

    private struct Queue {
        var work: [Work] = []
        var threads = 0
        var idle = 0
    }

    private let name: String
    /// The most threads it makes; it keeps each once made.
    package let maximumThreads: Int
    private let queue = ConditionLock(Queue())

    /// An executor of at most `maximumThreads` threads named `name`.
    package init(name: String, maximumThreads: Int) {
        self.name = name
        self.maximumThreads = max(1, maximumThreads)
    }

    /// Runs `body` on one of the executor's threads and returns what it returns, or throws what it throws. The caller
    /// is suspended meanwhile, holding no thread.
    package func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        // The result crosses through a pthread mutex, not only the continuation: when the work finishes before the
        // caller has suspended, the runtime hands it over with an atomic that ThreadSanitizer cannot see, and TSan then
        // reports what the work wrote (a file reader it opened) as racing with the caller's later use of it.
        let slot = Locked<Result<Value, Failure>?>(nil)
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            submit(
                .closure({
                    let result = Result(catching: body)
                    slot.withLock { $0 = result }
                    resume.resume()
                }))
        }
        guard let result = slot.withLock({ $0.take() }) else {
            preconditionFailure("BlockingExecutor: the work resumed its caller without a result")
        }
        return try result.get()
    }

    /// Runs a task's job on one of the executor's threads (the `TaskExecutor` requirement).
    package func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    private func submit(_ work: Work) {
        // Signalling: an idle thread waits for work to appear.
        let spawn = queue.withLock(signalling: true) { queue -> Bool in
            queue.work.append(work)
            guard queue.work.count > queue.idle, queue.threads < maximumThreads else { return false }
            queue.threads += 1
            return true
        }
        guard spawn else { return }
        let thread = Thread { [self] in serve() }
        thread.name = name
        thread.start()
    }

    /// A thread's life: take the oldest work, run it, park when there is none.
    private func serve() {
        nameCurrentThread(name)
        while true {
            queue.withLock { $0.idle += 1 }
            // blocking: an executor thread parks until there is work; that is what these threads are for.
            let work = queue.wait(until: { !$0.work.isEmpty }) { queue -> Work in
                queue.idle -= 1
                return queue.work.removeFirst()
            }
            switch work {
            case .closure(let body): body()
            case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }
}
