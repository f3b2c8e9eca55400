import Signals
import Testing

// ReactiveSwift 7.2's rule for a producer's run, from SignalProducerSpec and SignalProducerLiftingSpec,
// case by case under the spec's titles: "The Signal ends when: (1) a terminal event is sent to the input
// Observer; or (2) when the produced Signal is interrupted via the disposable yielded at the starting
// call." The disposable keeps the run's input, so a start handler need not keep its observer.

@Suite("Conformance: a producer's run lives until it terminates or is disposed (SignalProducerSpec)")
struct SignalProducerRunConformanceTests {
    // MARK: SignalProducerSpec: init

    /// The spec's "upon completion / error / interruption" cases: a run that keeps its observer, and
    /// whose added disposable is disposed exactly when `end` is sent into it.
    private func disposesAddedDisposables(upon end: Event<Void, TestError>) {
        let addedDisposable = AnyDisposable()
        let observer = LockedTestValue<Observer<Void, TestError>?>(nil)
        let producer = SignalProducer<Void, TestError> { incomingObserver, lifetime in
            lifetime += addedDisposable
            observer.withValue { $0 = incomingObserver }
        }
        producer.start()
        #expect(!addedDisposable.isDisposed)
        observer.value?.send(end)
        #expect(addedDisposable.isDisposed)
    }

    @Test("SignalProducerSpec: init should dispose of added disposables upon completion")
    func disposesUponCompletion() {
        disposesAddedDisposables(upon: .completed)
    }

    @Test("SignalProducerSpec: init should dispose of added disposables upon error")
    func disposesUponError() {
        disposesAddedDisposables(upon: .failed(.boom))
    }

    @Test("SignalProducerSpec: init should dispose of added disposables upon interruption")
    func disposesUponInterruption() {
        disposesAddedDisposables(upon: .interrupted)
    }

    @Test("SignalProducerSpec: init should dispose of added disposables upon start() disposal")
    func disposesUponStartDisposal() {
        let addedDisposable = AnyDisposable()
        let producer = SignalProducer<Void, TestError> { _, lifetime in
            lifetime += addedDisposable
        }
        let startDisposable = producer.start()
        #expect(!addedDisposable.isDisposed)
        startDisposable.dispose()
        #expect(addedDisposable.isDisposed)
    }

    // MARK: SignalProducerSpec: startWithSignal

    @Test("SignalProducerSpec: startWithSignal should dispose of added disposables if disposed")
    func startWithSignalDisposesIfDisposed() {
        let addedDisposable = AnyDisposable()
        let producer = SignalProducer<Int, Never> { _, lifetime in
            lifetime += addedDisposable
        }
        let disposable = producer.startWithSignal { signal, innerDisposable in
            signal.observe { _ in }
            return innerDisposable
        }
        #expect(!addedDisposable.isDisposed)
        disposable.dispose()
        #expect(addedDisposable.isDisposed)
    }

    @Test("SignalProducerSpec: startWithSignal should send interrupted if disposed")
    func startWithSignalOnSchedulerSendsInterruptedIfDisposed() {
        let interrupted = LockedTestValue(false)
        let disposable = SignalProducer<Int, Never>(value: 42)
            .start(on: TestScheduler())
            .startWithSignal { signal, innerDisposable in
                signal.observeInterrupted { interrupted.withValue { $0 = true } }
                return innerDisposable
            }
        #expect(!interrupted.value)
        disposable.dispose()
        #expect(interrupted.value)
    }

    @Test("SignalProducerSpec: startWithSignal should release signal observers if disposed")
    func startWithSignalReleasesObserversIfDisposed() {
        final class Captured: Sendable {}
        let weakObject = WeakBox<Captured>()
        let disposable = SignalProducer<Int, Never>.never.startWithSignal { signal, innerDisposable in
            let object = Captured()
            weakObject.object = object
            signal.observeValues { _ in withExtendedLifetime(object) {} }
            return innerDisposable
        }
        #expect(weakObject.object != nil)
        disposable.dispose()
        #expect(weakObject.object == nil)
    }

