import SignalsAtomics

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

#if canImport(os)
    @usableFromInline typealias LockPrimitive = os_unfair_lock
#elseif canImport(WinSDK)
    @usableFromInline typealias LockPrimitive = SRWLOCK
#elseif os(Linux)
    /// A futex word (see `SignalsLock.h`): one atomic operation to lock or unlock when uncontended.
    @usableFromInline typealias LockPrimitive = UInt32
#else
    @usableFromInline typealias LockPrimitive = pthread_mutex_t
#endif

/// The calling thread's identity: no two running threads share it, and it is never 0. (A thread that
/// has ended may pass it on to a thread started later.)
@inlinable @inline(__always)
package func currentThreadIdentity() -> UInt {
    UInt(signals_thread_id())
}

/// Takes the platform lock at `primitive`. The one place that names each platform's call.
@inlinable @inline(__always)
func lockPrimitive(_ primitive: UnsafeMutablePointer<LockPrimitive>) {
    #if canImport(os)
        os_unfair_lock_lock(primitive)
    #elseif canImport(WinSDK)
        AcquireSRWLockExclusive(primitive)
    #elseif os(Linux)
        signals_lock_lock(primitive)
    #else
        _ = pthread_mutex_lock(primitive)
    #endif
}

/// Releases the platform lock at `primitive`.
@inlinable @inline(__always)
func unlockPrimitive(_ primitive: UnsafeMutablePointer<LockPrimitive>) {
    #if canImport(os)
        os_unfair_lock_unlock(primitive)
    #elseif canImport(WinSDK)
        ReleaseSRWLockExclusive(primitive)
    #elseif os(Linux)
        signals_lock_unlock(primitive)
    #else
        _ = pthread_mutex_unlock(primitive)
    #endif
}

/// One allocation holding a value and the platform lock that guards it (`os_unfair_lock` on Apple
/// platforms, a futex-based lock on Linux, `SRWLOCK` on Windows, `pthread_mutex_t` elsewhere), as
/// swift-nio's `NIOLock` does: the lock lives at a stable address in the buffer's tail, which a Swift
/// stored property does not guarantee.
///
/// Not final for one subclass, `PropertyBuffer`, which is a `Lock`'s storage with a property's
/// fields after the lock in the same tail, so that a property and its lock are one allocation. A
/// subclass adds no stored property (a `ManagedBuffer` places its tail right after its header,
/// whatever a subclass declares) and calls no initializer (`create` makes it); every method is
/// final.
@usableFromInline
class LockStorage<Value>: ManagedBuffer<Value, LockPrimitive> {
    @inlinable
    static func make(_ value: Value) -> LockStorage<Value> {
        make(making: { value })
    }

    /// A storage holding the value `makeValue` returns, made in place: a large value passed in would
    /// be copied into the buffer and then destroyed, through its value witnesses (the automaton's
    /// state machine: about 500 instructions per automaton, "million create + input + release").
    @inlinable
    static func make(making makeValue: () -> Value) -> LockStorage<Value> {
        make(making: makeValue, tailBytes: 0)
    }

    /// A storage of this class (or of the subclass it is called on) holding `makeValue()`, with at
    /// least `tailBytes` bytes of tail after the lock, uninitialized, for the subclass.
    @inlinable
    static func make(making makeValue: () -> Value, tailBytes: Int) -> Self {
        let primitives = 1 + (tailBytes + MemoryLayout<LockPrimitive>.stride - 1) / MemoryLayout<LockPrimitive>.stride
        let buffer = create(minimumCapacity: primitives) { _ in makeValue() }
        let storage = unsafeDowncast(buffer, to: Self.self)
        storage.withUnsafeMutablePointerToElements { primitive in
            #if canImport(os)
                primitive.initialize(to: os_unfair_lock())
            #elseif canImport(WinSDK)
                InitializeSRWLock(primitive)
            #elseif os(Linux)
                primitive.initialize(to: 0)
                signals_lock_init(primitive)
            #else
                primitive.initialize(to: pthread_mutex_t())
                let result = pthread_mutex_init(primitive, nil)
                precondition(result == 0, "Internal inconsistency: pthread_mutex_init failed with \(result)")
            #endif
        }
        return storage
    }

    deinit {
        // Only the lock: a subclass deinitializes what it keeps after it.
        withUnsafeMutablePointerToElements { primitive in
            #if !canImport(os) && !canImport(WinSDK) && !os(Linux)
                _ = pthread_mutex_destroy(primitive)
            #endif
            _ = primitive.deinitialize(count: 1)
        }
    }

    @inlinable @inline(__always)
    final func lock() {
        withUnsafeMutablePointerToElements { lockPrimitive($0) }
    }

    @inlinable @inline(__always)
    final func unlock() {
        withUnsafeMutablePointerToElements { unlockPrimitive($0) }
    }

    /// Takes the lock and runs `body`; releases the lock after it if `body` returns false (see
    /// `Lock.withLockKeptIf(_:)`).
    @inlinable @inline(__always)
    final func withLockKeptIf(_ body: () -> Bool) -> Bool {
        withUnsafeMutablePointerToElements { primitive in
            lockPrimitive(primitive)
            let keep = body()
            if !keep { unlockPrimitive(primitive) }
            return keep
        }
    }

