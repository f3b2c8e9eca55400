import SignalsAtomics

/// One machine word that threads read and change with atomic operations only: a role bit taken with a
/// compare-and-swap, a flag set by one thread for another. No lock comes with it (a `Lock` carries a
/// word of its own, for state that is read lock-free but changed under that lock).
///
/// Copies share the same word. The operations are the C11 ones of `SignalsAtomics.h` (Swift's
/// `Synchronization.Atomic` needs macOS 15 and iOS 18; the package supports older systems), inlined
/// into the caller, so each costs what the bare instruction does, and the thread sanitizer sees it.
@usableFromInline
package struct AtomicWord: AtomicWordOperations, @unchecked Sendable {
    // Safe: the word is only read and written through the atomic operations of
    // `AtomicWordOperations`.
    @usableFromInline let storage: AtomicWordStorage

    /// A word holding 0.
    @inlinable
    package init() {
        storage = AtomicWordStorage.make()
    }

    @inlinable @inline(__always)
    package func withWordAddress<Result>(_ body: (UnsafeMutablePointer<UInt>) -> Result) -> Result {
        storage.withUnsafeMutablePointerToHeader(body)
    }
}

/// What can be done to an atomic word, wherever it lives: its own allocation (`AtomicWord`) or a
/// group's (`UnownedAtomicWord`). Every operation goes through the word's address, with the C11
/// operations of `SignalsAtomics.h`.
@usableFromInline
package protocol AtomicWordOperations {
    /// Calls `body` with the word's address, which stays valid while `body` runs.
    func withWordAddress<Result>(_ body: (UnsafeMutablePointer<UInt>) -> Result) -> Result
}

extension AtomicWordOperations {
    /// The word's value (acquire).
    @inlinable @inline(__always)
    package func load() -> UInt {
        withWordAddress { signals_atomic_load($0) }
    }

    /// Sets the word (release).
    @inlinable @inline(__always)
    package func store(_ value: UInt) {
        withWordAddress { signals_atomic_store($0, value) }
    }

    /// The word's value, read in the single total order of sequentially consistent operations (for a
    /// handshake between two words: see `storeSequentially(_:)`).
    @inlinable @inline(__always)
    package func loadSequentially() -> UInt {
        withWordAddress { signals_atomic_load_sequential($0) }
    }

    /// Sets the word, in the single total order of sequentially consistent operations: a later
    /// `loadSequentially()` of another word by this thread cannot be ordered before it. So if one
    /// thread stores word A then loads word B, and another changes B then loads A (all sequentially),
    /// at least one of them sees the other's write.
    @inlinable @inline(__always)
    package func storeSequentially(_ value: UInt) {
        withWordAddress { signals_atomic_store_sequential($0, value) }
    }

    /// Sets `bits` in the word, in the single total order of sequentially consistent operations (see
    /// `storeSequentially(_:)`).
    @inlinable @inline(__always)
    package func setBitsSequentially(_ bits: UInt) {
        withWordAddress { signals_atomic_or_sequential($0, bits) }
    }

    /// Replaces the word with `desired` if it is `expected` (acquire-release); returns whether it did.
    @inlinable @inline(__always)
    package func compareExchange(expected: UInt, desired: UInt) -> Bool {
        withWordAddress { signals_atomic_compare_exchange($0, expected, desired) }
    }

    /// Sets `bits` in the word, whatever else changes it meanwhile.
    @inlinable
    package func setBits(_ bits: UInt) {
        while true {
            let word = load()
            if compareExchange(expected: word, desired: word | bits) { return }
        }
    }

    /// Sets `role` in the word if it is clear, and returns true; if another thread holds `role`, sets
    /// `mark` instead (telling that thread there is more to do) and returns false.
    @inlinable
    package func takeBit(_ role: UInt, orSet mark: UInt) -> Bool {
        while true {
            let word = load()
            if word & role != 0 {
                if compareExchange(expected: word, desired: word | mark) { return false }
            } else if compareExchange(expected: word, desired: word | role) {
                return true
            }
        }
    }
}

