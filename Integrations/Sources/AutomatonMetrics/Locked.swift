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

/// A value behind a lock (`Synchronization.Mutex` needs macOS 15; the package supports macOS 13).
final class Locked<Value>: @unchecked Sendable {
    // Safe: `value` is only read or written with the lock held.
    #if canImport(os)
        private let primitive = UnsafeMutablePointer<os_unfair_lock>.allocate(capacity: 1)
    #elseif canImport(WinSDK)
        private let primitive = UnsafeMutablePointer<SRWLOCK>.allocate(capacity: 1)
    #else
        private let primitive = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    #endif
    private var value: Value

    init(_ value: Value) {
        self.value = value
        #if canImport(os)
            primitive.initialize(to: os_unfair_lock())
        #elseif canImport(WinSDK)
            InitializeSRWLock(primitive)
        #else
            primitive.initialize(to: pthread_mutex_t())
            pthread_mutex_init(primitive, nil)
        #endif
    }

    deinit {
        #if !canImport(os) && !canImport(WinSDK)
            pthread_mutex_destroy(primitive)
        #endif
        primitive.deallocate()
    }

    /// Runs `body` with the lock held. `body` must not call user code that could take the lock again.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
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
        return try body(&value)
    }
}
