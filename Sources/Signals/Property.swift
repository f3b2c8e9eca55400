/// A read-only value that changes over time, and the means to watch it.
///
/// - `value` can be read synchronously from any thread. A change is visible through `value` before
///   any observer hears of it.
/// - `signal` sends each later change, serially, in the order the changes were made.
/// - `producer` sends the current value, then each later change.
/// - The change signal completes when the property's source goes away (its `MutableProperty` or its
///   automaton is released). Kept after that, it keeps the property's last value in memory until it
///   is released too (the value, its lock and the signal's slot are one allocation). So a value must
///   not hold its own property's `signal` or `producer`: that is a reference cycle, and neither is
///   ever freed.
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
                    made = PropertyStorage.holding(value)
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
        let storage = PropertyStorage.holding(value)
        storage.complete()
        self.init(storage: storage)
    }

    /// A property that starts with `initial` and then takes each value `values` sends. Its `signal`
    /// completes when `values` terminates.
    public convenience init(initial: Value, then values: Signal<Value, Never>) {
        let storage = PropertyStorage.holding(initial)
        values.observe { event in
            switch event {
            case let .value(value): storage.set(value)
            case .completed, .interrupted: storage.complete()
            }
        }
        self.init(storage: storage)
    }

    /// The storage object of a stored property, nil for a composed one (for tests, which check its
    /// lifetime with a weak reference).
    package var storedObject: AnyObject? {
        if case let .stored(storage) = source { return storage.object }
        return nil
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
        storage = PropertyStorage.holding(initial)
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