/// Several atomic words in one allocation: an object that needs a few words (the automaton's engine
/// has seven) pays one allocation for them, and reaches each through an `UnownedAtomicWord`.
///
/// The buffer's header is word 0 and its elements the others, so that no word of the allocation is
/// spent on a count: the engine's seven words fit a 72-byte object, an 80-byte block ("bytes per idle
/// automaton", `Benchmarks/run million`). Words are plain integers, so nothing is deinitialized.
@usableFromInline
package final class AtomicWordGroup: ManagedBuffer<UInt, UInt> {
    /// A group of `count` words (at least one), each holding 0.
    @inlinable
    package static func make(count: Int) -> AtomicWordGroup {
        precondition(count >= 1, "Internal inconsistency: a group of \(count) words")
        let buffer = create(minimumCapacity: count - 1) { _ in 0 }
        buffer.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: count - 1) }
        return unsafeDowncast(buffer, to: AtomicWordGroup.self)
    }

    /// The word at `index`, which the caller may use only while it keeps this group alive. `index` must
    /// be less than the count the group was made with (checked in debug builds: the capacity a release
    /// build could check against costs a call into the allocator).
    @inlinable
    package func word(_ index: Int) -> UnownedAtomicWord {
        assert(index >= 0 && index <= capacity, "Internal inconsistency: word \(index) of a group of \(capacity + 1)")
        if index == 0 { return withUnsafeMutablePointerToHeader { UnownedAtomicWord(address: $0) } }
        return withUnsafeMutablePointerToElements { UnownedAtomicWord(address: $0 + (index - 1)) }
    }
}

/// An `AtomicWordGroup` held without a reference, for a value that lives inside the group's owner
/// (the engine's state machine) and reaches several of its words: one field for them all, each word's
/// address computed from the group's.
///
/// Unowned, with the invariant of `UnownedAtomicWord`: whoever holds one keeps the group alive for as
/// long as it uses it.
@usableFromInline
package struct UnownedAtomicWordGroup: @unchecked Sendable {
    // Safe: only the words' atomic operations are reached through it; its lifetime is the group's.
    @usableFromInline let group: Unmanaged<AtomicWordGroup>

    @inlinable
    package init(_ group: AtomicWordGroup) {
        self.group = .passUnretained(group)
    }

    /// The word at `index` (see `AtomicWordGroup.word(_:)`).
    @inlinable @inline(__always)
    package func word(_ index: Int) -> UnownedAtomicWord {
        group._withUnsafeGuaranteedRef { $0.word(index) }
    }
}

/// One word of an `AtomicWordGroup`, by its address: no reference, so no reference counting and no
/// more room than a pointer.
///
/// Unowned. Invariant: whoever holds one keeps its group alive for as long as it uses it (the
/// automaton's engine holds its group, stores one word, `gate`, and computes the others from the group
/// at each use, including the words its on-demand signals are made from; its state machine holds the
/// group unowned, and lives in the engine's own lock storage, which dies with the engine). A word used after
/// its group was freed is a use-after-free, which the address sanitizer job of `.ci/run` reports in
/// any test that creates and releases automata (every test of the engine does).
@usableFromInline
package struct UnownedAtomicWord: AtomicWordOperations, @unchecked Sendable {
    // Safe: the word is only read and written through the atomic operations of
    // `AtomicWordOperations`; its lifetime is its group's (see above).
    @usableFromInline let address: UnsafeMutablePointer<UInt>

    @inlinable
    init(address: UnsafeMutablePointer<UInt>) {
        self.address = address
    }

    @inlinable @inline(__always)
    package func withWordAddress<Result>(_ body: (UnsafeMutablePointer<UInt>) -> Result) -> Result {
        body(address)
    }
}

/// The allocation an `AtomicWord` lives in: the word is the buffer's header, at a stable address (a
/// Swift stored property does not guarantee one); there are no elements.
@usableFromInline
final class AtomicWordStorage: ManagedBuffer<UInt, Void> {
    @inlinable
    static func make() -> AtomicWordStorage {
        unsafeDowncast(create(minimumCapacity: 0) { _ in 0 }, to: AtomicWordStorage.self)
    }
}
