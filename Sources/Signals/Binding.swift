/// The precedence of `<~`: right-associative, binding tighter than assignment and looser than every
/// other operator, as in ReactiveSwift, so `target <~ signal.map { $0 + 1 }` needs no parentheses.
precedencegroup BindingPrecedence {
    associativity: right
    higherThan: AssignmentPrecedence
}

/// Binds a source of values to a target: `target <~ source`. See `BindingTargetProvider`.
infix operator <~ : BindingPrecedence

/// Something that values can be bound to with `<~`: a `MutableProperty`, an input `Observer`, an
/// `Automaton`, or any `BindingTarget`.
public protocol BindingTargetProvider<Value> {
    /// The type of value the target consumes.
    associatedtype Value

    /// The lifetime that ends every binding to this target, and the action that consumes each value.
    var bindingTarget: BindingTarget<Value> { get }
}

/// A target of `<~`: an action that consumes each value, and the lifetime after which it wants none.
///
/// Every binding to a target ends when the target's `lifetime` ends. The action is called with each
/// value of one binding serially, in the source's order, on the thread that delivers the source's value;
/// values of different bindings to the same target may arrive on different threads at once, so the
/// action must be thread safe. It is never called with a lock of this package held.
public struct BindingTarget<Value>: BindingTargetProvider, Sendable {
    /// When this lifetime ends, every binding to the target ends (a producer source's run is
    /// interrupted, a signal source is no longer observed).
    public let lifetime: Lifetime

    /// Consumes one value of a binding.
    public let action: @Sendable (Value) -> Void

    /// A target that gives each bound value to `action` until `lifetime` ends.
    public init(lifetime: Lifetime, action: @escaping @Sendable (Value) -> Void) {
        self.lifetime = lifetime
        self.action = action
    }

    /// The target itself.
    public var bindingTarget: BindingTarget<Value> { self }
}

extension BindingTarget where Value: Sendable {
    /// A target that hands each bound value to `action` through `scheduler`, until `lifetime` ends:
    /// each value is scheduled as it arrives, so `action` runs where and when the scheduler runs
    /// actions, in the order of the values as long as the scheduler keeps order (all of this package's
    /// do). A value already scheduled when the lifetime ends is still handed over.
    public init(on scheduler: some Scheduler, lifetime: Lifetime, action: @escaping @Sendable (Value) -> Void) {
        self.init(lifetime: lifetime) { value in
            scheduler.schedule { action(value) }
        }
    }
}

extension BindingTargetProvider where Value: Sendable {
    /// Binds `source` to `target`: each value the signal sends from now on is given to the target's
    /// action (for a `MutableProperty`, it becomes its value).
    ///
    /// - The binding ends when the target's lifetime ends (for example when the `MutableProperty` is
    ///   released), when `source` terminates, or when the returned disposable is disposed, whichever
    ///   comes first. Terminal events are not passed on. If the target's lifetime has already ended,
    ///   nothing is bound.
    /// - Values are handed over serially, in the signal's order, on the thread that delivers them, with
    ///   no lock held.
    /// - Neither the binding nor `source` keeps a `MutableProperty` or `Automaton` target alive.
    ///
    /// - Returns: a disposable that ends the binding. It reports `isDisposed` once the binding has
    ///   ended, whichever way.
    @discardableResult
    public static func <~ (target: Self, source: Signal<Value, Never>) -> Disposable {
        bind(SignalProducer(source), to: target.bindingTarget)
    }

    /// Binds `source` to `target`: starts `source` once and gives each value of that run to the
    /// target's action.
    ///
    /// - The binding ends when the target's lifetime ends, when the run terminates, or when the returned
    ///   disposable is disposed, whichever comes first; ending it early **interrupts the run** (its
    ///   `Lifetime` ends). If the target's lifetime has already ended, `source` is not started.
    /// - Values are handed over serially, in the run's order, on the thread that delivers them, with
    ///   no lock held.
    ///
    /// - Returns: a disposable that ends the binding (interrupting the run). It reports `isDisposed` once
    ///   the binding has ended, whichever way.
    @discardableResult
    public static func <~ (target: Self, source: SignalProducer<Value, Never>) -> Disposable {
        bind(source, to: target.bindingTarget)
    }

