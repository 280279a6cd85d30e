import CaptureCore
import Foundation
import Testing

@Suite("Completion: a one-shot signal from a thread to tasks")
struct CompletionTests {
    @Test("waiters before and after finish all return; a second finish does nothing")
    func waitersBeforeAndAfter() async {
        let completion = Completion()
        #expect(!completion.isFinished)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await completion.wait() } }
            let thread = Thread {
                completion.finish()
                completion.finish()
            }
            thread.start()
            await group.waitForAll()
        }
        #expect(completion.isFinished)
        await completion.wait()  // after the finish: returns at once
    }
}

@Suite("BlockingExecutor: blocking work off the cooperative pool")
struct BlockingExecutorTests {
    struct Failure: Error, Equatable {}

    @Test("run returns the closure's value and throws its error")
    func valuesAndErrors() async throws {
        let executor = BlockingExecutor(name: "test-values", maximumThreads: 1)
        #expect(await executor.run { 6 * 7 } == 42)
        await #expect(throws: Failure.self) { try await executor.run { () throws(Failure) -> Int in throw Failure() } }
        let name = await executor.run { Self.threadName() }
        #expect(name == "test-values", "the closure did not run on the executor's thread")
    }

    @Test("at most maximumThreads closures run at once; the rest wait their turn; callers hold no pool thread")
    func threadBound() async {
        let executor = BlockingExecutor(name: "test-bound", maximumThreads: 3)
        // More blocked closures than the machine's cooperative threads: if the callers held pool threads, the gate
        // could not be opened.
        #expect(await occupy(executor, closures: 12, openingAt: 3) == 3)
    }

    /// The current thread's name as the system lists it (Foundation's `Thread.current.name` can be its own, unapplied).
    static func threadName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    @Test("as a task executor, a task's code runs on its threads")
    func taskExecutorPreference() async {
        let executor = BlockingExecutor(name: "test-preference", maximumThreads: 2)
        let name = await Task(executorPreference: executor) { Self.threadName() }.value
        #expect(name == "test-preference")
    }
}

@Suite("nameCurrentThread: threads as the system lists them")
struct ThreadNameTests {
    @Test("a thread names itself; a name longer than 15 bytes is cut at a character boundary")
    func names() async {
        let seen = Locked<[String?]>([])
        let done = Completion()
        let thread = Thread {
            nameCurrentThread("capture-worker")
            seen.withLock { $0.append(BlockingExecutorTests.threadName()) }
            nameCurrentThread("a-very-long-thread-name")
            seen.withLock { $0.append(BlockingExecutorTests.threadName()) }
            nameCurrentThread("caméra-capture-é")  // 18 bytes: "caméra-capture" is the longest whole prefix within 15
            seen.withLock { $0.append(BlockingExecutorTests.threadName()) }
            done.finish()
        }
        thread.start()
        await done.wait()
        #expect(seen.withLock { $0 } == ["capture-worker", "a-very-long-thr", "caméra-capture"])
    }
}

/// Submits `closures` closures to `executor`, each holding its thread on a gate, opens the gate once `count` of them
/// run at the same time, and returns the most that ran at once. The caller holds no thread meanwhile.
func occupy(_ executor: BlockingExecutor, closures: Int, openingAt count: Int) async -> Int {
    // (running now, most at once, gate open)
    let gate = ConditionLock((running: 0, most: 0, open: false))
    let reached = Completion()
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<closures {
            group.addTask {
                await executor.run {
                    let running = gate.withLock { gate in
                        gate.running += 1
                        gate.most = max(gate.most, gate.running)
                        return gate.running
                    }
                    if running == count { reached.finish() }
                    // blocking: the executor's threads are for blocking work; this holds one until the gate opens.
                    gate.wait(until: { $0.open }) { $0.running -= 1 }
                }
            }
        }
        await reached.wait()
        gate.withLock(signalling: true) { $0.open = true }
        await group.waitForAll()
    }
    return gate.withLock { $0.most }
}
