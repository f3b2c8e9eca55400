import Dispatch
import Foundation
import Signals
import Testing

/// An object to hold weakly, to prove that what a closure captured was freed.
private final class Captured: Sendable {
    init() {}
}

@Suite("Ownership: what ends a signal, what detaches, what disposal frees")
struct SignalOwnershipTests {
    // MARK: A released input interrupts

    @Test("releasing a pipe's input without a terminal event interrupts its observers")
    func releasedInputInterrupts() {
        let recorder = EventRecorder<Int, TestError>()
        let signal: Signal<Int, TestError>
        do {
            let (output, input) = Signal<Int, TestError>.pipe()
            signal = output
            signal.observe(recorder.observer)
            input.send(value: 1)
        }
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(signal.observerCount == 0)
    }

    @Test("releasing an input after its terminal event sends nothing more")
    func releasedInputAfterTerminalIsSilent() {
        let recorder = EventRecorder<Int, TestError>()
        do {
            let (signal, input) = Signal<Int, TestError>.pipe()
            signal.observe(recorder.observer)
            input.send(value: 1)
            input.sendCompleted()
        }
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("a run whose start handler lets go of its observer lives while its disposable is held, and ends once")
    func runWithReleasedObserverLivesWhileItsDisposableIsHeld() {
        let recorder = EventRecorder<Int, Never>()
        let ends = TestLog<String>()
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            observer.send(value: 1)
            lifetime.observeEnded { ends.append("ended") }
        }
        let disposable = producer.start(recorder.observer)
        #expect(recorder.events == [.value(1)])
        #expect(ends.entries == [])
        disposable.dispose()
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ends.entries == ["ended"])
        disposable.dispose()
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ends.entries == ["ended"])
    }

    @Test("a run whose start handler lets go of its observer and whose disposable is discarded is interrupted at once")
    func runWithReleasedObserverAndDiscardedDisposableIsInterrupted() {
        let recorder = EventRecorder<Int, Never>()
        let ends = TestLog<String>()
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            observer.send(value: 1)
            lifetime.observeEnded { ends.append("ended") }
        }
        producer.start(recorder.observer)
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ends.entries == ["ended"])
    }

    @Test("a run whose disposable is released later, its observer long let go of, is interrupted then")
    func runInterruptedWhenItsDisposableIsReleased() {
        let recorder = EventRecorder<Int, Never>()
        var disposable: Disposable? = SignalProducer<Int, Never> { _, _ in }.start(recorder.observer)
        #expect(recorder.events == [])
        #expect(disposable?.isDisposed == false)
        disposable = nil
        #expect(recorder.events == [.interrupted])
    }

    @Test("Signal.never lives while an operator on it is held or observed, and is disposed once nobody can hear it")
    func neverLivesWhileObserved() {
        let recorder = EventRecorder<Int, Never>()
        let disposed = LockedTestValue(false)
        let observation: Disposable
        do {
            let mapped = Signal<Int, Never>.never.on(disposed: { disposed.withValue { $0 = true } }).map { $0 + 1 }
            observation = mapped.observe(recorder.observer)
        }
        #expect(recorder.events == [])
        #expect(!disposed.value)
        #expect(!observation.isDisposed)
        observation.dispose()
        #expect(disposed.value, "nobody holds or observes it any more")
        #expect(recorder.events == [])
    }

    @Test("SignalProducer.never: a run lives while its disposable is held; a discarded one ends at once")
    func producerNeverLivesWhileItsDisposableIsHeld() {
        let held = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>.never.start(held.observer)
        #expect(held.events == [])
        run.dispose()
        #expect(held.events == [.interrupted])

        let discarded = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.never.start(discarded.observer)
        #expect(discarded.events == [.interrupted])
    }

    @Test("a run whose disposable and observer are both dropped tells its observer it was interrupted")
    func droppedRunTellsItsObserver() {
        let recorder = EventRecorder<Int, Never>()
        let keeper = LockedTestValue<Observer<Int, Never>?>(nil)
        let producer = SignalProducer<Int, Never> { observer, _ in
            keeper.withValue { $0 = observer }
        }
        producer.start(recorder.observer)
        #expect(recorder.events == [])
        keeper.withValue { $0 = nil }
        #expect(recorder.events == [.interrupted])
    }

    @Test("a for-await loop over a signal ends when the signal's input is released")
    func valuesLoopEndsWhenInputIsReleased() async {
        let keeper = LockedTestValue<Observer<Int, Never>?>(nil)
        let signal = Signal<Int, Never> { input in
            keeper.withValue { $0 = input }
            return nil
        }
        let iterating = DispatchSemaphore(value: 0)
        let loop = Task { () -> [Int] in
            var iterator = signal.values.makeAsyncIterator()
            iterating.signal()
            var seen: [Int] = []
            while let value = await iterator.next() { seen.append(value) }
            return seen
        }
        #expect(await Watchdog.signalled(iterating))
        keeper.withValue { $0?.send(value: 7) }
        keeper.withValue { $0 = nil }
        #expect(await loop.value == [7])
    }

    // MARK: Unheard signals end and detach

    @Test("a derived signal whose last observer is disposed, and that nobody holds, detaches and frees its closures")
    func derivedSignalDetaches() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let mapCalls = LockedTestValue(0)
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            let disposable =
                signal
                .map { value -> Int in
                    withExtendedLifetime(captured) {}
                    mapCalls.withValue { $0 += 1 }
                    return value
                }
                .filter { _ in true }
                .observeValues { _ in }
            #expect(signal.observerCount == 1)
            input.send(value: 1)
            disposable.dispose()
        }
        #expect(signal.observerCount == 0)
        #expect(weakCaptured == nil)
        input.send(value: 2)
        #expect(mapCalls.value == 1)
    }

    @Test("10,000 subscribe and dispose rounds leave no observer behind: a later value runs the map closure 0 times")
    func subscribeDisposeRoundsLeaveNothing() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let mapCalls = LockedTestValue(0)
        for _ in 0..<10_000 {
            signal.map { value -> Int in
                mapCalls.withValue { $0 += 1 }
                return value
            }.filter { _ in true }.observeValues { _ in }.dispose()
        }
        #expect(signal.observerCount == 0)
        input.send(value: 1)
        #expect(mapCalls.value == 0)
    }

    @Test("a derived signal nobody holds goes on while it has an observer")
    func observedDerivedSignalStays() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.map { $0 * 10 }.filter { $0 > 10 }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.send(error: .boom)
        #expect(recorder.events == [.value(20), .failed(.boom)])
    }

    @Test("a derived signal that is released unobserved detaches at once; one still held does not")
    func unobservedDerivedSignal() {
        let (signal, input) = Signal<Int, Never>.pipe()
        _ = signal.map { $0 + 1 }
        #expect(signal.observerCount == 0)
        let held = signal.map { $0 + 1 }
        #expect(signal.observerCount == 1)
        let recorder = EventRecorder<Int, Never>()
        held.observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.value(2)])
    }

    @Test("an unobserved signal nobody holds is disposed, and its generator's disposable runs")
    func generatorDisposableRunsWhenUnheard() {
        let disposed = TestLog<String>()
        let keeper = LockedTestValue<Observer<Int, Never>?>(nil)
        _ = Signal<Int, Never> { input in
            keeper.withValue { $0 = input }
            return AnyDisposable { disposed.append("disposed") }
        }
        #expect(disposed.entries == ["disposed"])
    }

    @Test("startWithSignal ends the run once its start handler returns when the signal is neither kept nor observed")
    func startWithSignalUnobservedEndsTheRun() {
        let kept = LockedTestValue<Observer<Int, Never>?>(nil)
        func producer(_ log: TestLog<String>) -> SignalProducer<Int, Never> {
            SignalProducer { observer, lifetime in
                kept.withValue { $0 = observer }  // keeps its observer: only nobody listening ends the run
                log.append("started")
                lifetime.observeEnded { log.append("ended") }
            }
        }
        let unheard = TestLog<String>()
        producer(unheard).startWithSignal { _, _ in }
        #expect(unheard.entries == ["started", "ended"])

        let observed = TestLog<String>()
        let interrupted = LockedTestValue(false)
        producer(observed).startWithSignal { signal, _ in
            signal.observeInterrupted { interrupted.withValue { $0 = true } }
        }
        #expect(observed.entries == ["started"])
        kept.withValue { $0 = nil }
        #expect(observed.entries == ["started", "ended"])
        #expect(interrupted.value)
    }

    @Test("disposing a run of a lifted producer disposes the intermediate signal even if it ignores the upstream")
    func liftedIntermediateSignalIsDisposed() {
        let disposed = TestLog<String>()
        let keeper = LockedTestValue<Observer<Int, Never>?>(nil)
        let producer = SignalProducer<Int, Never>.never.lift { (_: Signal<Int, Never>) in
            Signal<Int, Never> { input in
                keeper.withValue { $0 = input }
                return AnyDisposable { disposed.append("intermediate disposed") }
            }
        }
        let recorder = EventRecorder<Int, Never>()
        let run = producer.start(recorder.observer)
        #expect(disposed.entries == [])
        run.dispose()
        #expect(disposed.entries == ["intermediate disposed"])
        #expect(recorder.events == [.interrupted])
    }

    // MARK: Releases never run user code under a lock

    @Test("an input released by a scheduler's cancellation interrupts observers that may use that scheduler")
    func inputReleasedByCancellationMayReenterTheScheduler() async {
        let scheduler = TestScheduler()
        let scheduled = LockedTestValue<Disposable?>(nil)
        let producer = SignalProducer<Int, Never> { observer, _ in
            // Only the scheduled action keeps the observer.
            scheduled.withValue { $0 = scheduler.schedule(after: .seconds(10)) { observer.send(value: 1) } }
        }
        let recorder = EventRecorder<Int, Never>()
        producer.start(
            Observer { event in
                recorder.record(event)
                // Re-enters the scheduler: a deadlock if the observer ran under its lock.
                _ = scheduler.schedule {}
            })
        let finished = await onThread(timeout: 300) {
            scheduled.withValue { $0 }?.dispose()
        }
        #expect(finished)
        #expect(recorder.events == [.interrupted])
    }

    // MARK: Threads

    @Test("observers added and disposed on 4 threads while another sends: every derived signal detaches")
    func concurrentSubscribeDispose() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let stop = LockedTestValue(false)
        let senderStopped = DispatchSemaphore(value: 0)
        Watchdog.startThread {
            var value = 0
            while !stop.value {
                input.send(value: value)
                value += 1
            }
            senderStopped.signal()
        }
        Watchdog.runOnThreads(4) { _ in
            for _ in 0..<2_000 {
                let recorder = EventRecorder<Int, Never>()
                let disposable = signal.map { $0 + 1 }.filter { $0 >= 0 }.observe(recorder.observer)
                disposable.dispose()
                #expect(recorder.followsGrammar)
            }
        }
        stop.withValue { $0 = true }
        // A derived signal disposed while the sender was delivering to it detaches once that delivery
        // is over, on the sender's thread: count once the sender has stopped.
        guard Watchdog.wait(senderStopped, "the sender to stop") else { return }
        #expect(signal.observerCount == 0)
    }
}

/// Runs `body` on a new thread; false (and a recorded issue) if it has not returned within `timeout`
/// seconds, which here means a deadlock.
func onThread(timeout: Double, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Watchdog.startThread {
        body()
        done.signal()
    }
    let finished = await Watchdog.signalled(done, within: timeout)
    if !finished { Issue.record("did not finish within \(timeout) s: a deadlock") }
    return finished
}
