/// The value and change signal behind a property.
///
/// The value is guarded by the property's lock, which its change signal shares, so a write stores the
/// value and queues its notification in one critical section (no change can be observed out of
/// order), and a read takes that one lock briefly (it is never held while observers run).
///
/// The change signal is made on first use (`signal`, `producer`): a property that is only read and
/// written, such as the `state` of most automata, costs its value and this object, three
/// allocations fewer. Until then, the lock's word is the signal's `DeliveryState` as a core with no
/// observer would keep it: `unobserved`, and `closed` once `complete()` has been called.
///
/// One allocation: this object is its lock's storage (a `LockStorage` of the lock's word), and keeps
/// its fields in the tail after the lock primitive. A separate lock was a 48-byte
/// block per automaton ("bytes per idle automaton", `Benchmarks/run million`). So whoever holds the
/// lock holds the property: its change signal's core does, and this object holds the signal, a
/// cycle that `complete()` breaks by letting go of the signal; after it, `signal` makes one ended
/// signal with a lock of its own, and keeps it (no cycle). Every owner completes its storage before letting go of it
/// (`MutableProperty`'s and the automaton's release; `Property(value:)` at once; the other
/// properties when their source ends), which is what frees it.
@usableFromInline
final class PropertyBuffer<Value: Sendable>: LockStorage<UInt> {
    // Not `Sendable` (no `ManagedBuffer` is): `PropertyStorage` is its sendable handle.
    // Safe: the fields are only read or written with the lock held: in `value`, `signal`, `set(_:)`,
    // `modify(_:)`, `complete()`, and in the `initial` closure that `producer` gives
    // `observe(_:initial:)`, which runs under the change signal's lock (this one, or, for the ended
    // signal made after the completion, its own, when `current` no longer changes); and by
    // `deinit`, which nothing can overlap.

    /// A storage holding `value`, its change signal not made.
    @inlinable
    static func holding(_ value: Value) -> PropertyBuffer<Value> {
        let storage = make(making: { DeliveryState.unobserved }, tailBytes: tailBytes)
        // Bound to the fields' types here, once (the buffer bound the tail to the lock primitive's),
        // so that the accessors below may assume them.
        let start = storage.fieldsStart
        start.initializeMemory(as: UInt64.self, to: 0)
        (start + madeOffset).initializeMemory(as: AnyObject?.self, to: nil)
        (start + currentOffset).initializeMemory(as: Value.self, to: value)
        return storage
    }

    deinit {
        madeSlot.deinitialize(count: 1)
        current.deinitialize(count: 1)
    }

    // The fields, in the tail after the lock primitive, from the first address aligned for them:
    // `version` (8 bytes), then `made` (a reference), then `current` at 16 bytes (more if `Value`
    // needs a larger alignment). Laid out by hand, not as a generic struct: the struct's layout
    // depends on `Value`, and code that nothing specializes (`deinit`, `Property.value`) would look
    // up its generic metadata at each use, 430 instructions per automaton ("million create + input +
    // release", `Benchmarks/callgrind`).

    /// The alignment of the fields' start.
    @inlinable
    static var fieldsAlignment: Int { Swift.max(MemoryLayout<UInt64>.alignment, MemoryLayout<Value>.alignment) }

    /// Where `made` is, from the fields' start: after `version`.
    @inlinable
    static var madeOffset: Int { MemoryLayout<UInt64>.size }

