/// A cold stream: a recipe for work that runs anew, with its own observer and `Lifetime`, each time it
/// is started.
///
/// Starting returns a `Disposable`; disposing it interrupts that run: its observers receive
/// `.interrupted` (unless the run already ended) and its `Lifetime` ends, exactly once. The lifetime
/// also ends when the run completes or fails. Events of one run are delivered serially, with the
/// same queueing rules as `Signal`.
public struct SignalProducer<Value: Sendable, Error: Swift.Error>: Sendable {
    /// The work a producer runs on each start: send events into the observer; register cleanup on the
    /// lifetime. It runs synchronously on the thread that calls `start`.
    public typealias StartHandler = @Sendable (Observer<Value, Error>, Lifetime) -> Void

    @usableFromInline let startHandler: StartHandler
    /// True only for `SignalProducer.empty`, so that package code can skip starting it.
    @usableFromInline let isKnownEmpty: Bool
    /// Package metadata carried by this producer value, not by the producers derived from it: the
    /// automaton's effect key or cancellation, and the value of a `SignalProducer(value:)`. Boxed, so
    /// that a producer stays a closure, a flag and one optional reference, four words, passed in
    /// registers: an inline existential made every copy of an effect-free automaton's
    /// `(State, SignalProducer)?` go through value witnesses (W5 +45% instructions, callgrind at
    /// `57d6a37`), and a fifth word (a second reference, for the value) cost W2 54 and W4 185
    /// instructions per input.
    @usableFromInline let attachment: ProducerAttachment<Value>?

    /// A producer that runs `startHandler` on each start.
    ///
    /// The handler may send synchronously (before `start` returns) or later from any thread. Sends
    /// after a terminal event, or after the run was disposed, are ignored.
    @inlinable
    public init(_ startHandler: @escaping StartHandler) {
        self.startHandler = startHandler
        self.isKnownEmpty = false
        self.attachment = nil
    }

    @usableFromInline
    init(empty: Void) {
        self.startHandler = { observer, _ in observer.sendCompleted() }
        self.isKnownEmpty = true
        self.attachment = nil
    }

    /// This producer, carrying `directive` for package code (the automaton reads its effect keys
    /// there). Operators applied afterwards make producers without it.
    @inlinable
    package func attaching(_ directive: AnyObject & Sendable) -> SignalProducer {
        let attached: ProducerAttachment<Value> =
            if let value = knownValue {
                KnownValueAttachment(directive: directive, value: value)
            } else {
                ProducerAttachment(directive: directive)
            }
        return SignalProducer(startHandler: startHandler, isKnownEmpty: isKnownEmpty, attachment: attached)
    }

    @inlinable
    init(startHandler: @escaping StartHandler, isKnownEmpty: Bool, attachment: ProducerAttachment<Value>?) {
        self.startHandler = startHandler
        self.isKnownEmpty = isKnownEmpty
        self.attachment = attachment
    }

    /// The directive attached with `attaching(_:)`, if any.
    @inlinable
    package var directive: (AnyObject & Sendable)? { attachment?.directive }

    /// Whether a directive is attached; cheaper than reading it.
    @inlinable
    package var hasDirective: Bool { attachment?.directive != nil }

    /// The value this producer sends before it completes, if it is a `SignalProducer(value:)` (with a
    /// directive attached or not): starting it sends that value and completes, and runs nothing else
    /// (no user code), so package code may take the value instead of starting it (the automaton's
    /// engine does). `nil` for any other producer, even one that behaves the same.
    @inlinable
    package var knownValue: Value? { attachment?.knownValue }

    /// Whether this is `SignalProducer.empty`, which completes at once without a value, so that starting
    /// it can be skipped. A producer built otherwise reports `false` even if it behaves the same.
    @inlinable
    package var isEmpty: Bool { isKnownEmpty }

    /// A producer that forwards the events `signal` sends while it is started. Disposing the run
    /// detaches it from `signal`.
    public init(_ signal: Signal<Value, Error>) {
        self.init { observer, lifetime in
            lifetime += signal.observe(observer)
        }
    }