    /// Binds `source` to `target`: the target takes the property's current value at once, then each
    /// later change (the property's `producer`).
    ///
    /// The binding ends when the target's lifetime ends, when the property's change signal completes
    /// (its source was released), or when the returned disposable is disposed. Changes are handed
    /// over serially, in the order the property took them. See `<~` for a producer.
    @discardableResult
    public static func <~ (target: Self, source: Property<Value>) -> Disposable {
        bind(source.producer, to: target.bindingTarget)
    }

    /// Binds `source` to `target`: the target takes the property's current value at once, then each
    /// later change. The binding does not keep `source` alive; it ends when `source` is released, when
    /// the target's lifetime ends, or when the returned disposable is disposed. See `<~` for a
    /// `Property`.
    @discardableResult
    public static func <~ (target: Self, source: MutableProperty<Value>) -> Disposable {
        bind(source.producer, to: target.bindingTarget)
    }
}

extension BindingTargetProvider {
    /// Binds a source of non-optional values to a target of optional values, as `<~` does for a
    /// signal of the target's own type.
    @discardableResult
    public static func <~ <Wrapped: Sendable>(target: Self, source: Signal<Wrapped, Never>) -> Disposable
    where Value == Wrapped? {
        bind(SignalProducer(source).map { Optional($0) }, to: target.bindingTarget)
    }

    /// Binds a producer of non-optional values to a target of optional values, as `<~` does for a
    /// producer of the target's own type.
    @discardableResult
    public static func <~ <Wrapped: Sendable>(target: Self, source: SignalProducer<Wrapped, Never>) -> Disposable
    where Value == Wrapped? {
        bind(source.map { Optional($0) }, to: target.bindingTarget)
    }

    /// Binds a property of non-optional values to a target of optional values, as `<~` does for a
    /// property of the target's own type.
    @discardableResult
    public static func <~ <Wrapped: Sendable>(target: Self, source: Property<Wrapped>) -> Disposable
    where Value == Wrapped? {
        bind(source.producer.map { Optional($0) }, to: target.bindingTarget)
    }

    /// Binds a mutable property of non-optional values to a target of optional values, as `<~` does
    /// for a property of the target's own type. It does not keep `source` alive.
    @discardableResult
    public static func <~ <Wrapped: Sendable>(target: Self, source: MutableProperty<Wrapped>) -> Disposable
    where Value == Wrapped? {
        bind(source.producer.map { Optional($0) }, to: target.bindingTarget)
    }
}

/// Starts `source` and gives its values to `target.action` until the run terminates, `target.lifetime`
/// ends, or the returned disposable is disposed.
private func bind<Value>(_ source: SignalProducer<Value, Never>, to target: BindingTarget<Value>) -> Disposable {
    source.startWithSignal { signal, interrupter in
        // Registered before the start handler runs: if the lifetime has already ended, the run is
        // interrupted here and never starts.
        let registration = target.lifetime.observeEnded { interrupter.dispose() }
        let action = target.action
        signal.observe { event in
            switch event {
            case let .value(value):
                action(value)
            case .completed, .interrupted:
                // The binding is over: leave the target's lifetime, and mark the interrupter disposed
                // (the run has ended, so disposing it sends nothing).
                registration?.dispose()
                interrupter.dispose()
            }
        }
        return interrupter
    }
}

extension MutableProperty: BindingTargetProvider {
    /// The property as a binding target: each bound value is set as the property's value, and bindings
    /// end when the property is released (its `lifetime` ends). The target holds the property's
    /// storage, not the property, so a binding never keeps the property alive.
    public var bindingTarget: BindingTarget<Value> {
        BindingTarget(lifetime: lifetime) { [storage] value in storage.set(value) }
    }
}

extension Observer: BindingTargetProvider where Error == Never {
    /// The observer as a binding target: each bound value is sent into it with `send(value:)`; terminal
    /// events are not. An observer has no lifetime of its own: a binding to it ends only when its source
    /// terminates or its disposable is disposed.
    public var bindingTarget: BindingTarget<Value> {
        // A lifetime that lasts as long as a binding holds the action: the action keeps its token.
        let (lifetime, token) = Lifetime.make()
        return BindingTarget(lifetime: lifetime) { [self] value in
            withExtendedLifetime(token) { self.send(value: value) }
        }
    }
}
