/// The value and change signal behind a property.
///
/// The value is guarded by the property's lock, which its change signal shares, so a write stores the
/// value and queues its notification in one critical section (no change can be observed out of
/// order), and a read takes that one lock briefly (it is never held while observers run).
///
/// The change signal is made on first use (`signal`, `producer`): a property that is only read and
/// written, such as the `state` of most automata, costs its value, its lock and this object, three
/// allocations fewer. Until then, the lock's word is the signal's `DeliveryState` as a core with no
/// observer would keep it: `unobserved`, and `closed` once `complete()` has been called.
@usableFromInline
package final class PropertyStorage<Value: Sendable>: @unchecked Sendable {
    // Safe: `current`, `version` and `made` are only read or written with `lock` held: in `value`,
    // `signal`, `set(_:)`, `modify(_:)`, `complete()`, and in the `initial` closure that
    // `producer` gives `observe(_:initial:)`, which runs under that lock (the core's, which is this one).
    /// The property's lock: its change signal's too, and, for an automaton's `state`, the lock its
    /// engine's lifetimes share (see `AutomatonEngine.lifetimesLock`). Its word is the change signal's
    /// delivery state.
    @usableFromInline package let lock: Lock
    @usableFromInline @exclusivity(unchecked) var current: Value
    @usableFromInline @exclusivity(unchecked) var version: UInt64 = 0
    /// The change signal, once made: emits each change after it is stored; completes when the owner
    /// calls `complete()`. Made under `lock`, by `signal`.
    @usableFromInline @exclusivity(unchecked) var made: Signal<Value, Never>?

    @inlinable
    package init(_ value: Value) {
        current = value
        lock = Lock()
        lock.storeWord(DeliveryState.unobserved)
    }

    @inlinable
    package var value: Value {
        lock.withLock { current }
    }

    /// The change signal: made now, sharing this property's lock, unless it was made before. Once the
    /// property has completed, a signal made now has completed too.
    package var signal: Signal<Value, Never> {
        lock.lock()
        defer { lock.unlock() }
        if let made { return made }
        // Made under the lock (an allocation, no user code), so that no write can come in between.
        let ending: SignalEnding? = lock.loadWord() & DeliveryState.closed != 0 ? .completed : nil
        let signal = Signal(core: SignalCore<Value, Never>(sharing: lock, endedWith: ending))
        made = signal
        return signal
    }

    /// Whether the change signal has been made (for tests).
    package var isSignalMade: Bool {
        lock.withLock { made != nil }
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
    package func set(_ newValue: Value) {
        let lock = self.lock
        // The old value is swapped out, not overwritten, and released after the lock: its deinit is
        // the user's code, and may read this property.
        var replaced = newValue
        // One critical section, its lock released here unless the change is to be sent; written as
        // one closure so that the compiler does not retain the lock's storage around the unlock.
        let mustSend = lock.withLockKeptIf { () -> Bool in
            let word = lock.loadWord()
            if word & DeliveryState.closed != 0 { return false }
            swap(&current, &replaced)
            version &+= 1
            // Sent unless nobody observes and nobody is delivering (a word of `unobserved` alone),
            // which is always the case before the change signal is made.
            return word != DeliveryState.unobserved
        }
        if mustSend { madeCoreWithLockHeld.sendWithLockHeld(.value(newValue)) }
        withExtendedLifetime(replaced) {}
    }

    /// The change signal's core, with `lock` held, where its word says it has been made (only a core
    /// changes the word from `unobserved`, and `closed` is tested first).
    @inlinable
    var madeCoreWithLockHeld: SignalCore<Value, Never> {
        guard let made else {
            preconditionFailure("Internal inconsistency: a property's word changed before its signal was made")
        }
        return made.core
    }

    /// Changes the value with `action`, run with no lock held; retried if another writer changed the
    /// value in between, so `action` may run more than once.
    package func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        while true {
            let (snapshot, snapshotVersion) = lock.withLock { (current, version) }
            var updated = snapshot
            let result = try action(&updated)
            let newValue = updated
            // Swapped out and released after the lock, as in `set(_:)`.
            var replaced = newValue
            lock.lock()
            let word = lock.loadWord()
            let closed = word & DeliveryState.closed != 0
            let committed = !closed && version == snapshotVersion
            if committed {
                swap(&current, &replaced)
                version &+= 1
            }
            if committed && word != DeliveryState.unobserved {
                madeCoreWithLockHeld.sendWithLockHeld(.value(newValue))
            } else {
                lock.unlock()
            }
            withExtendedLifetime(replaced) {}
            withExtendedLifetime(snapshot) {}
            if committed || closed { return result }
        }
    }

    /// A producer that sends the current value, then every change, with nothing missed or repeated
    /// in between.
    package var producer: SignalProducer<Value, Never> {
        SignalProducer { [self] observer, lifetime in
            lifetime += signal.core.observe(observer, initial: { .value(self.current) })
        }
    }

    /// Completes the change signal (now, or once it is made). Later writes are ignored.
    @inlinable
    package func complete() {
        lock.lock()
        if let made {
            made.core.sendWithLockHeld(.completed)  // releases the lock
            return
        }
        lock.storeWord(lock.loadWord() | DeliveryState.closed)
        lock.unlock()
    }
}

