#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a pthread mutex, with a pthread condition variable to wait for it to change.
///
/// Like ``Locked``, it uses pthread primitives so that ThreadSanitizer sees the synchronisation.
///
/// `@unchecked Sendable` is sound: `value` is only read or written with the mutex held (inside ``withLock(_:)`` and
/// ``wait(until:_:)``, where `pthread_cond_wait` re-acquires the mutex before the predicate and body run), and the
/// mutex and condition live at stable heap addresses for the object's whole life.
package final class ConditionLock<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Creates the lock around `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        status = pthread_cond_init(condition, nil)
        precondition(status == 0, "pthread_cond_init failed: \(status)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. With `signalling`, then wakes every waiter to check its
    /// predicate again: pass it where `body` may make a waiter's predicate true, and only there, so that reading
    /// statistics or counting a frame does not wake a waiting thread for nothing.
    package func withLock<Result>(signalling: Bool = false, _ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            if signalling { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }

    /// Waits until `predicate` holds (as made true by a ``withLock(signalling:_:)`` that signals), then runs `body`
    /// with exclusive access to the value.
    package func wait<Result>(until predicate: (Value) -> Bool, _ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !predicate(value) { pthread_cond_wait(condition, mutex) }
        return body(&value)
    }
}
