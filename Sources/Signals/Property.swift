/// The value and change signal behind a property.
///
/// The value is guarded by the change signal's own lock, so a write stores the value and queues its
/// notification in one critical section (no change can be observed out of order), and a read takes
/// that one lock briefly (it is never held while observers run).
@usableFromInline
package final class PropertyStorage<Value: Sendable>: @unchecked Sendable {
    // Safe: `current` and `version` are only read or written with the change signal's lock held: in
    // `value`, and in the conditions `send(_:if:)` and `observe(_:initial:)` run under that lock.
    @usableFromInline @exclusivity(unchecked) var current: Value
    @usableFromInline @exclusivity(unchecked) var version: UInt64 = 0
    /// Emits each change after it is stored; completes when the owner calls `complete()`.
    @usableFromInline package let signal: Signal<Value, Never>
    /// The core behind `signal`, kept in a field of its own: reaching it through the handle on every
    /// write costs more than the write.
    @usableFromInline let core: SignalCore<Value, Never>

    @inlinable
    package init(_ value: Value) {
        current = value
        signal = Signal()
        core = signal.core
    }

    @inlinable
    package var value: Value {
        core.lock.withLock { current }
    }

    /// Stores `newValue`, then notifies observers (now, or after the delivery in progress). Ignored
    /// once the change signal has completed.
    ///
    /// With nobody observing and nothing being delivered (an automaton whose `state` is only read), a
    /// write is a store under the lock: no event is built or queued.
    ///
    /// Always inlined: the automaton calls it once per input, and a call costs an effect-free input
    /// 16 instructions (W2 216 against 200, callgrind at `e4195c3`).
    @inlinable @inline(__always)
    package func set(_ newValue: Value) {
        let core = self.core
        // The old value is swapped out, not overwritten, and released after the lock: its deinit is
        // the user's code, and may read this property.
        var replaced = newValue
        // One critical section, its lock released here unless the change is to be sent; written as
        // one closure so that the compiler does not retain the lock's storage around the unlock.
        let mustSend = core.lock.withLockKeptIf { () -> Bool in
            let word = core.lock.loadWord()
            if word & DeliveryState.closed != 0 { return false }
            swap(&current, &replaced)
            version &+= 1
            // Sent unless nobody observes and nobody is delivering (a word of `unobserved` alone).
            return word != DeliveryState.unobserved
        }
        if mustSend { core.sendWithLockHeld(.value(newValue)) }
        withExtendedLifetime(replaced) {}
    }

    /// Changes the value with `action`, run with no lock held; retried if another writer changed the
    /// value in between, so `action` may run more than once.
    package func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        while true {
            let (snapshot, snapshotVersion) = core.lock.withLock { (current, version) }
            var updated = snapshot
            let result = try action(&updated)
            let newValue = updated
            var committed = false
            // Swapped out and released after the lock, as in `set(_:)`.
            var replaced = newValue
            core.send(
                .value(newValue),
                if: {
                    guard version == snapshotVersion else { return false }
                    swap(&current, &replaced)
                    version &+= 1
                    committed = true
                    return true
                })
            withExtendedLifetime(replaced) {}
            withExtendedLifetime(snapshot) {}
            if committed || core.hasTerminated { return result }
        }
    }

    /// A producer that sends the current value, then every change, with nothing missed or repeated
    /// in between.
    package var producer: SignalProducer<Value, Never> {
        SignalProducer { [self] observer, lifetime in
            lifetime += core.observe(observer, initial: { .value(self.current) })
        }
    }

    /// Completes the change signal. Later writes are ignored.
    @inlinable
    package func complete() {
        core.send(.completed)
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
        /// A property composed from others (`map`, `combineLatest`, `skipRepeats`): `read` computes the
        /// value from the sources' values at each read; `producer` sends the current value, then each
        /// change; `changes` is the one signal of later changes that every observer of `signal` shares.
        case derived(read: @Sendable () -> Value, producer: SignalProducer<Value, Never>, changes: Signal<Value, Never>)
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
        source = .derived(read: read, producer: producer, changes: Signal.relaying { output in changes.start(output) })
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
        case let .derived(read, _, _): return read()
        }
    }

    /// Sends each change made after observation starts. See the type's documentation.
    public var signal: Signal<Value, Never> {
        switch source {
        case let .stored(storage): return storage.signal
        case let .derived(_, _, changes): return changes
        }
    }

    /// Sends the current value, then each change. See the type's documentation.
    public var producer: SignalProducer<Value, Never> {
        switch source {
        case let .stored(storage): return storage.producer
        case let .derived(_, producer, _): return producer
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
