/// The value and change signal behind a property. Writes take the signal's lock, then the value's
/// lock; reads take only the value's lock.
package final class PropertyStorage<Value: Sendable>: Sendable {
    private struct Box {
        var value: Value
        var version: UInt64
    }

    private let box: Locked<Box>
    /// Emits each change after it is stored; completes when the owner calls `complete()`.
    package let signal: Signal<Value, Never>

    package init(_ value: Value) {
        box = Locked(Box(value: value, version: 0))
        signal = Signal()
    }

    package var value: Value {
        box.withCriticalRegion { $0.value }
    }

    /// Stores `newValue`, then notifies observers (now, or after the delivery in progress).
    package func set(_ newValue: Value) {
        signal.send(.value(newValue), if: {
            box.withCriticalRegion { box in
                box.value = newValue
                box.version &+= 1
            }
            return true
        })
    }

    /// Changes the value with `action`, run with no lock held; retried if another writer changed the
    /// value in between, so `action` may run more than once.
    package func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        while true {
            let (current, version) = box.withCriticalRegion { ($0.value, $0.version) }
            var updated = current
            let result = try action(&updated)
            let newValue = updated
            var committed = false
            signal.send(.value(newValue), if: {
                committed = box.withCriticalRegion { box in
                    guard box.version == version else { return false }
                    box.value = newValue
                    box.version &+= 1
                    return true
                }
                return committed
            })
            if committed || signal.hasTerminated { return result }
        }
    }

    /// A producer that sends the current value, then every change, with nothing missed or repeated
    /// in between.
    package var producer: SignalProducer<Value, Never> {
        SignalProducer { [self] observer, lifetime in
            lifetime += signal.observe(observer, initial: { .value(self.value) })
        }
    }

    /// Completes the change signal. Later writes are ignored.
    package func complete() {
        signal.send(.completed)
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
    private let storage: PropertyStorage<Value>
    /// Keeps alive what feeds this property, if anything.
    private let source: (any Sendable)?

    package init(storage: PropertyStorage<Value>, source: (any Sendable)? = nil) {
        self.storage = storage
        self.source = source
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
    public var value: Value { storage.value }

    /// Sends each change made after observation starts. See the type's documentation.
    public var signal: Signal<Value, Never> { storage.signal }

    /// Sends the current value, then each change. See the type's documentation.
    public var producer: SignalProducer<Value, Never> { storage.producer }
}

/// A value that can be read and changed from any thread, and watched.
///
/// Each change is stored first (so `value` shows it) and then sent to observers of `signal` and
/// `producer`, serially and in the order the changes were made. When the property is released its
/// `signal` completes.
public final class MutableProperty<Value: Sendable>: Sendable {
    package let storage: PropertyStorage<Value>

    /// A property holding `initial`.
    public init(_ initial: Value) {
        storage = PropertyStorage(initial)
    }

    deinit {
        storage.complete()
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

    /// Sends each change made after observation starts.
    public var signal: Signal<Value, Never> { storage.signal }

    /// Sends the current value, then each change.
    public var producer: SignalProducer<Value, Never> { storage.producer }
}