    /// A producer that sends `value` and completes.
    @inlinable
    public init(value: Value) {
        // The handler captures the attachment, which holds the value, and nothing else: a closure that
        // captures one reference is that reference, so the producer costs one allocation, not two.
        let attachment = KnownValueAttachment(directive: nil, value: value)
        self.init(
            startHandler: { [attachment] observer, _ in
                observer.send(value: attachment.value)
                observer.sendCompleted()
            }, isKnownEmpty: false, attachment: attachment)
    }

    /// A producer that sends each of `values` in order and completes. It stops early if disposed.
    public init<Values: Sequence & Sendable>(values: Values) where Values.Element == Value {
        self.init { observer, lifetime in
            for value in values {
                if lifetime.hasEnded { return }
                observer.send(value: value)
            }
            observer.sendCompleted()
        }
    }

    /// A producer that sends `first` and each of `rest` in order, then completes.
    public init(values first: Value, _ rest: Value...) {
        self.init(values: [first] + rest)
    }

    /// A producer that fails at once with `error`.
    public init(error: Error) {
        self.init { observer, _ in observer.send(error: error) }
    }

    /// A producer that completes at once without sending a value.
    public static var empty: SignalProducer {
        SignalProducer(empty: ())
    }

    /// A producer that never sends anything and never ends by itself: a run lives until it is
    /// disposed, as every run does whose start handler keeps nothing (see `start(_:)`). A run whose
    /// disposable is discarded is interrupted at once, since nothing can end it later.
    public static var never: SignalProducer {
        SignalProducer { _, _ in }
    }

    // MARK: Starting

    /// Starts a run, creating its `Signal`, and passes the signal and the run's interrupting disposable
    /// to `setup` before the start handler runs, so that observers attached in `setup` see every event.
    ///
    /// The run lives as ReactiveSwift's does: until a terminal event is sent into its observer, or
    /// until it is interrupted through `interrupter`. `interrupter` keeps the run's input observer, so
    /// while anyone holds it the run goes on even if the start handler kept nothing; once nobody holds
    /// the interrupter nor the input observer, nothing can send into the run any more and it is
    /// interrupted (its `Lifetime` ends, disposing what the start handler added to it).
    ///
    /// Releasing `interrupter` is not disposing it. Disposing it interrupts the run, whoever holds the
    /// input observer. Releasing it only lets go of its reference to the input observer, which, as
    /// ReactiveSwift's (`interruptsOnDeinit`), interrupts the run when its last reference goes, unless
    /// a terminal event was sent into it: while the start handler, or whoever it handed its observer
    /// to, still holds that observer, the run goes on and ends as that holder decides.
    ///
    /// The run's signal follows `Signal`'s lifetime rules: the signal is kept until the start handler
    /// returns; then, if nobody else keeps it and nothing observes it, the run ends at once (nobody can
    /// ever hear it). Likewise, the run ends when the last observer of a signal nobody keeps is
    /// disposed.
    ///
    /// - Returns: what `setup` returns.
    @discardableResult
    public func startWithSignal<Result>(
        _ setup: (_ signal: Signal<Value, Error>, _ interrupter: Disposable) throws -> Result
    ) rethrows -> Result {
        let (lifetime, token) = Lifetime.make()
        let core = SignalCore<Value, Error>()
        core.setOnTermination(token)
        let input = core.makeInput()
        // The interrupter keeps the input, as ReactiveSwift's interrupt handle does: the run lives while
        // its disposable is held, whatever the start handler keeps. Disposing it releases the input.
        let interrupter = AnyDisposable { input.sendInterrupted() }
        // The handle is released once the start handler has returned, unless `setup` kept it.
        let signal = Signal(core: core)
        let result = try setup(signal, interrupter)
        if !lifetime.hasEnded {
            callStartHandler(startHandler, input, lifetime)
        }
        withExtendedLifetime(signal) {}
        return result
    }

    /// Starts a run whose events go to `observer`.
    ///
    /// The run goes on until it sends a terminal event or the returned disposable is disposed, as in
    /// ReactiveSwift: the disposable keeps the run's input, so a start handler need not keep its
    /// observer. If the disposable is released without being disposed (a discarded result) and the
    /// start handler did not keep its observer either, nothing can send into the run any more and it is
    /// interrupted then. While that observer is held, releasing the disposable ends nothing (see
    /// `startWithSignal(_:)`).
    ///
    /// - Returns: a disposable that interrupts the run.
    @discardableResult
    public func start(_ observer: Observer<Value, Error> = Observer { _ in }) -> Disposable {
        startWithSignal { signal, interrupter in
            signal.observe(observer)
            return interrupter
        }
    }

