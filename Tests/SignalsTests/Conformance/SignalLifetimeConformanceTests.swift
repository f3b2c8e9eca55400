import Signals
import Testing

// The ownership rules of ReactiveSwift's SignalLifetimeSpec, and the lifetime cases of SignalProducerSpec
// and SignalProducerLiftingSpec, written against our API (BRIEF §4, "Lifetimes end"). Each test names
// the spec case it follows.

@Suite("Conformance: SignalLifetimeSpec")
struct SignalLifetimeConformanceTests {
    @Test("SignalLifetimeSpec: Signal.pipe should deallocate when neither it nor its input is referenced")
    func pipeDeallocates() {
        let weakSignal = WeakBox<Signal<Int, Never>>()
        do {
            let (signal, input) = Signal<Int, Never>.pipe()
            weakSignal.object = signal
            withExtendedLifetime(input) {}
        }
        #expect(weakSignal.object == nil)
    }

    @Test("SignalLifetimeSpec: an input observer that nobody retains should interrupt its signal")
    func releasedInputInterrupts() {
        let recorder = EventRecorder<Int, Never>()
        let (signal, input) = Signal<Int, Never>.pipe()
        signal.observe(recorder.observer)
        do {
            let sender = input
            sender.send(value: 1)
        }
        _ = consume input
        #expect(recorder.events == [.value(1), .interrupted])
        withExtendedLifetime(signal) {}
    }

    @Test(
        "SignalLifetimeSpec: Signal.init should dispose of the generator's disposable when the signal is unobserved and unreferenced"
    )
    func unobservedSignalDisposesGenerator() {
        let disposable = AnyDisposable()
        let input = LockedTestValue<Observer<Int, Never>?>(nil)
        do {
            let signal = Signal<Int, Never> { observer in
                input.withValue { $0 = observer }
                return disposable
            }
            withExtendedLifetime(signal) {}
        }
        #expect(disposable.isDisposed)
    }

    @Test(
        "SignalLifetimeSpec: should be alive until completion if it has an observer, despite not being explicitly retained"
    )
    func observedSignalLivesUntilCompletion() {
        // As in ReactiveSwift 6 and later: the `Signal` handle itself is freed at once, while the
        // signal goes on (it is not disposed) until it completes.
        let weakSignal = WeakBox<Signal<Int, Never>>()
        let input = LockedTestValue<Observer<Int, Never>?>(nil)
        let disposed = LockedTestValue(false)
        let recorder = EventRecorder<Int, Never>()
        do {
            let signal = Signal<Int, Never> { observer in
                input.withValue { $0 = observer }
                return AnyDisposable { disposed.withValue { $0 = true } }
            }
            weakSignal.object = signal
            signal.observe(recorder.observer)
        }
        #expect(weakSignal.object == nil)
        #expect(!disposed.value)
        input.value?.send(value: 1)
        #expect(!disposed.value)
        input.value?.sendCompleted()
        #expect(disposed.value)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test(
        "SignalLifetimeSpec: a derived signal that is unreachable and unobserved should detach from its upstream and be freed"
    )
    func derivedSignalDetaches() {
        let (upstream, input) = Signal<Int, Never>.pipe()
        let weakMapped = WeakBox<Signal<Int, Never>>()
        let weakCapture = WeakBox<AnyDisposable>()
        do {
            let captured = AnyDisposable()
            weakCapture.object = captured
            let mapped = upstream.map { value in withExtendedLifetime(captured) { value } }
            weakMapped.object = mapped
            mapped.observeValues { _ in }.dispose()
        }
        #expect(weakMapped.object == nil)
        #expect(weakCapture.object == nil, "the transform was released with the derived signal")
        input.send(value: 1)
    }

    @Test(
        "SignalProducerSpec: startWithSignal should dispose of what was added to the lifetime when the signal is neither kept nor observed"
    )
    func startWithSignalUnobserved() {
        let log = TestLog<String>()
        let kept = LockedTestValue<Observer<Int, Never>?>(nil)
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            kept.withValue { $0 = observer }  // the handler keeps its observer: only the rule can end the run
            lifetime.observeEnded { log.append("ended") }
        }
        producer.startWithSignal { _, _ in }
        #expect(log.entries == ["ended"])
    }

    @Test("SignalProducerLiftingSpec: disposing a run of a lifted producer should dispose every intermediate signal")
    func liftedRunFreesIntermediates() {
        // The intermediate signals' handles are not kept by the run (as in ReactiveSwift 6+), so what
        // proves they were disposed is that their operators' closures, and what those captured, are freed.
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
