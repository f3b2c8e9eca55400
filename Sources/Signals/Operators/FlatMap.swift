// MARK: Signal

extension Signal {
    /// Maps each value to an inner producer, starts it, and forwards the inner producers' values
    /// according to `strategy`.
    ///
    /// - `.merge`: every inner runs until it ends; their values interleave as they arrive.
    /// - `.latest`: a new value disposes the running inner **before** the next one starts; every later
    ///   event of a replaced inner, a late terminal event included, is ignored.
    /// - `.concat`: inners run one at a time, in the order of the values; each starts when the previous
    ///   one has completed, and the others wait.
    ///
    /// Termination: the result completes once this signal and every inner that was started or queued
    /// have ended (under `.latest`, only the current inner counts). An inner ends when it completes or
    /// is interrupted: an interrupted inner sends nothing to the result and counts as completed (under
    /// `.concat` the next queued inner then starts), as in ReactiveSwift. A failure of this signal or of
    /// a counted inner fails the result at once; an interruption of this signal interrupts it. Before
    /// the terminal failure or interruption is sent, the result stops observing this signal, disposes
    /// every running inner (their lifetimes end) and drops the queued ones.
    ///
    /// Threads: `transform` is called on the thread that delivers the value, serially. An inner starts
    /// on the thread that delivers its value, or, under `.concat`, on the thread where the previous inner
    /// completed; inners may send from any thread. The result is a `Signal`, so its events are delivered
    /// serially. No lock is held while `transform` runs, an inner starts, or an event is delivered, and
    /// synchronous inners run in constant stack, however many complete in a row.
    public func flatMap<Inner>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> SignalProducer<Inner, Error>
    ) -> Signal<Inner, Error> {
        let storage = FlattenStorage(strategy: strategy, transform: transform, convertError: { $0 })
        storage.attachOuter(observe(storage.outerObserver))
        return Signal<Inner, Error>(core: storage.output)
    }

    /// Maps each value to an inner producer that cannot fail, and flattens them with `strategy`.
    ///
    /// Behaves exactly as `flatMap(_:_:)` with inners of the same error type. When a call fits both
    /// (the outer error type is `Never` too, or the inner's error type is left to inference), the
    /// same-error overload is chosen.
    // Disfavored so that those calls are not ambiguous.
    @_disfavoredOverload
    public func flatMap<Inner>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> SignalProducer<Inner, Never>
    ) -> Signal<Inner, Error> {
        let storage = FlattenStorage<Value, Inner, Never, Error>(
            strategy: strategy,
            transform: transform,
            convertError: unreachable
        )
        storage.attachOuter(observe(storage.outerObserver))
        return Signal<Inner, Error>(core: storage.output)
    }

    /// Starts each producer this signal sends and forwards their values according to `strategy`.
    ///
    /// The same as `flatMap(strategy) { $0 }`; see `flatMap(_:_:)`.
    public func flatten<Inner>(_ strategy: FlattenStrategy) -> Signal<Inner, Error>
    where Value == SignalProducer<Inner, Error> {
        flatMap(strategy) { $0 }
    }
}

// MARK: SignalProducer

extension SignalProducer {
    /// Maps each value to an inner producer, starts it, and forwards the inner producers' values
    /// according to `strategy`.
    ///
    /// Each start of the result starts this producer once; strategies, termination and threads are as
    /// in `Signal.flatMap(_:_:)`. Disposing the result's run interrupts it, interrupts the run of this
    /// producer and of every running inner (their lifetimes end) and drops the queued inners. The run
    /// also ends them when it ends by itself, by failure or interruption; when it completes, they have
    /// all ended already.
    public func flatMap<Inner>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> SignalProducer<Inner, Error>
    ) -> SignalProducer<Inner, Error> {
        SignalProducer<Inner, Error> { observer, lifetime in
            let storage = FlattenStorage(strategy: strategy, transform: transform, convertError: { $0 })
            self.run(storage, into: observer, lifetime: lifetime)
        }
    }

    /// Maps each value to an inner producer that cannot fail, and flattens them with `strategy`.
    ///
    /// Behaves exactly as `flatMap(_:_:)` with inners of the same error type. When a call fits both
    /// (the outer error type is `Never` too, or the inner's error type is left to inference), the
    /// same-error overload is chosen.
    // Disfavored so that those calls are not ambiguous.
    @_disfavoredOverload
    public func flatMap<Inner>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> SignalProducer<Inner, Never>
    ) -> SignalProducer<Inner, Error> {
        SignalProducer<Inner, Error> { observer, lifetime in
            let storage = FlattenStorage<Value, Inner, Never, Error>(
                strategy: strategy,
                transform: transform,
                convertError: unreachable
            )
            self.run(storage, into: observer, lifetime: lifetime)
        }
    }

    /// Starts each producer this producer sends and forwards their values according to `strategy`.
    ///
    /// The same as `flatMap(strategy) { $0 }`; see `flatMap(_:_:)`.
    public func flatten<Inner>(_ strategy: FlattenStrategy) -> SignalProducer<Inner, Error>
    where Value == SignalProducer<Inner, Error> {
        flatMap(strategy) { $0 }
    }

    /// Runs `storage` with this producer as its outer stream, for one run of a flattened producer.
    private func run<Inner, InnerError>(
        _ storage: FlattenStorage<Value, Inner, InnerError, Error>,
        into observer: Observer<Inner, Error>,
        lifetime: Lifetime
    ) {
        // The handle is released at once: when the run ends and this observation is disposed, the
        // result ends, which interrupts everything still running.
        lifetime += Signal(core: storage.output).observe(observer)
        startWithSignal { signal, interrupter in
            storage.attachOuter(interrupter)
            signal.observe(storage.outerObserver)
        }
    }
}