    /// Starts a run whose events go to `action`. See `start(_:)`.
    @discardableResult
    public func start(_ action: @escaping @Sendable (Event<Value, Error>) -> Void) -> Disposable {
        start(Observer(action))
    }

    /// Starts a run and observes its values only. See `start(_:)`.
    @discardableResult
    public func startWithValues(_ action: @escaping @Sendable (Value) -> Void) -> Disposable {
        start(Observer(value: action))
    }

    /// Starts a run and observes its successful completion only. See `start(_:)`.
    @discardableResult
    public func startWithCompleted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        start(Observer(completed: action))
    }

    /// Starts a run and observes its failure only. See `start(_:)`.
    @discardableResult
    public func startWithFailed(_ action: @escaping @Sendable (Error) -> Void) -> Disposable {
        start(Observer(failed: action))
    }

    /// Starts a run and observes its interruption only. See `start(_:)`.
    @discardableResult
    public func startWithInterrupted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        start(Observer(interrupted: action))
    }

    /// Runs the start handler directly with `observer` and `lifetime`, without the `Signal` that
    /// `start` creates: for package code that serializes and guards events itself (the automaton's
    /// engine). The caller owns `lifetime` and must end it when the run terminates.
    @inlinable
    package func run(_ observer: Observer<Value, Error>, lifetime: Lifetime) {
        callStartHandler(startHandler, observer, lifetime)
    }

    /// `run(_:lifetime:)` for the lifetime of `storage`, made where the handler is called: a
    /// `Lifetime` made by the caller from an object it only borrows costs a retain and a release (the
    /// automaton's effect record is such an object: 30 instructions per effect, callgrind W3).
    @inlinable
    package func run(_ observer: Observer<Value, Error>, lifetimeOf storage: _LifetimeStorage) {
        callStartHandler(startHandler, observer, lifetimeOf: storage)
    }

    /// A producer whose runs start this producer and pass its signal through `transform`.
    ///
    /// This is how signal operators become producer operators: disposing the new run disposes the
    /// run of this producer.
    public func lift<NewValue, NewError>(
        _ transform: @escaping @Sendable (Signal<Value, Error>) -> Signal<NewValue, NewError>
    ) -> SignalProducer<NewValue, NewError> {
        SignalProducer<NewValue, NewError> { observer, lifetime in
            self.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += transform(signal).observe(observer)
            }
        }
    }
}

extension SignalProducer where Error == Never {
    /// A producer that runs `operation` in a new `Task` on each start, sends its result and completes.
    /// Disposing the run cancels the task; a result that arrives after that is ignored.
    public init(operation: @escaping @Sendable () async -> Value) {
        self.init { observer, lifetime in
            let task = Task {
                let value = await operation()
                observer.send(value: value)
                observer.sendCompleted()
            }
            lifetime.observeEnded { task.cancel() }
        }
    }