    @Test(
        "SignalProducerSpec: startWithSignal should dispose of the added disposable if the signal is unretained and unobserved upon exiting the scope"
    )
    func startWithSignalUnobserved() {
        let addedDisposable = AnyDisposable()
        let kept = LockedTestValue<Observer<Int, Never>?>(nil)
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            kept.withValue { $0 = observer }  // the handler keeps its observer: only the rule can end the run
            lifetime += addedDisposable
        }
        producer.startWithSignal { _, _ in }
        #expect(addedDisposable.isDisposed)
    }

    // MARK: The interrupt handle: releasing it is not disposing it

    // ReactiveSwift's interrupt handle only holds the run's input observer, and that observer interrupts
    // the run when its last reference goes (`interruptsOnDeinit`). So releasing the handle interrupts
    // the run only if it held the last reference; disposing it interrupts the run always.

    /// Who lets go last of the run's input observer: the interrupt handle, or the test, which holds the
    /// observer the start handler was given.
    enum LastInputHolder: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case interruptHandle = "the interrupt handle"
        case inputObserver = "the held input observer"

        var testDescription: String { rawValue }
    }

    /// A producer whose runs hand their input observer to `input` and log their lifetime's end.
    private static func handingOut(
        _ input: LockedTestValue<Observer<Int, TestError>?>,
        _ log: TestLog<String>
    ) -> SignalProducer<Int, TestError> {
        SignalProducer { observer, lifetime in
            input.withValue { $0 = observer }
            lifetime.observeEnded { log.append("ended") }
        }
    }

    @Test(
        "a run whose interrupt handle is released goes on while its input observer is held, and ends with the terminal event sent into it",
        arguments: [Event<Int, TestError>.completed, .failed(.boom)])
    func releasedHandleKeepsTheRunWhileItsInputIsHeld(terminal: Event<Int, TestError>) {
        let log = TestLog<String>()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        let weakHandle = WeakBox<AnyObject>()
        var handle: Disposable? = Self.handingOut(input, log).startWithSignal { signal, interruptHandle in
            signal.observe(recorder.observer)
            return interruptHandle
        }
        weakHandle.object = handle
        input.value?.send(value: 1)
        handle = nil
        #expect(weakHandle.object == nil, "the interrupt handle was freed")
        #expect(recorder.events == [.value(1)])
        #expect(log.entries == [])
        input.value?.send(value: 2)
        input.value?.send(terminal)
        input.value?.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), terminal])
        #expect(log.entries == ["ended"])
        input.withValue { $0 = nil }
        #expect(recorder.events == [.value(1), .value(2), terminal])
        #expect(log.entries == ["ended"])
    }

    @Test(
        "a run that nothing ended is interrupted when the last reference to its input observer goes, and not before",
        arguments: LastInputHolder.allCases)
    func runIsInterruptedWithTheLastInputReference(last: LastInputHolder) {
        let log = TestLog<String>()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        var handle: Disposable? = Self.handingOut(input, log).start(recorder.observer)
        input.value?.send(value: 1)
        // The first one lets go: the run goes on.
        switch last {
        case .interruptHandle:
            input.withValue { $0 = nil }
        case .inputObserver:
            handle = nil
            input.value?.send(value: 2)
        }
        let sent: [Event<Int, TestError>] = last == .inputObserver ? [.value(1), .value(2)] : [.value(1)]
        #expect(recorder.events == sent)
        #expect(log.entries == [])
        #expect(handle?.isDisposed != true)
        // The last one lets go: nothing can send into the run any more.
        switch last {
        case .interruptHandle: handle = nil
        case .inputObserver: input.withValue { $0 = nil }
        }
        #expect(recorder.events == sent + [.interrupted])
        #expect(log.entries == ["ended"])
    }

    @Test("disposing a run's interrupt handle interrupts it even while its input observer is held")
    func disposedHandleInterruptsWhileTheInputIsHeld() {
        let log = TestLog<String>()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        let handle = Self.handingOut(input, log).startWithSignal { signal, interruptHandle in
            signal.observe(recorder.observer)
            return interruptHandle
        }
        input.value?.send(value: 1)
        handle.dispose()
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(log.entries == ["ended"])
        input.value?.send(value: 2)
        input.value?.sendCompleted()
        input.withValue { $0 = nil }
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(log.entries == ["ended"])
    }

    /// An operator that starts the upstream run inside its own start handler, keeping the upstream's
    /// interrupt handle in its run's lifetime.
    enum OperatorShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case map, on
        case flatMapLatest = "flatMap(.latest)"
        case startOn = "start(on:)"

        var testDescription: String { rawValue }

        func apply(to upstream: SignalProducer<Int, TestError>) -> SignalProducer<Int, TestError> {
            switch self {
            case .map: upstream.map { $0 * 10 }
            case .on: upstream.on(value: { _ in })
            case .flatMapLatest: SignalProducer<Int, TestError>(value: 0).flatMap(.latest) { _ in upstream }
            case .startOn: upstream.start(on: ImmediateScheduler())
            }
        }
    }

    @Test(
        "a run started through an operator, its interrupt handle released, goes on while the upstream's input observer is held",
        arguments: OperatorShape.allCases)
    func releasedHandleOfAnOperatorsRun(shape: OperatorShape) {
        let log = TestLog<String>()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        var handle: Disposable? = shape.apply(to: Self.handingOut(input, log)).start(recorder.observer)
        input.value?.send(value: 1)
        withExtendedLifetime(handle) {}
        handle = nil
        input.value?.send(value: 2)
        input.value?.sendCompleted()
        let values = shape == .map ? [10, 20] : [1, 2]
        #expect(recorder.events == values.map { .value($0) } + [.completed])
        #expect(log.entries == ["ended"])
    }

    // MARK: SignalProducerSpec: start

    @Test("SignalProducerSpec: start should send interrupted if disposed")
    func startSendsInterruptedIfDisposed() {
        let interrupted = LockedTestValue(false)
        let disposable = SignalProducer<Void, Never>.never.startWithInterrupted {
            interrupted.withValue { $0 = true }
        }
        #expect(!interrupted.value)
        disposable.dispose()
        #expect(interrupted.value)
    }

    @Test("SignalProducerSpec: start should release observer when disposed")
    func startReleasesObserverWhenDisposed() {
        final class Captured: Sendable {}
        let weakObject = WeakBox<Captured>()
        let disposable: Disposable
        do {
            let object = Captured()
            weakObject.object = object
            disposable = SignalProducer<Int, Never>.never.startWithValues { _ in withExtendedLifetime(object) {} }
        }
        #expect(weakObject.object != nil)
        disposable.dispose()
        #expect(weakObject.object == nil)
    }

    @Test(
        "a run whose start handler kept nothing goes on while its disposable is held, and is interrupted once it is dropped"
    )
    func runEndsWhenItsDisposableIsDropped() {
        let log = TestLog<String>()
        var disposable: Disposable? = SignalProducer<Int, Never> { _, lifetime in
            lifetime.observeEnded { log.append("ended") }
        }.start { event in log.append("\(event)") }
        #expect(log.entries == [])
        withExtendedLifetime(disposable) {}
        disposable = nil
        #expect(log.entries == ["ended", "interrupted"])
    }

    @Test(
        "a run started through an operator that never terminates lives until disposed, even with its disposable dropped"
    )
    func liftedRunLivesUntilDisposed() {
        // As in ReactiveSwift: the operator's run keeps the upstream run's disposable, whose signal
        // keeps the operator's observer. Such a run must be disposed; this one is, at the end.
        let log = TestLog<String>()
        var disposable: Disposable? = SignalProducer<Int, Never> { _, lifetime in
            lifetime.observeEnded { log.append("ended") }
        }.map { $0 }.start { event in log.append("\(event)") }
        let kept = disposable
        disposable = nil
        #expect(log.entries == [])
        kept?.dispose()
        #expect(log.entries == ["ended", "interrupted"])
    }

    // MARK: SignalProducerSpec: flatten, "should cancel inner work when disposed"

    /// The spec's `execute(strategy)`: an outer producer that sends one inner producer whose start
    /// handler only registers `innerDisposable` (it keeps no observer), flattened with `strategy`.
    private struct FlattenRun {
        let innerDisposable = AnyDisposable()
        let interrupted = LockedTestValue(false)
        let isInnerInterrupted = LockedTestValue(false)
        let isInnerDisposed = LockedTestValue(false)
        let outerInput: Observer<SignalProducer<Int, Never>, Never>
        let outerDisposable: Disposable

        init(_ strategy: FlattenStrategy) {
            let (outerSignal, outerInput) = Signal<SignalProducer<Int, Never>, Never>.pipe()
            self.outerInput = outerInput
            let (innerDisposable, interrupted) = (self.innerDisposable, self.interrupted)
            let (isInnerInterrupted, isInnerDisposed) = (self.isInnerInterrupted, self.isInnerDisposed)
            let innerProducer = SignalProducer<Int, Never> { $1 += innerDisposable }
                .on(
                    interrupted: { isInnerInterrupted.withValue { $0 = true } },
                    disposed: { isInnerDisposed.withValue { $0 = true } })
            outerDisposable = SignalProducer(outerSignal).flatten(strategy).startWithInterrupted {
                interrupted.withValue { $0 = true }
            }
            outerInput.send(value: innerProducer)
        }

        var flags: [Bool] {
            [innerDisposable.isDisposed, interrupted.value, isInnerInterrupted.value, isInnerDisposed.value]
        }
    }

    static let strategies: [FlattenStrategy] = [.concat, .latest, .merge]

    @Test(
        "SignalProducerSpec: flatten should cancel inner work when disposed before the outer producer completes",
        arguments: strategies)
    func flattenCancelsInnerWorkBeforeOuterCompletes(strategy: FlattenStrategy) {
        let run = FlattenRun(strategy)
        #expect(run.flags == [false, false, false, false])
        run.outerDisposable.dispose()
        #expect(run.flags == [true, true, true, true])
    }

    @Test(
        "SignalProducerSpec: flatten should cancel inner work when disposed after the outer producer completes",
        arguments: strategies)
    func flattenCancelsInnerWorkAfterOuterCompletes(strategy: FlattenStrategy) {
        let run = FlattenRun(strategy)
        run.outerInput.sendCompleted()
        #expect(run.flags == [false, false, false, false])
        run.outerDisposable.dispose()
        #expect(run.flags == [true, true, true, true])
    }
}

