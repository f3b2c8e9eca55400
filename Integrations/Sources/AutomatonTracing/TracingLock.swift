#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#elseif canImport(WinSDK)
    import WinSDK
#endif

/// A value guarded by a lock, for the tracing's table. Not recursive: `body` must call no user code
/// (no tracer, no span, no user closure), so that the lock is never held across it.
@usableFromInline
final class TracingLock<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written between `lock()` and `unlock()`. It lives in memory of its
    // own, not in a stored property: a class's `var` accessed `inout` costs a dynamic exclusivity check.
    #if canImport(WinSDK)
        @usableFromInline let mutex: UnsafeMutablePointer<SRWLOCK>
    #else
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @inlinable
    init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        #if canImport(WinSDK)
            InitializeSRWLock(mutex)
        #else
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    deinit {
        #if !canImport(WinSDK)
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        #endif
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` on the value with the lock held.
    @inlinable
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(WinSDK)
            AcquireSRWLockExclusive(mutex)
            defer { ReleaseSRWLockExclusive(mutex) }
        #else
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
        #endif
        return try body(&value.pointee)
    }
}
