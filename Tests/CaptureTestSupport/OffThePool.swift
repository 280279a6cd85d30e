import Foundation

/// Runs long synchronous work (a simulation in virtual time) on a thread of its own, so that it does not hold one of
/// the cooperative pool's threads (two on a 2-core machine) for seconds while the async tests beside it wait: a test
/// that does starved `switchCamera` of its frames in a parallel run.
public enum OffThePool {
    /// `body`'s result, computed on a new thread; the caller's task waits without blocking a pool thread.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
