/// A hot stream of events: it delivers whatever is sent into its input to the observers attached at
/// that moment. Observing a signal does not start any work.
///
/// Delivery contract:
/// - Events are delivered **serially**: never two at once, never recursively. A send made while the
///   signal is delivering (from another thread, or from inside one of its own observers) is queued,
///   FIFO, and delivered by the thread that is already delivering, after the current event has
///   reached every observer. `send` never blocks on observer code.
/// - Observers are called in the order they were added. An observer receives exactly the events sent
///   after `observe` was called. Once its disposable's `dispose()` has returned, an observer is called
///   for no event other than the one being delivered at that moment, if any (queued events included).
/// - The grammar is `value* (failed | completed | interrupted)?`. After the terminal event the signal
///   releases its observers, delivers nothing more, and an observer added later receives the terminal
///   event at once, on the thread that adds it.
/// - No internal lock is held while an observer runs.
///
/// Lifetime, as in ReactiveSwift:
/// - A signal stays alive while anyone holds it or its input. Its observers do not keep it alive.
/// - When its input is released without a terminal event (nothing can send into it any more), the
///   signal sends `.interrupted`, so its observers are never left waiting.
/// - When nobody holds the signal and its last observer is disposed (or it is released with no
///   observer at all), nobody can ever hear it again: it ends at once, interrupted, without anyone to
///   tell. What ends with it runs then: an operator's signal detaches from its upstream and releases
///   its closures, and cancels whatever it scheduled.
public final class Signal<Value: Sendable, Error: Swift.Error>: Sendable {
    /// The observers and the delivery machinery. A core has exactly one `Signal` handle.
    @usableFromInline package let core: SignalCore<Value, Error>

    @inlinable
    init(core: SignalCore<Value, Error>) {
        self.core = core
    }

    /// A signal with no input: package code sends through `core`. It ends only when that code sends
    /// it a terminal event, or when nobody holds or observes it any more (see the type's
    /// documentation), never because an input was released.
    @inlinable
    package convenience init() {
        self.init(core: SignalCore())
    }

    deinit {
        core.handleReleased()
    }

    /// Creates a signal and the observer that sends into it.
    ///
    /// The signal lives as long as something references it or its input. Sending into `input` is thread
    /// safe; see the type's documentation for ordering. Releasing `input` without a terminal event
    /// interrupts the signal.
    @inlinable
    public static func pipe() -> (output: Signal, input: Observer<Value, Error>) {
        let core = SignalCore<Value, Error>()
        return (Signal(core: core), core.makeInput())
    }

    /// Creates a signal and hands its input observer to `generator`, ReactiveSwift style. The
    /// disposable `generator` returns, if any, is disposed when the signal terminates, before its
    /// observers hear of it, or when the signal ends because nobody holds or observes it any more.
    ///
    /// If `generator` does not keep the input observer (nor hand it to something that does), the
    /// signal is interrupted as soon as `generator` returns.
    public convenience init(_ generator: (Observer<Value, Error>) -> Disposable?) {
        self.init(core: SignalCore())
        if let disposable = generator(core.makeInput()) {
            core.setOnTermination(disposable)
        }
    }

    /// Creates a signal and hands its input observer and its `Lifetime` to `generator`, as
    /// ReactiveSwift's `Signal.init(_:)` does. The lifetime ends when the signal terminates, before its
    /// observers hear of it, or when the signal ends because nobody holds or observes it any more:
    /// register there what must stop with the signal (`lifetime += upstream.observe(observer)`).
    ///
    /// If `generator` does not keep the input observer (nor hand it to something that does), the
    /// signal is interrupted as soon as `generator` returns.
    public convenience init(_ generator: (_ input: Observer<Value, Error>, _ lifetime: Lifetime) -> Void) {
        self.init(core: SignalCore())
        let (lifetime, token) = Lifetime.make()
        core.setOnTermination(token)
        generator(core.makeInput(), lifetime)
    }

    // MARK: Observing

    /// Adds `observer`, which receives every event sent from now on.
    ///
    /// - Returns: a disposable that detaches `observer`. After `dispose()` returns, `observer` is called
    ///   for no further event, queued ones included; only an event it was being given at that moment
    ///   may still reach it. If the signal has already terminated, `observer` receives the terminal
    ///   event at once and the returned disposable is already disposed. Disposing the last observer of
    ///   a signal that nobody holds ends the signal (see the type's documentation).
    @inlinable @discardableResult
    public func observe(_ observer: Observer<Value, Error>) -> Disposable {
        core.observe(observer)
    }

    /// Whether a terminal event has been accepted.
    package var hasTerminated: Bool {
        core.hasTerminated
    }

    /// How many observers are attached (those whose attachment is still queued included); 0 once
    /// terminated. For tests that prove an operator detached from its upstream.
    package var observerCount: Int {
        core.lock.withLock { core.observerCount }
    }
}

extension Signal {
    /// Observes every event with `action`. See `observe(_:)`.
    @inlinable @discardableResult
    public func observe(_ action: @escaping @Sendable (Event<Value, Error>) -> Void) -> Disposable {
        observe(Observer(action))
    }

    /// Observes values only; terminal events are ignored. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeValues(_ action: @escaping @Sendable (Value) -> Void) -> Disposable {
        observe(Observer(value: action))
    }

    /// Observes successful completion only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeCompleted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(
            Observer { event in
                if case .completed = event { action() }
            })
    }

    /// Observes failure only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeFailed(_ action: @escaping @Sendable (Error) -> Void) -> Disposable {
        observe(
            Observer { event in
                if case let .failed(error) = event { action(error) }
            })
    }

    /// Observes interruption only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeInterrupted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(
            Observer { event in
                if case .interrupted = event { action() }
            })
    }

    /// Observes the end of the stream, however it ends (failed, completed or interrupted).
    @inlinable @discardableResult
    public func observeTerminated(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(
            Observer { event in
                if event.isTerminating { action() }
            })
    }
}

extension Signal where Error == Never {
    /// A signal that never sends anything and never ends by itself, as ReactiveSwift's: it lives while
    /// anyone holds or observes it (an operator applied to it, `never.map { ... }`, lives as long as
    /// that operator's signal does), and once nobody can hear it, it is disposed.
    public static var never: Signal {
        // The signal keeps its own input until it ends, so that releasing the handle while an operator
        // observes it does not interrupt it; it ends (and lets go of the input) once unreachable.
        Signal { input, lifetime in
            lifetime.observeEnded { withExtendedLifetime(input) {} }
        }
    }
}
