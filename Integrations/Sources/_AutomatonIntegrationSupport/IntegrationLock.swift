#if canImport(os)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#elseif canImport(WinSDK)
    import WinSDK
#endif

/// A value behind a lock, for the integrations' own bookkeeping (`Synchronization.Mutex` needs macOS
/// 15; the package supports macOS 13). Not API: public only because the integrations' inlinable code
/// (specialized in the caller's module) uses it.
///
/// Not recursive: `body` must call no user code (no logger, metrics backend, tracer, span or user
/// closure), so that the lock is never held across it.
public final class _IntegrationLock<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written between locking and unlocking `primitive`. It lives in
    // memory of its own, not in a stored property: a class's `var` accessed `inout` costs a dynamic
    // exclusivity check.
    #if canImport(os)
        @usableFromInline let primitive: UnsafeMutablePointer<os_unfair_lock>
    #elseif canImport(WinSDK)
        @usableFromInline let primitive: UnsafeMutablePointer<SRWLOCK>
    #else
        @usableFromInline let primitive: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// A lock guarding `value`. Thread safe to use from any thread once made.
    @inlinable
    public init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        primitive = .allocate(capacity: 1)
        #if canImport(os)
            primitive.initialize(to: os_unfair_lock())
        #elseif canImport(WinSDK)
            InitializeSRWLock(primitive)
        #else
            primitive.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(primitive, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    deinit {
        #if !canImport(os) && !canImport(WinSDK)
            pthread_mutex_destroy(primitive)
        #endif
        #if !canImport(WinSDK)
            primitive.deinitialize(count: 1)
        #endif
        primitive.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` on the value with the lock held.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(os)
            os_unfair_lock_lock(primitive)
            defer { os_unfair_lock_unlock(primitive) }
        #elseif canImport(WinSDK)
            AcquireSRWLockExclusive(primitive)
            defer { ReleaseSRWLockExclusive(primitive) }
        #else
            pthread_mutex_lock(primitive)
            defer { pthread_mutex_unlock(primitive) }
        #endif
        return try body(&value.pointee)
    }
}