    /// Where `current` is, from the fields' start: after `made`, at 16 bytes or the next multiple of
    /// `Value`'s alignment.
    @inlinable
    static var currentOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (16 + alignment - 1) / alignment * alignment
    }

    /// The tail bytes the fields need after the lock primitive: their size, after the padding that
    /// aligns them. The tail starts at a word-aligned address (after the object's two-word header
    /// and the lock's word), so for an alignment up to a word's the padding is exact; above, the
    /// worst case is reserved.
    @inlinable
    static var tailBytes: Int {
        let alignment = fieldsAlignment
        let primitive = MemoryLayout<LockPrimitive>.stride
        let padding =
            alignment <= MemoryLayout<UInt>.alignment
            ? (primitive + alignment - 1) / alignment * alignment - primitive : alignment - 1
        return padding + currentOffset + MemoryLayout<Value>.size
    }

    /// The fields' start.
    @inlinable
    var fieldsStart: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { primitive in
            UnsafeMutableRawPointer(primitive + 1).alignedUp(toMultipleOf: Self.fieldsAlignment)
        }
    }

    /// Changed at every write, for `modify(_:)`'s commit.
    @inlinable
    var version: UnsafeMutablePointer<UInt64> {
        fieldsStart.assumingMemoryBound(to: UInt64.self)
    }

    /// Where the change signal is kept (see `made`), as a plain reference: the generic type's metadata
    /// would be looked up by `deinit`, which nothing specializes (660 instructions per automaton,
    /// "million create + input + release").
    @inlinable
    var madeSlot: UnsafeMutablePointer<AnyObject?> {
        (fieldsStart + Self.madeOffset).assumingMemoryBound(to: AnyObject?.self)
    }

    /// The change signal, once made and until the property completes: emits each change after it is
    /// stored; completes when the owner calls `complete()`. Made under the lock, by `signal`. After
    /// the completion, nil, then the ended signal that `signal` makes (with a lock of its own).
    @inlinable
    var made: Signal<Value, Never>? {
        get { madeSlot.pointee.map { unsafeDowncast($0, to: Signal<Value, Never>.self) } }
        set { madeSlot.pointee = newValue }
    }

    /// The value.
    @inlinable
    var current: UnsafeMutablePointer<Value> {
        (fieldsStart + Self.currentOffset).assumingMemoryBound(to: Value.self)
    }

    /// The property's lock: its change signal's too, and, for an automaton's `state`, the lock its
    /// engine's lifetimes share (see `AutomatonEngine.lifetimesLock`). Its word is the change signal's
    /// delivery state. Holding it holds this storage.
    @inlinable
    var sharedLock: Lock { Lock(storage: self) }

    @inlinable
    var value: Value {
        withLock { current.pointee }
    }

    /// The change signal: made now, sharing this property's lock, unless it was made before. Once the
    /// property has completed, an ended signal with a lock of its own, made when first read after
    /// the completion and kept: it does not hold this storage, so keeping it makes no cycle.
    var signal: Signal<Value, Never> {
        lock()
        defer { unlock() }
        if let signal = made { return signal }
        // Made under the lock (allocations, no user code), so that no write can come in between.
        if loadWord() & DeliveryState.closed != 0 {
            // Not sharing this lock: it never sends, and the signal let go of by `complete()` may
            // still be delivering with this word.
            let ended = Lock()
            ended.storeWord(DeliveryState.closed)
            let signal = Signal(core: SignalCore<Value, Never>(sharing: ended, endedWith: .completed))
            made = signal
            return signal
        }
        let signal = Signal(core: SignalCore<Value, Never>(sharing: sharedLock, endedWith: nil))
        made = signal
        return signal
    }

    /// Whether a change signal is kept: the live one, made and not completed yet, or the ended one
    /// made after the completion (for tests).
    var isSignalMade: Bool {
        withLock { made != nil }
    }

    /// Whether the property has completed (for tests).
    var hasCompleted: Bool {
        withLock { loadWord() & DeliveryState.closed != 0 }
    }

    /// Stores `newValue`, then notifies observers (now, or after the delivery in progress). Ignored
    /// once the property has completed.
    ///
    /// With nobody observing and nothing being delivered (an automaton whose `state` is only read), a
    /// write is a store under the lock: no event is built or queued.
    ///
    /// Always inlined: the automaton calls it once per input, and a call costs an effect-free input
    /// 16 instructions (W2 216 against 200, callgrind at `e4195c3`).
    @inlinable @inline(__always)
    func set(_ newValue: Value) {
        let current = self.current
        let version = self.version
        // The old value is swapped out, not overwritten, and released after the lock: its deinit is
        // the user's code, and may read this property.
        var replaced = newValue
        // One critical section, its lock released here unless the change is to be sent; written as
        // one closure so that the compiler does not retain this storage around the unlock.
        let mustSend = withLockKeptIf { () -> Bool in
            let word = loadWord()
            if word & DeliveryState.closed != 0 { return false }
            swap(&current.pointee, &replaced)
            version.pointee &+= 1
            // Sent unless nobody observes and nobody is delivering (a word of `unobserved` alone),
            // which is always the case before the change signal is made.
            return word != DeliveryState.unobserved
        }
        if mustSend {
            // A reference of this thread's own: `complete()` may let go of the signal's meanwhile.
            let core = madeCoreWithLockHeld
            core.sendWithLockHeld(.value(newValue))
        }
        withExtendedLifetime(replaced) {}
    }

    /// The change signal's core, with the lock held, where its word says it has been made and the
    /// property has not completed (only a core changes the word from `unobserved`, and `closed` is
    /// tested first).
    @inlinable
    var madeCoreWithLockHeld: SignalCore<Value, Never> {
        guard let signal = made else {
            preconditionFailure("Internal inconsistency: a property's word changed before its signal was made")
        }
        return signal.core
    }

    /// Changes the value with `action`, run with no lock held; retried if another writer changed the
    /// value in between, so `action` may run more than once.
    func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        let current = self.current
        let version = self.version
        while true {
            let (snapshot, snapshotVersion) = withLock { (current.pointee, version.pointee) }
            var updated = snapshot
            let result = try action(&updated)
            let newValue = updated
            // Swapped out and released after the lock, as in `set(_:)`.
            var replaced = newValue
            lock()
            let word = loadWord()
            let closed = word & DeliveryState.closed != 0
            let committed = !closed && version.pointee == snapshotVersion
            if committed {
                swap(&current.pointee, &replaced)
                version.pointee &+= 1
            }
            if committed && word != DeliveryState.unobserved {
                let core = madeCoreWithLockHeld  // as in `set(_:)`
                core.sendWithLockHeld(.value(newValue))
            } else {
                unlock()
            }
            withExtendedLifetime(replaced) {}
            withExtendedLifetime(snapshot) {}
            if committed || closed { return result }
        }
    }

    /// Sends `observer` the current value, then every change, with nothing missed or repeated in
    /// between, until `lifetime` ends: a run of `PropertyStorage.producer`.
    func start(_ observer: Observer<Value, Never>, during lifetime: Lifetime) {
        let current = self.current
        lock()
        if loadWord() & DeliveryState.closed != 0 {
            // Completed: the last value and the completion, with no signal to make or observe (a
            // constant's producer, `Property(value:)`, is started this way every time).
            let last = current.pointee
            unlock()
            observer.send(value: last)
            observer.sendCompleted()
            return
        }
        unlock()
        // `initial` runs under the signal's lock: this storage's, or, if the property completed
        // meanwhile, the ended signal's own, and then no write can change `current` any more.
        lifetime += signal.core.observe(observer, initial: { .value(current.pointee) })
    }

    /// Completes the change signal (now, or once it is made), and lets go of it (see the type's
    /// documentation). Later writes are ignored.
    @inlinable
    func complete() {
        lock()
        if loadWord() & DeliveryState.closed != 0 {
            // Completed before (`made`, if set, is the ended signal, with a lock of its own).
            unlock()
            return
        }
        guard let signal = made else {
            storeWord(loadWord() | DeliveryState.closed)
            unlock()
            return
        }
        made = nil
        signal.core.sendWithLockHeld(.completed)  // releases the lock
        // `signal` is released here, after the lock: its core, if nobody else holds it, and with it
        // the core's reference to this storage (its lock).
        withExtendedLifetime(signal) {}
    }
}

