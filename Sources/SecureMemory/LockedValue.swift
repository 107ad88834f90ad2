#if canImport(Glibc)
import Glibc
#endif

// MARK: - A value shared between threads

/// A value that threads reach only under a `pthread_mutex_t`.
///
/// Why not Synchronization's `Mutex`: on Linux it locks with raw `futex` system calls, which
/// ThreadSanitizer does not intercept, so `make check-sanitizers` saw every access made under it
/// from two threads as a race (the agent's keyring: the main loop's idle check against a client
/// thread's `unlock`, exit 66 under TSan; then `SecretArena`'s slot map under concurrent agent
/// clients). A pthread mutex is the same lock as far as the program is concerned, and one the
/// sanitizer understands.
public final class LockedValue<Value: ~Copyable>: @unchecked Sendable {
    // Allocated apart: a pthread mutex must not move, and a stored property's address is not stable.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// `value`, to be reached only through `withLock` from now on.
    public init(_ value: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; other threads wait until it returns.
    public func withLock<Result: ~Copyable, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