    /// Runs `body` with the lock held (see `Lock.withLock(_:)`).
    @inlinable @inline(__always)
    final func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// The atomic word of a `Lock` (see `Lock.loadWord()` and the others, which call these).
extension LockStorage where Value == UInt {
    @inlinable @inline(__always)
    final func loadWord() -> UInt {
        withUnsafeMutablePointerToHeader { signals_atomic_load($0) }
    }

    @inlinable @inline(__always)
    final func storeWord(_ value: UInt) {
        withUnsafeMutablePointerToHeader { signals_atomic_store($0, value) }
    }

    @inlinable @inline(__always)
    final func compareExchangeWord(expected: UInt, desired: UInt) -> Bool {
        withUnsafeMutablePointerToHeader { signals_atomic_compare_exchange($0, expected, desired) }
    }
}

/// The one lock type of the package. Not recursive.
///
/// Code holding it must never call out to user code (observers, mappings, effects, scheduler actions):
/// compute what to do under the lock, release it, then act. Copies share the same lock.
///
/// A lock also carries one atomic machine word, stored in the same allocation, for state that a fast
/// path reads and changes without taking the lock (`Signal` keeps its delivery state there). A word
/// that no lock guards is an `AtomicWord`.
@usableFromInline
package struct Lock: @unchecked Sendable {
    // Safe: the storage is only used through the platform lock API and the atomic word operations,
    // which are thread safe.
    @usableFromInline let storage: LockStorage<UInt>

    @inlinable
    package init() {
        storage = .make(0)
    }

    /// The lock that lives in `storage` (a `PropertyBuffer`'s own).
    @inlinable
    init(storage: LockStorage<UInt>) {
        self.storage = storage
    }

    /// The object the lock lives in: for the package's tests, which check its lifetime with a weak
    /// reference.
    package var storageObject: AnyObject { storage }

    /// This lock, unretained: for an owner that keeps the lock alive and hands it to many short-lived
    /// objects (see `Lifetime.init(sharing:)`).
    @inlinable
    package var unretained: UnretainedLock {
        UnretainedLock(storage: .passUnretained(storage))
    }

    /// The atomic word's value (acquire).
    @inlinable @inline(__always)
    package func loadWord() -> UInt {
        storage.loadWord()
    }

    /// Sets the atomic word (release).
    @inlinable @inline(__always)
    package func storeWord(_ value: UInt) {
        storage.storeWord(value)
    }

    /// Replaces the atomic word with `desired` if it is `expected`; returns whether it did.
    @inlinable @inline(__always)
    package func compareExchangeWord(expected: UInt, desired: UInt) -> Bool {
        storage.compareExchangeWord(expected: expected, desired: desired)
    }

    /// Sets `role` in the atomic word if it is clear, and returns true; if another thread holds `role`,
    /// sets `mark` instead (telling that thread there is more to do) and returns false.
    @inlinable
    package func takeWordBit(_ role: UInt, orSet mark: UInt) -> Bool {
        while true {
            let word = loadWord()
            if word & role != 0 {
                if compareExchangeWord(expected: word, desired: word | mark) { return false }
            } else if compareExchangeWord(expected: word, desired: word | role) {
                return true
            }
        }
    }

    @inlinable @inline(__always)
    package func lock() {
        storage.lock()
    }

    @inlinable @inline(__always)
    package func unlock() {
        storage.unlock()
    }

    /// Takes the lock and runs `body`; releases the lock after it if `body` returns false, and leaves it
    /// held if it returns true: the caller must then release it, itself or through a function entered
    /// with the lock held (`SignalCore.sendWithLockHeld`). `body` must be package code that calls no
    /// user closure.
    @inlinable @inline(__always)
    package func withLockKeptIf(_ body: () -> Bool) -> Bool {
        storage.withLockKeptIf(body)
    }

    /// Runs `body` with the lock held. `body` must be package code that calls no user closure.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

/// A `Lock` held without a reference: copying or storing it costs no reference counting. Whoever
/// uses it must know that the lock is still alive (its owner keeps a `Lock`).
@usableFromInline
package struct UnretainedLock: @unchecked Sendable {
    // Safe: as `Lock`.
    @usableFromInline let storage: Unmanaged<LockStorage<UInt>>

    @inlinable
    init(storage: Unmanaged<LockStorage<UInt>>) {
        self.storage = storage
    }
}

/// A value that can only be touched while its lock is held (the `NIOLockedValueBox` pattern). Copies
/// share the same value and lock.
@usableFromInline
package struct Locked<State> {
    @usableFromInline let storage: LockStorage<State>

    @inlinable
    package init(_ state: State) {
        storage = .make(state)
    }

    /// A value made in place by `makeState`, run once, at once: for a large value, which `init(_:)`
    /// would copy into the storage and then destroy.
    @inlinable
    package init(making makeState: () -> State) {
        storage = .make(making: makeState)
    }

    /// Runs `body` on the state with the lock held. `body` must be package code that calls no user closure.
    @inlinable @inline(__always)
    package func withCriticalRegion<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, primitive in
            lockPrimitive(primitive)
            defer { unlockPrimitive(primitive) }
            return try body(&state.pointee)
        }
    }
}

// Safe: the state is only read or written inside `withCriticalRegion`, under the lock, and what is
// stored there may cross threads because it is itself `Sendable`.
extension Locked: @unchecked Sendable where State: Sendable {}