// MARK: Storage

/// The conversion of an error that cannot exist, for inners whose error type is `Never`.
@Sendable
private func unreachable<Error: Swift.Error>(_ never: Never) -> Error {}

/// The shared state of one flattening and the side effects its state machine asks for.
///
/// All bookkeeping lives in `FlattenStateMachine`, under a lock; no user closure (the transform, an
/// inner's start, an observer) runs while the lock is held, and nothing the machine lets go of (an
/// inner producer, a disposable) is released under it. Values of inners go to `output` through
/// `Signal.send(_:if:)`, so that checking that their inner is still running and queueing them happen
/// atomically: a value checked before an inner was replaced or the result ended is delivered before
/// anything that follows, and a value checked after is dropped.
final class FlattenStorage<Value: Sendable, Inner: Sendable, InnerError: Swift.Error, Error: Swift.Error>: Sendable {
    typealias Producer = SignalProducer<Inner, InnerError>

    private let state: Locked<FlattenStateMachine<Producer>>
    private let transform: @Sendable (Value) -> Producer
    private let convertError: @Sendable (InnerError) -> Error
    /// The result. Its one `Signal` handle is made by `Signal.flatMap`; a producer run observes the core
    /// directly. When the result ends, however it ends (nobody holding or observing it included),
    /// everything still running is interrupted.
    let output: SignalCore<Inner, Error>

    init(
        strategy: FlattenStrategy,
        transform: @escaping @Sendable (Value) -> Producer,
        convertError: @escaping @Sendable (InnerError) -> Error
    ) {
        state = Locked(FlattenStateMachine(strategy: strategy))
        self.transform = transform
        self.convertError = convertError
        output = SignalCore()
        output.setOnTermination(AnyDisposable { [self] in self.interrupt() })
    }

    /// The observer of the outer stream.
    var outerObserver: Observer<Value, Error> {
        Observer { [self] event in self.outerEvent(event) }
    }

    /// Records what ends the outer stream; disposes it at once if the result has already ended.
    func attachOuter(_ disposable: Disposable) {
        if !state.withCriticalRegion({ $0.attachOuter(disposable) }) {
            disposable.dispose()
        }
    }

    /// Interrupts the result, the outer stream and every inner, unless the result has already ended.
    func interrupt() {
        terminate(with: .interrupted) { $0.terminate() }
    }

    // MARK: Events

    private func outerEvent(_ event: Event<Value, Error>) {
        switch event {
        case let .value(value):
            if state.withCriticalRegion({ $0.isTerminated }) { return }
            let producer = transform(value)
            switch state.withCriticalRegion({ $0.outerValue(producer) }) {
            case .none:
                break
            case .startInners:
                startInners()
            case let .replace(previous, id, dropped):
                withExtendedLifetime(dropped) {}  // released with no lock held
                previous?.dispose()
                if state.withCriticalRegion({ $0.enqueueLatest(id: id, producer: producer) }) {
                    startInners()
                }
            }
        case .completed:
            let (mustComplete, outer) = state.withCriticalRegion { $0.outerCompleted() }
            withExtendedLifetime(outer) {}  // released with no lock held
            if mustComplete {
                output.send(.completed)
            }
        case let .failed(error):
            terminate(with: .failed(error)) { $0.terminate() }
        case .interrupted:
            terminate(with: .interrupted) { $0.terminate() }
        }
    }

    private func innerEvent(_ event: Event<Inner, InnerError>, id: UInt64) {
        switch event {
        case let .value(value):
            output.send(.value(value), if: { state.withCriticalRegion { $0.isRunning(id) } })
        case .completed, .interrupted:
            // An interrupted inner ends like a completed one: nothing is sent for it (ReactiveSwift's
            // FlattenSpec, "should drop interrupted from an inner producer").
            let (action, interrupter) = state.withCriticalRegion { $0.innerEnded(id) }
            withExtendedLifetime(interrupter) {}  // released with no lock held
            switch action {
            case .none:
                break
            case .startInners:
                startInners()
            case .complete:
                output.send(.completed)
            }
        case let .failed(error):
            terminate(with: .failed(convertError(error))) { $0.innerFailed(id) }
        }
    }

    /// Ends the result with `event` if `decide` (run under the lock) says so: disposes what it returns,
    /// then sends `event`, then releases the inners that were waiting.
    private func terminate(
        with event: Event<Inner, Error>,
        _ decide: (inout FlattenStateMachine<Producer>) -> FlattenStateMachine<Producer>.Termination?
    ) {
        guard let termination = state.withCriticalRegion(decide) else { return }
        for disposable in termination.disposables {
            disposable.dispose()
        }
        output.send(event)
        withExtendedLifetime(termination) {}  // released with no lock held
    }

    // MARK: Starting inners

    /// The start loop, run by the thread that holds the starter role, until there is nothing it may start.
    private func startInners() {
        while let next = state.withCriticalRegion({ $0.nextInnerToStart() }) {
            start(next.producer, id: next.id)
        }
    }

    private func start(_ producer: Producer, id: UInt64) {
        producer.startWithSignal { signal, interrupter in
            signal.observe(Observer { [self] event in self.innerEvent(event, id: id) })
            if !state.withCriticalRegion({ $0.register(id, interrupter: interrupter) }) {
                // Replaced or ended while starting: the start handler will not run.
                interrupter.dispose()
            }
        }
    }
}
