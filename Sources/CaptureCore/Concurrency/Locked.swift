#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a pthread mutex: the package's one lock type.
///
/// It is used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux does not see `Mutex` (its futex
/// calls are not intercepted), so correct code under it reports races; a pthread mutex is intercepted, so TSan judges
/// our locking as it really is. The cost is one allocation per lock, at creation, and the same uncontended fast path.
///
/// `Value` must not be empty (`()`, an empty struct): ThreadSanitizer then reports a race on every contended
/// `withLock`, because Swift's access instrumentation for a zero-sized stored property is not ordered by the mutex (a
/// two-thread counter under `Locked(())` reports one while counting exactly; under `Locked(0)` it does not). Give the
/// lock a real value (the state it guards, or a count of what it did); `init` asserts this in debug builds.
///
/// `@unchecked Sendable` is sound: `value` is only read or written inside `withLock`, which holds the mutex, and the
/// mutex itself lives at a stable heap address for the object's whole life (it is never copied or moved).
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Creates the lock around `value`.
    package init(_ value: Value) {
        assert(MemoryLayout<Value>.size > 0, "Locked<\(Value.self)>: TSan cannot see an empty value locked")
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: calling `withLock` again from inside `body`
    /// on the same lock is a programming error (caught by the error-checking mutex).
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed: \(status) (recursive locking?)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