/// A read-only value that changes over time, and the means to watch it.
///
/// - `value` can be read synchronously from any thread. A change is visible through `value` before
///   any observer hears of it.
/// - `signal` sends each later change, serially, in the order the changes were made.
/// - `producer` sends the current value, then each later change.
/// - The change signal completes when the property's source goes away (its `MutableProperty` or its
///   automaton is released).
public final class Property<Value: Sendable>: Sendable {
    /// Where a property's value and changes come from.
    private enum Source: Sendable {
        /// A stored value and its change signal.
        case stored(PropertyStorage<Value>)
        /// A property composed from others (`map`, `combineLatest`, `skipRepeats`). Boxed, so that the
        /// enum, and every `Property`, is one word: an automaton's `state` is stored, and its
        /// `Property` was 72 bytes, an 80-byte block per automaton, for this case's payload (now 24,
        /// a 32-byte block; "bytes per idle automaton", `Benchmarks/run million`).
        case derived(DerivedSource)
    }

    /// What a composed property reads and sends: `read` computes the value from the sources' values
    /// at each read; `producer` sends the current value, then each change; `changes` is the one
    /// signal of later changes that every observer of `signal` shares.
    private final class DerivedSource: Sendable {
        let read: @Sendable () -> Value
        let producer: SignalProducer<Value, Never>
        let changes: Signal<Value, Never>

        init(
            read: @escaping @Sendable () -> Value, producer: SignalProducer<Value, Never>,
            changes: Signal<Value, Never>
        ) {
            self.read = read
            self.producer = producer
            self.changes = changes
        }
    }

    private let source: Source

    @usableFromInline
    package init(storage: PropertyStorage<Value>) {
        source = .stored(storage)
    }

    /// A property whose value is `read()` at each read, and whose changes `producer` sends after the
    /// current value, for properties composed from others. `read` must only read other properties and
    /// apply a pure transform; it is never called with a lock held.
    ///
    /// One run of `producer` starts now and feeds `signal`, so that every observer of `signal` sees the
    /// same changes in the same order; it lasts until `producer` terminates (when the sources stop
    /// changing).
    init(read: @escaping @Sendable () -> Value, producer: SignalProducer<Value, Never>) {
        let changes = producer.skip(first: 1)
        source = .derived(
            DerivedSource(read: read, producer: producer, changes: Signal.relaying { output in changes.start(output) }))
    }

    /// A property that takes its first value and each change from `producer`, which must send a value
    /// synchronously when started (the producer of a property does), and completes when `producer`
    /// terminates. The run of `producer` lasts until it terminates.
    convenience init(firstValueAndChanges producer: SignalProducer<Value, Never>) {
        let made = Locked<PropertyStorage<Value>?>(nil)
        producer.start { event in
            switch event {
            case let .value(value):
                let existing = made.withCriticalRegion { made -> PropertyStorage<Value>? in
                    if let made { return made }
                    made = PropertyStorage(value)
                    return nil
                }
                existing?.set(value)
            case .completed, .interrupted:
                made.withCriticalRegion { $0 }?.complete()
            }
        }
        guard let storage = made.withCriticalRegion({ $0 }) else {
            preconditionFailure("Internal inconsistency: a property producer sent no value when started")
        }
        self.init(storage: storage)
    }