    /// A producer that runs `operation` in a new `Task` on each start and sends each value it hands to
    /// `send`, completing when it returns. Disposing the run cancels the task.
    public init(operation: @escaping @Sendable (_ send: @escaping @Sendable (Value) -> Void) async -> Void) {
        self.init { observer, lifetime in
            let task = Task {
                await operation { observer.send(value: $0) }
                observer.sendCompleted()
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}

extension SignalProducer where Error == any Swift.Error {
    /// A producer that runs `operation` in a new `Task` on each start, sends its result and completes,
    /// or fails with the error it throws. Disposing the run cancels the task; a result that arrives
    /// after that is ignored.
    public init(operation: @escaping @Sendable () async throws -> Value) {
        self.init { observer, lifetime in
            let task = Task {
                do {
                    let value = try await operation()
                    observer.send(value: value)
                    observer.sendCompleted()
                } catch {
                    observer.send(error: error)
                }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }

    /// A producer that iterates `sequence` in a new `Task` on each start: it sends each element,
    /// completes when the sequence ends, and fails if iteration throws. Disposing the run cancels the
    /// task.
    public init<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) where Sequence.Element == Value {
        self.init { observer, lifetime in
            let task = Task {
                do {
                    for try await value in sequence {
                        observer.send(value: value)
                    }
                    observer.sendCompleted()
                } catch {
                    observer.send(error: error)
                }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}

/// Calls a producer's start handler. Every start goes through here, never inlined, to work around a
/// Swift 6.3 optimizer defect.
///
/// The defect: when a function calls a closure that it loaded from a struct passed to it by address
/// (as `startWithSignal` calls `self.startHandler`), the side effects the compiler computes for that
/// function, and serializes for other modules, say the struct's contents are only read and never
/// escape. A caller in release builds then believes that starting a producer cannot change the objects
/// its start handler captured, and reads them from before the start: a counter the handler increments
/// reads 0 afterwards, a box the handler fills reads `nil`. A closure passed as an argument and called
/// is modelled correctly (its captures may be read and written), hence this function.
/// `SignalProducerTests` and `SignalOwnershipTests` fail in release builds without it.
@usableFromInline @inline(never)
func callStartHandler<Value, Error>(
    _ handler: SignalProducer<Value, Error>.StartHandler,
    _ observer: Observer<Value, Error>,
    _ lifetime: Lifetime
) {
    handler(observer, lifetime)
}

/// `callStartHandler(_:_:_:)` with the lifetime of `storage`.
@usableFromInline @inline(never)
func callStartHandler<Value, Error>(
    _ handler: SignalProducer<Value, Error>.StartHandler,
    _ observer: Observer<Value, Error>,
    lifetimeOf storage: _LifetimeStorage
) {
    handler(observer, Lifetime(storage))
}

/// What package code attaches to a producer value (see `SignalProducer.attachment`): a directive, the
/// known value of a `SignalProducer(value:)` (then a `KnownValueAttachment`), or both.
///
/// The value is in a subclass, not in an optional field: this class's `deinit` is generic code that
/// nothing specializes, and destroying a `Value?` made it look up the metadata of `Optional<Value>` at
/// every release, about 300 instructions per value producer (callgrind, "chain Automaton, value
/// effects": 1,526 instructions per step before). Destroying a `Value` needs only the metadata that
/// `self` carries.
@usableFromInline
class ProducerAttachment<Value: Sendable>: @unchecked Sendable {
    // Safe: every field is a constant set by `init`, and `KnownValueAttachment` adds only a constant.
    /// The automaton's effect directive (its key, its cancellation), if any.
    @usableFromInline let directive: (AnyObject & Sendable)?
    /// True exactly for a `KnownValueAttachment`: only its `init` sets it. `knownValue` relies on it to
    /// downcast without a checked cast (which looks up metadata); `KnownValueEffectTests` ("a producer
    /// knows its value only as SignalProducer(value:), keyed or not") fails if a plain attachment
    /// claims a value, or a value's attachment loses it.
    @usableFromInline let hasKnownValue: Bool

    @inlinable
    init(directive: (AnyObject & Sendable)?) {
        self.directive = directive
        self.hasKnownValue = false
    }

    @inlinable
    init(directive: (AnyObject & Sendable)?, hasKnownValue: Bool) {
        self.directive = directive
        self.hasKnownValue = hasKnownValue
        assert(!hasKnownValue || self is KnownValueAttachment<Value>, "Only a KnownValueAttachment has a value")
    }

    /// The value a `SignalProducer(value:)` sends before it completes; `nil` for any other producer.
    @inlinable
    final var knownValue: Value? {
        hasKnownValue ? unsafeDowncast(self, to: KnownValueAttachment<Value>.self).value : nil
    }
}

/// The attachment of a `SignalProducer(value:)`: its value, and the directive attached to it, if any.
@usableFromInline
final class KnownValueAttachment<Value: Sendable>: ProducerAttachment<Value>, @unchecked Sendable {
    // Safe: `value` is a constant set by `init` (and so are the superclass's fields).
    @usableFromInline let value: Value

    @inlinable
    init(directive: (AnyObject & Sendable)?, value: Value) {
        self.value = value
        super.init(directive: directive, hasKnownValue: true)
    }
}
