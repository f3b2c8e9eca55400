import Signals
import Testing

// The behaviours of ReactiveSwift's SignalProducerSpec, written against our API. Each test names the
// spec case it follows.

/// A producer whose runs log "start", each event's cleanup as "ended", and keep their observer.
private final class LoggingProducer: Sendable {
    let log = TestLog<String>()
    private let input = LockedTestValue<Observer<Int, TestError>?>(nil)

    var producer: SignalProducer<Int, TestError> {
        SignalProducer { [log, input] observer, lifetime in
            log.append("start")
            input.withValue { $0 = observer }
            lifetime.observeEnded { log.append("ended") }
        }
    }

    /// The observer of the latest run.
    var observer: Observer<Int, TestError> { input.value ?? Observer { _ in } }
}

@Suite("Conformance: SignalProducerSpec")
struct SignalProducerConformanceTests {
    // MARK: Initializers

    @Test("SignalProducerSpec: init(value:) should immediately send the value then complete")
    func initValue() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(value: 1).start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("SignalProducerSpec: init(error:) should immediately send the error")
    func initError() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: .boom).start(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
    }

    @Test("SignalProducerSpec: init(values:) should immediately send the sequence then complete")
    func initValues() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: [1, 2, 3]).start(recorder.observer)
        SignalProducer<Int, TestError>(values: 4, 5).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed, .value(4), .value(5), .completed])
    }

    @Test("SignalProducerSpec: init(_ signal:) should emit the signal's events while started")
    func initSignal() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        input.send(value: 0)
        SignalProducer(signal).start(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("SignalProducerSpec: empty should immediately complete")
    func empty() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>.empty.start(recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test("SignalProducerSpec: never should not send any events until disposed, then be interrupted")
    func never() {
        let recorder = EventRecorder<Int, TestError>()
        let disposable = SignalProducer<Int, TestError>.never.start(recorder.observer)
        #expect(recorder.events == [])
        disposable.dispose()
        #expect(recorder.events == [.interrupted])
    }

    @Test("SignalProducerSpec: the start handler should run anew, once, on each start")
    func coldness() {
        let starts = LockedTestValue(0)
        let producer = SignalProducer<Int, Never> { observer, _ in
            let run = starts.withValue {
                $0 += 1; return $0
            }
            observer.send(value: run)
            observer.sendCompleted()
        }
        let recorder = EventRecorder<Int, Never>()
        #expect(starts.value == 0)
        producer.start(recorder.observer)
        producer.start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed, .value(2), .completed])
    }

    // MARK: startWithSignal

    @Test("SignalProducerSpec: startWithSignal should invoke the closure before any effects or events")
    func startWithSignalBeforeEffects() {
        let log = TestLog<String>()
        let producer = SignalProducer<Int, Never> { observer, _ in
            log.append("handler")
            observer.send(value: 1)
        }
        producer.startWithSignal { signal, _ in
            log.append("setup")
            signal.observeValues { log.append("value \($0)") }
        }
        #expect(log.entries == ["setup", "handler", "value 1"])
    }

    @Test("SignalProducerSpec: startWithSignal should send interrupted and dispose of added disposables if disposed")
    func startWithSignalDisposal() {
        let producer = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        let interrupter = producer.producer.startWithSignal { signal, interrupter in
            signal.observe(recorder.observer)
            return interrupter
        }
        interrupter.dispose()
        producer.observer.send(value: 1)
        #expect(recorder.events == [.interrupted])
        #expect(producer.log.entries == ["start", "ended"])
    }

    @Test("SignalProducerSpec: startWithSignal should not trigger effects if disposed before the closure returns")
    func startWithSignalDisposedInSetup() {
        let producer = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        producer.producer.startWithSignal { signal, interrupter in
            signal.observe(recorder.observer)
            interrupter.dispose()
        }
        #expect(recorder.events == [.interrupted])
        #expect(producer.log.entries == [])
    }

    /// The spec's two startWithSignal cases "should dispose of added disposables upon completion / upon
    /// error": the start handler adds a disposable to its lifetime and hands its observer out, the run is
    /// started with `start()`, whose interrupt handle nobody keeps, and the observer is sent `terminal`.
    /// Releasing the handle is not disposing it: it only lets go of its reference to the input observer,
    /// which the test still holds, so the run goes on until `terminal`, which disposes the added
    /// disposable. We also check that the handle was freed, and that a value sent after that arrives.
    private func startWithSignalDisposesAddedDisposables(upon terminal: Event<Int, TestError>) {
        let addedDisposable = AnyDisposable()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let producer = SignalProducer<Int, TestError> { incomingObserver, lifetime in
            lifetime += addedDisposable
            input.withValue { $0 = incomingObserver }
        }
        let recorder = EventRecorder<Int, TestError>()
        let handle = WeakBox<AnyObject>()
        do {
            let interruptHandle = producer.start(recorder.observer)
            handle.object = interruptHandle
        }
        #expect(handle.object == nil, "the interrupt handle was released, not disposed")
        #expect(!addedDisposable.isDisposed)
        input.value?.send(value: 1)
        #expect(recorder.events == [.value(1)])
        #expect(!addedDisposable.isDisposed)
        input.value?.send(terminal)
        #expect(recorder.events == [.value(1), terminal])
        #expect(addedDisposable.isDisposed)
    }

    @Test("SignalProducerSpec: startWithSignal should dispose of added disposables upon completion")
    func startWithSignalDisposesUponCompletion() {
        startWithSignalDisposesAddedDisposables(upon: .completed)
    }

    @Test("SignalProducerSpec: startWithSignal should dispose of added disposables upon error")
    func startWithSignalDisposesUponError() {
        startWithSignalDisposesAddedDisposables(upon: .failed(.boom))
    }

    // MARK: start

    @Test("SignalProducerSpec: start should immediately begin sending events")
    func startSendsImmediately() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalProducerSpec: start should send interrupted if disposed, once, and end the lifetime once")
    func startDisposal() {
        let producer = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        let disposable = producer.producer.start(recorder.observer)
        producer.observer.send(value: 1)
        disposable.dispose()
        disposable.dispose()
        producer.observer.send(value: 2)
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(producer.log.entries == ["start", "ended"])
    }

    @Test("SignalProducerSpec: disposing after completion should not send interrupted")
    func disposalAfterCompletion() {
        let recorder = EventRecorder<Int, TestError>()
        let disposable = SignalProducer<Int, TestError>(value: 1).start(recorder.observer)
        disposable.dispose()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("SignalProducerSpec: startWithValues, startWithCompleted, startWithFailed and startWithInterrupted")
    func startWithKinds() {
        let log = TestLog<String>()
        SignalProducer<Int, TestError>(values: 1, 2).startWithValues { log.append("value \($0)") }
        SignalProducer<Int, TestError>(value: 1).startWithCompleted { log.append("completed") }
        SignalProducer<Int, TestError>(error: .boom).startWithFailed { log.append("failed \($0)") }
        SignalProducer<Int, TestError>.never.startWithInterrupted { log.append("interrupted") }.dispose()
        #expect(log.entries == ["value 1", "value 2", "completed", "failed boom", "interrupted"])
    }

    // MARK: Combining producers

    @Test("SignalProducerSpec: then should start the subsequent producer after the completion of the original")
    func then() {
        let original = LoggingProducer()
        let recorder = EventRecorder<String, TestError>()
        original.producer.then(SignalProducer<String, TestError>(values: "a", "b")).start(recorder.observer)
        original.observer.send(value: 1)
        #expect(recorder.events == [])
        original.observer.sendCompleted()
        #expect(recorder.events == [.value("a"), .value("b"), .completed])
    }

    @Test(
        "SignalProducerSpec: then should forward errors and interruption from the original producer",
        arguments: [Event<Int, TestError>.failed(.boom), .interrupted])
    func thenForwardsFailure(terminal: Event<Int, TestError>) {
        let started = LockedTestValue(false)
        let replacement = SignalProducer<String, TestError> { _, _ in started.withValue { $0 = true } }
        let recorder = EventRecorder<String, TestError>()
        let original = LoggingProducer()
        original.producer.then(replacement).start(recorder.observer)
        original.observer.send(terminal)
        #expect(recorder.events == [terminal.terminal])
        #expect(!started.value)
    }

    @Test("SignalProducerSpec: concat should start subsequent producers as each completes, and complete after the last")
    func concat() {
        let first = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.concat(first.producer, SignalProducer(values: 2, 3)).start(recorder.observer)
        first.observer.send(value: 1)
        #expect(recorder.events == [.value(1)])
        first.observer.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test("SignalProducerSpec: concat should forward an error and not start later producers")
    func concatFailure() {
        let recorder = EventRecorder<Int, TestError>()
        let later = LoggingProducer()
        SignalProducer<Int, TestError>(error: .boom).concat(later.producer).start(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
        #expect(later.log.entries == [])
    }

    @Test("SignalProducerSpec: merge should emit values from all producers and complete when all complete")
    func merge() {
        let first = LoggingProducer()
        let second = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        let firstProducer = first.producer
        firstProducer.merge(with: second.producer).start(recorder.observer)
        first.observer.send(value: 1)
        second.observer.send(value: 2)
        first.observer.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2)])
        second.observer.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalProducerSpec: merge should forward an error and dispose the other producers")
    func mergeFailure() {
        let first = LoggingProducer()
        let second = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.merge(first.producer, second.producer).start(recorder.observer)
        first.observer.send(error: .boom)
        #expect(recorder.events == [.failed(.boom)])
        #expect(second.log.entries == ["start", "ended"])
    }

    // MARK: Scheduling

    @Test("SignalProducerSpec: start(on:) should invoke effects on the given scheduler")
    func startOn() {
        let scheduler = TestScheduler()
        let producer = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        // Kept and disposed: a run that never ends lives until it is disposed.
        let run = producer.producer.start(on: scheduler).start(recorder.observer)
        #expect(producer.log.entries == [])
        scheduler.advance()
        #expect(producer.log.entries == ["start"])
        producer.observer.send(value: 1)
        #expect(recorder.events == [.value(1)])
        run.dispose()
        #expect(producer.log.entries == ["start", "ended"])
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test("SignalProducerSpec: start(on:) disposed before the scheduler runs never starts and is interrupted")
    func startOnDisposedEarly() {
        let scheduler = TestScheduler()
        let producer = LoggingProducer()
        let recorder = EventRecorder<Int, TestError>()
        producer.producer.start(on: scheduler).start(recorder.observer).dispose()
        scheduler.run()
        #expect(producer.log.entries == [])
        #expect(recorder.events == [.interrupted])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("SignalProducerSpec: timer should send the current time at the given interval")
    func timer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Duration, Never>()
        let disposable = SignalProducer.timer(interval: .seconds(1), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .milliseconds(900))
        #expect(recorder.events == [])
        scheduler.advance(by: .milliseconds(100))
        #expect(recorder.values == [.seconds(1)])
        scheduler.advance(by: .seconds(2))
        #expect(recorder.values == [.seconds(1), .seconds(2), .seconds(3)])
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(recorder.events.last == .interrupted)
    }

    // MARK: on

    @Test("SignalProducerSpec: on should attach event handlers to each started signal, in order")
    func on() {
        let log = TestLog<String>()
        let producer = SignalProducer<Int, TestError>(value: 1).on(
            starting: { log.append("starting") },
            started: { log.append("started") },
            event: { log.append("event \($0)") },
            value: { log.append("value \($0)") },
            completed: { log.append("completed") },
            terminated: { log.append("terminated") },
            disposed: { log.append("disposed") }
        )
        producer.start()
        #expect(
            log.entries == [
                "starting", "event value(1)", "value 1", "event completed", "completed", "terminated",
                "disposed", "started",
            ])
        producer.start()
        #expect(log.entries.count == 16)
    }

    @Test("SignalProducerSpec: on should run interrupted, terminated and disposed when the run is disposed")
    func onDisposal() {
        let log = TestLog<String>()
        let disposable = SignalProducer<Int, TestError>.never.on(
            interrupted: { log.append("interrupted") },
            terminated: { log.append("terminated") },
            disposed: { log.append("disposed") }
        ).start()
        disposable.dispose()
        #expect(log.entries == ["interrupted", "terminated", "disposed"])
    }
}

extension Event {
    /// This terminal event carried over to another value type (test helper).
    fileprivate var terminal: Event<String, Error> {
        switch self {
        case .value: preconditionFailure("not terminal")
        case let .failed(error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}