// The lifetime cases of SignalProducerLiftingSpec (BRIEF §4, "Lifetimes end").
@Suite("Conformance: SignalProducerLiftingSpec, lifetimes")
struct SignalProducerLiftingLifetimeConformanceTests {
    @Test("SignalProducerLiftingSpec: disposing a run of a lifted producer should dispose every intermediate signal")
    func liftedRunFreesIntermediates() {
        // What proves the intermediate signals were disposed is that their operators' closures, and
        // what those captured, are freed.
        final class Captured: Sendable {}
        let first = WeakBox<Captured>()
        let second = WeakBox<Captured>()
        let kept = LockedTestValue<Observer<Int, Never>?>(nil)
        let disposable: Disposable
        do {
            let firstCaptured = Captured()
            let secondCaptured = Captured()
            first.object = firstCaptured
            second.object = secondCaptured
            let producer = SignalProducer<Int, Never> { observer, _ in kept.withValue { $0 = observer } }
                .lift { signal in signal.map { value in withExtendedLifetime(firstCaptured) { value + 1 } } }
                .lift { signal in signal.filter { value in withExtendedLifetime(secondCaptured) { value > 0 } } }
            disposable = producer.start()
        }
        #expect(first.object != nil && second.object != nil)
        disposable.dispose()
        #expect(first.object == nil)
        #expect(second.object == nil)
    }

    @Test(
        "SignalProducerLiftingSpec: disposing a run of delay should cancel its scheduled work, whether or not upstream ended",
        arguments: [false, true])
    func delayDisposalCancels(upstreamEnded: Bool) {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never> { observer, _ in
            observer.send(value: 1)
            if upstreamEnded { observer.sendCompleted() }
        }.delay(.seconds(1), on: scheduler).start(recorder.observer)
        #expect(scheduler.pendingActionCount > 0)
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test(
        "SignalProducerLiftingSpec: disposing a run of observe(on:) should cancel its scheduled work, whether or not upstream ended",
        arguments: [false, true])
    func observeOnDisposalCancels(upstreamEnded: Bool) {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never> { observer, _ in
            observer.send(value: 1)
            if upstreamEnded { observer.sendCompleted() }
        }.observe(on: scheduler).start(recorder.observer)
        #expect(scheduler.pendingActionCount > 0)
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }
}
