extension Signal {
    /// Observes every event on the **main actor**, with a closure the compiler checks as `@MainActor`,
    /// so it may update main-actor state (a view model) directly:
    /// `signal.observeOnMainActor { @MainActor event in model.apply(event) }`.
    ///
    /// - Events are queued as they are sent, from any thread, and delivered on the main actor **in the
    ///   order they were sent**: one main-actor task at a time drains the queue (a task is started when
    ///   the queue goes from empty to non-empty), never one unordered task per event.
    /// - Delivery is always asynchronous, even when the event is sent on the main actor: `action` runs
    ///   after the current main-actor job, so a send from inside `action` is delivered after it.
    /// - Disposing the returned disposable detaches from the signal and drops the events still queued:
    ///   once `dispose()` has returned, `action` is called for no further event (unless it is running at
    ///   that moment). The terminal event is delivered last; `action` is then released.
    @discardableResult
    public func observeOnMainActor(_ action: @escaping @MainActor @Sendable (Event<Value, Error>) -> Void) -> Disposable
    {
        let delivery = MainActorDelivery(action)
        let observation = observe(Observer { event in delivery.enqueue(event) })
        return AnyDisposable {
            observation.dispose()
            delivery.cancel()
        }
    }

    /// Observes values on the main actor with a `@MainActor` closure; terminal events are ignored. See
    /// `observeOnMainActor(_:)` for order and disposal.
    @discardableResult
    public func observeValuesOnMainActor(_ action: @escaping @MainActor @Sendable (Value) -> Void) -> Disposable {
        observeOnMainActor { event in
            if case let .value(value) = event { action(value) }
        }
    }
}

extension SignalProducer {
    /// Starts a run whose events are delivered on the main actor, in order, to a `@MainActor` closure.
    /// See `Signal.observeOnMainActor(_:)`. Disposing the returned disposable interrupts the run and
    /// drops the events still queued (the interruption itself is not delivered).
    @discardableResult
    public func startOnMainActor(_ action: @escaping @MainActor @Sendable (Event<Value, Error>) -> Void) -> Disposable {
        let delivery = MainActorDelivery(action)
        let run = start(Observer { event in delivery.enqueue(event) })
        return AnyDisposable {
            delivery.cancel()
            run.dispose()
        }
    }

    /// Starts a run whose values are delivered on the main actor, in order, to a `@MainActor` closure.
    /// See `startOnMainActor(_:)`.
    @discardableResult
    public func startWithValuesOnMainActor(_ action: @escaping @MainActor @Sendable (Value) -> Void) -> Disposable {
        startOnMainActor { event in
            if case let .value(value) = event { action(value) }
        }
    }
}

/// The ordered queue between an observer, called on any thread, and a `@MainActor` closure.
private final class MainActorDelivery<Value: Sendable, Error: Swift.Error>: Sendable {
    private struct State: Sendable {
        var queue = FIFOQueue<Event<Value, Error>>()
        /// Whether a main-actor task is draining, or about to drain, the queue.
        var isDraining = false
        var isCancelled = false
        var action: (@MainActor @Sendable (Event<Value, Error>) -> Void)?
    }

    private let state: Locked<State>

    init(_ action: @escaping @MainActor @Sendable (Event<Value, Error>) -> Void) {
        var initial = State()
        initial.action = action
        state = Locked(initial)
    }

    /// Called serially by the signal's delivery.
    func enqueue(_ event: Event<Value, Error>) {
        let mustStart = state.withCriticalRegion { state -> Bool in
            guard !state.isCancelled else { return false }
            state.queue.append(event)
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if mustStart {
            Task { @MainActor in self.drain() }
        }
    }

    func cancel() {
        let dropped = state.withCriticalRegion {
            state -> (FIFOQueue<Event<Value, Error>>, (@MainActor @Sendable (Event<Value, Error>) -> Void)?) in
            state.isCancelled = true
            defer {
                state.queue = FIFOQueue()
                state.action = nil
            }
            return (state.queue, state.action)
        }
        withExtendedLifetime(dropped) {}  // released with no lock held
    }

    @MainActor
    private func drain() {
        while let (event, action) = state.withCriticalRegion({
            state -> (Event<Value, Error>, @MainActor @Sendable (Event<Value, Error>) -> Void)? in
            guard !state.isCancelled, let action = state.action, let event = state.queue.removeFirst() else {
                state.isDraining = false
                return nil
            }
            if event.isTerminating { state.action = nil }
            return (event, action)
        }) {
            action(event)
        }
    }
}
