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

/// The one lock type of the package: `os_unfair_lock` on Apple platforms, `pthread_mutex_t` elsewhere.
///
/// It is not recursive. Code holding it must never call out to user code (observers, mappings,
/// effects, scheduler actions): compute what to do under the lock, release it, then act.
@usableFromInline
package final class Lock: @unchecked Sendable {
    // Safe: the pointer is allocated once, never reassigned, and only used through the platform lock API.
    #if canImport(os)
    @usableFromInline let primitive: UnsafeMutablePointer<os_unfair_lock>
    #elseif canImport(WinSDK)
    @usableFromInline let primitive: UnsafeMutablePointer<SRWLOCK>
    #else
    @usableFromInline let primitive: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    @usableFromInline
    package init() {
        primitive = .allocate(capacity: 1)
        #if canImport(os)
        primitive.initialize(to: os_unfair_lock())
        #elseif canImport(WinSDK)
        InitializeSRWLock(primitive)
        #else
        primitive.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(primitive, nil)
        precondition(result == 0, "Internal inconsistency: pthread_mutex_init failed with \(result)")
        #endif
    }

    deinit {
        #if !canImport(os) && !canImport(WinSDK)
        pthread_mutex_destroy(primitive)
        #endif
        primitive.deinitialize(count: 1)
        primitive.deallocate()
    }

    @inlinable @inline(__always)
    package func lock() {
        #if canImport(os)
        os_unfair_lock_lock(primitive)
        #elseif canImport(WinSDK)
        AcquireSRWLockExclusive(primitive)
        #else
        pthread_mutex_lock(primitive)
        #endif
    }

    @inlinable @inline(__always)
    package func unlock() {
        #if canImport(os)
        os_unfair_lock_unlock(primitive)
        #elseif canImport(WinSDK)
        ReleaseSRWLockExclusive(primitive)
        #else
        pthread_mutex_unlock(primitive)
        #endif
    }

    /// Runs `body` with the lock held. `body` must be package code that calls no user closure.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value that can only be touched while its lock is held (the `NIOLockedValueBox` pattern).
@usableFromInline
package final class Locked<State> {
    // `state` opts out of dynamic exclusivity checks: the lock, not Swift's access rules, keeps its
    // accesses apart, and the checks would cost more than the lock.
    @usableFromInline let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var state: State

    @usableFromInline
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` on the state with the lock held. `body` must be package code that calls no user closure.
    @inlinable @inline(__always)
    package func withCriticalRegion<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

// Safe: `state` is only read or written inside `withCriticalRegion`, under `lock`, and what is stored
// there may cross threads because it is itself `Sendable`.
extension Locked: @unchecked Sendable where State: Sendable {}