/// A property's storage (`PropertyBuffer`: its value, its lock and its change signal, in one
/// allocation), as a sendable handle: the properties, the automaton's engine and the tests hold it.
/// Copies share the same storage. Thread safe: every member takes the storage's lock.
@usableFromInline
package struct PropertyStorage<Value: Sendable>: @unchecked Sendable {
    // Safe: the buffer's fields are only touched with its lock held (see `PropertyBuffer`).
    @usableFromInline let buffer: PropertyBuffer<Value>

    @inlinable
    init(buffer: PropertyBuffer<Value>) {
        self.buffer = buffer
    }

    /// A storage holding `value`, its change signal not made.
    @inlinable
    package static func holding(_ value: Value) -> PropertyStorage<Value> {
        PropertyStorage(buffer: .holding(value))
    }

    /// The property's lock (see `PropertyBuffer.lock`). Holding it holds the storage.
    @inlinable
    package var lock: Lock { buffer.sharedLock }

    /// The current value.
    @inlinable
    package var value: Value { buffer.value }

    /// The change signal (see `PropertyBuffer.signal`).
    package var signal: Signal<Value, Never> { buffer.signal }

    /// Whether a change signal is kept (see `PropertyBuffer.isSignalMade`; for tests).
    package var isSignalMade: Bool { buffer.isSignalMade }

    /// Whether the property has completed (for tests).
    package var hasCompleted: Bool { buffer.hasCompleted }

    /// Stores `newValue`, then notifies observers (see `PropertyBuffer.set(_:)`).
    @inlinable @inline(__always)
    package func set(_ newValue: Value) {
        buffer.set(newValue)
    }

    /// Changes the value with `action` (see `PropertyBuffer.modify(_:)`).
    package func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        try buffer.modify(action)
    }

    /// Sends the current value, then every change.
    package var producer: SignalProducer<Value, Never> {
        let storage = self
        return SignalProducer { observer, lifetime in
            storage.buffer.start(observer, during: lifetime)
        }
    }

    /// Completes the change signal and lets go of it (see `PropertyBuffer.complete()`).
    @inlinable
    package func complete() {
        buffer.complete()
    }

    /// The storage object (for tests, which check its lifetime with a weak reference).
    package var object: AnyObject { buffer }

    /// Whether the value lies inside the storage's allocation, aligned for its type, after the lock
    /// primitive and the other fields (for tests: the layout `PropertyBuffer` computes by hand).
    package var valueIsLaidOutInBounds: Bool {
        buffer.withUnsafeMutablePointerToElements { primitive in
            let tailStart = UnsafeMutableRawPointer(primitive)
            let tailEnd = tailStart + buffer.capacity * MemoryLayout<LockPrimitive>.stride
            let fieldsStart = buffer.fieldsStart
            let current = UnsafeMutableRawPointer(buffer.current)
            return fieldsStart >= UnsafeMutableRawPointer(primitive + 1)
                // Against the layout's 8 bytes, not `madeOffset`, so that a wrong constant shows.
                && UnsafeMutableRawPointer(buffer.madeSlot) == fieldsStart + 8
                && current >= fieldsStart + 16
                && Int(bitPattern: current) % MemoryLayout<Value>.alignment == 0
                && current + MemoryLayout<Value>.size <= tailEnd
        }
    }
}