    /// A read-only view of `property`. It does not keep `property` alive; once `property` is released
    /// this view keeps its last value and its `signal` has completed.
    public convenience init(_ property: MutableProperty<Value>) {
        self.init(storage: property.storage)
    }

    /// A property that always holds `value`. Its `signal` has already completed.
    public convenience init(value: Value) {
        let storage = PropertyStorage(value)
        storage.complete()
        self.init(storage: storage)
    }

    /// A property that starts with `initial` and then takes each value `values` sends. Its `signal`
    /// completes when `values` terminates.
    public convenience init(initial: Value, then values: Signal<Value, Never>) {
        let storage = PropertyStorage(initial)
        values.observe { event in
            switch event {
            case let .value(value): storage.set(value)
            case .completed, .interrupted: storage.complete()
            }
        }
        self.init(storage: storage)
    }

    /// The current value. Thread safe.
    public var value: Value {
        switch source {
        case let .stored(storage): return storage.value
        case let .derived(derived): return derived.read()
        }
    }

    /// Sends each change made after observation starts. See the type's documentation.
    public var signal: Signal<Value, Never> {
        switch source {
        case let .stored(storage): return storage.signal
        case let .derived(derived): return derived.changes
        }
    }

    /// Sends the current value, then each change. See the type's documentation.
    public var producer: SignalProducer<Value, Never> {
        switch source {
        case let .stored(storage): return storage.producer
        case let .derived(derived): return derived.producer
        }
    }
}

/// A value that can be read and changed from any thread, and watched.
///
/// Each change is stored first (so `value` shows it) and then sent to observers of `signal` and
/// `producer`, serially and in the order the changes were made. When the property is released its
/// `signal` completes, then its `lifetime` ends (so bindings to it end), as in ReactiveSwift.
public final class MutableProperty<Value: Sendable>: Sendable {
    package let storage: PropertyStorage<Value>

    /// How long the property lives: it ends when the property is released, after its `signal` has
    /// completed. Bindings to the property (`property <~ source`) end with it; register your own
    /// cleanup with `observeEnded(_:)`.
    public let lifetime: Lifetime
    private let lifetimeToken: Lifetime.Token

    /// A property holding `initial`.
    public init(_ initial: Value) {
        storage = PropertyStorage(initial)
        (lifetime, lifetimeToken) = Lifetime.make()
    }

    deinit {
        storage.complete()
        lifetimeToken.dispose()
    }

    /// The current value. Reading is thread safe; setting stores the value and then notifies observers.
    public var value: Value {
        get { storage.value }
        set { storage.set(newValue) }
    }

    /// Changes the value atomically with `action` and notifies observers of the result.
    ///
    /// `action` runs with no lock held. If another thread changes the value while `action` runs,
    /// `action` runs again on the newer value, so it must have no side effects.
    ///
    /// - Returns: what the last run of `action` returned.
    @discardableResult
    public func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        try storage.modify(action)
    }

    /// Calls `action` with the current value, without changing it, and returns what `action` returns.
    ///
    /// `action` runs on the calling thread with a consistent snapshot of the value, read under the
    /// property's lock, but **with no lock held**: the package never runs a user closure under its lock,
    /// and the lock is not recursive, so reading or setting the property from inside `action` would
    /// deadlock otherwise. Unlike ReactiveSwift's `withValue`, writers are therefore not held off while
    /// `action` runs: another thread may change the property meanwhile, and `action` still sees the
    /// snapshot. `action` must not write to the property (use `modify(_:)` to change it from its
    /// current value) and should not block.
    public func withValue<Result>(_ action: (Value) throws -> Result) rethrows -> Result {
        try action(storage.value)
    }

    /// Sends each change made after observation starts.
    public var signal: Signal<Value, Never> { storage.signal }

    /// Sends the current value, then each change.
    public var producer: SignalProducer<Value, Never> { storage.producer }
}
