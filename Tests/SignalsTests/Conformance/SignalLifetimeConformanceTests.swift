import Signals
import Testing

// ReactiveSwift 7.2's SignalLifetimeSpec, case by case under the spec's own titles ("describe: it"),
// written against our API (BRIEF §4, "Lifetimes end"). Where the spec passes a disposable to
// `Signal.pipe(disposable:)`, these tests register it on the lifetime of `Signal.init(_:)` (the same
// thing in ReactiveSwift: the pipe's disposable is its generator's lifetime). Every case asserts what
// the spec asserts; none departs from it.

/// What ReactiveSwift's spec holds weakly: an object of no particular type.
private final class Token: Sendable {}

/// The spec's `testTransform()`: a signal made with `Signal.init(_:)` that forwards this one.
extension Signal {
    fileprivate func testTransform() -> Signal {
        Signal { observer, lifetime in
            lifetime += self.observe(observer)
        }
    }
}

@Suite("Conformance: SignalLifetimeSpec")
struct SignalLifetimeConformanceTests {
    // MARK: describe("init")

    @Test("init: should automatically interrupt if the input observer is not retained")
    func interruptsWhenInputIsNotRetained() {
        let disposable = AnyDisposable()
        var outerSignal: Signal<Never, Never>?
        do {
            let signal = Signal<Never, Never> { observer, lifetime in
                lifetime += disposable
                withExtendedLifetime(observer) {
                    #expect(!disposable.isDisposed)
                }
            }
            outerSignal = signal
        }
        #expect(disposable.isDisposed)
        withExtendedLifetime(outerSignal) {}
    }

    @Test(
        "init: should automatically interrupt if the input observer is not retained, even if there are still one or more active observer"
    )
    func interruptsWhenInputIsNotRetainedDespiteObservers() {
        let disposable = AnyDisposable()
        let isInterrupted = LockedTestValue(false)
        let input = LockedTestValue<Observer<Never, Never>?>(nil)
        var outerSignal: Signal<Never, Never>?
        do {
            let signal = Signal<Never, Never> { observer, lifetime in
                lifetime += disposable
                input.withValue { $0 = observer }
            }
            outerSignal = signal
            signal.observeInterrupted { isInterrupted.withValue { $0 = true } }
            #expect(!isInterrupted.value)
            #expect(!disposable.isDisposed)
            input.withValue { $0 = nil }
        }
        #expect(isInterrupted.value)
        #expect(disposable.isDisposed)
        withExtendedLifetime(outerSignal) {}
    }

    @Test("init: should be disposed of if it does not have any observers")
    func disposedWithoutObservers() {
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, Never>>()
        do {
            let signal: Signal<Token, Never> = .never
            weakSignal.object = signal.on(disposed: { isDisposed.withValue { $0 = true } })
        }
        #expect(weakSignal.object == nil)
        #expect(isDisposed.value)
    }

    @Test("init: should be disposed of if no one retains it")
    func disposedWhenNoOneRetainsIt() {
        let isDisposed = LockedTestValue(false)
        let input = LockedTestValue<Observer<Token, Never>?>(nil)
        var signal: Signal<Token, Never>? = Signal<Token, Never> { innerObserver, _ in
            input.withValue { $0 = innerObserver }
        }.on(disposed: { isDisposed.withValue { $0 = true } })
        let weakSignal = WeakBox(signal)
        withExtendedLifetime(input) {
            #expect(weakSignal.object != nil)
            #expect(!isDisposed.value)

            var reference = signal
            signal = nil
            #expect(weakSignal.object != nil)
            #expect(!isDisposed.value)

            withExtendedLifetime(reference) {}
            reference = nil
            #expect(weakSignal.object == nil)
            #expect(isDisposed.value)
        }
    }

    @Test(
        "init: should be disposed of when the signal shell has deinitialized with no active observer regardless of whether the generator observer is retained or not"
    )
    func disposedWhenShellDeinitializesUnobserved() {
        let input = LockedTestValue<Observer<Token, Never>?>(nil)
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, Never>>()
        do {
            let signal = Signal<Token, Never> { innerObserver, _ in
                input.withValue { $0 = innerObserver }
            }
            weakSignal.object = signal.on(disposed: { isDisposed.withValue { $0 = true } })
        }
        #expect(input.value != nil)
        #expect(weakSignal.object == nil)
        #expect(isDisposed.value)
    }

    @Test("init: should be disposed of when the generator observer has deinitialized even if it has an observer")
    func disposedWhenGeneratorObserverDeinitializes() {
        let input = LockedTestValue<Observer<Token, Never>?>(nil)
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, Never>>()
        let disposable: Disposable
        do {
            let signal = Signal<Token, Never> { observer, lifetime in
                input.withValue { $0 = observer }
                lifetime.observeEnded { isDisposed.withValue { $0 = true } }
            }
            disposable = signal.observe(Observer { _ in })
            weakSignal.object = signal
        }
        #expect(weakSignal.object == nil)
        #expect(!isDisposed.value)

        input.withValue { $0 = nil }
        #expect(isDisposed.value)
        withExtendedLifetime(disposable) {}
    }

    /// The three "alive until ..." cases of `init`: the signal sends `end` from a scheduled action.
    private func aliveUntilEnd(_ end: Event<Token, TestError>) {
        let testScheduler = TestScheduler()
        let ended = LockedTestValue(false)
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, TestError>>()
        do {
            let signal = Signal<Token, TestError> { observer, _ in
                testScheduler.schedule { observer.send(end) }
            }
            signal.on(disposed: { isDisposed.withValue { $0 = true } }).observe { event in
                if event.isTerminating { ended.withValue { $0 = true } }
            }
            weakSignal.object = signal
        }
        #expect(!ended.value)
        #expect(weakSignal.object == nil)
        #expect(!isDisposed.value)

        testScheduler.run()

        #expect(ended.value)
        #expect(weakSignal.object == nil)
        #expect(isDisposed.value)
    }

    @Test("init: should be alive until erroring if it has at least one observer, despite not being explicitly retained")
    func initAliveUntilErroring() {
        aliveUntilEnd(.failed(.boom))
    }

    @Test(
        "init: should be alive until completion if it has at least one observer, despite not being explicitly retained")
    func initAliveUntilCompletion() {
        aliveUntilEnd(.completed)
    }

    @Test(
        "init: should be alive until interruption if it has at least one observer, despite not being explicitly retained"
    )
    func initAliveUntilInterruption() {
        aliveUntilEnd(.interrupted)
    }

    // MARK: describe("Signal.pipe")

    @Test("Signal.pipe: should deallocate")
    func pipeDeallocates() {
        let weakSignal = WeakBox<Signal<Void, Never>>()
        do {
            let (signal, _) = Signal<Void, Never>.pipe()
            weakSignal.object = signal
        }
        #expect(weakSignal.object == nil)
    }

    /// The three "alive until ..." cases of `Signal.pipe`.
    private func pipeAliveUntilEnd(_ end: Event<Void, TestError>) {
        let testScheduler = TestScheduler()
        let ended = LockedTestValue(false)
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Void, TestError>>()
        do {
            let (signal, observer) = Signal<Void, TestError>.pipe()
            weakSignal.object = signal
            testScheduler.schedule { observer.send(end) }
            signal.on(disposed: { isDisposed.withValue { $0 = true } }).observe { event in
                if event.isTerminating { ended.withValue { $0 = true } }
            }
        }
        #expect(weakSignal.object == nil)
        #expect(!isDisposed.value)
        #expect(!ended.value)

        testScheduler.run()

        #expect(weakSignal.object == nil)
        #expect(isDisposed.value)
        #expect(ended.value)
    }

    @Test(
        "Signal.pipe: should be alive until erroring if it has at least one observer, despite not being explicitly retained"
    )
    func pipeAliveUntilErroring() {
        pipeAliveUntilEnd(.failed(.boom))
    }

    @Test(
        "Signal.pipe: should be alive until completion if it has at least one observer, despite not being explicitly retained"
    )
    func pipeAliveUntilCompletion() {
        pipeAliveUntilEnd(.completed)
    }

    @Test(
        "Signal.pipe: should be alive until interruption if it has at least one observer, despite not being explicitly retained"
    )
    func pipeAliveUntilInterruption() {
        pipeAliveUntilEnd(.interrupted)
    }

    // MARK: describe("testTransform")

    @Test("testTransform: should be disposed of")
    func transformDisposed() {
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, Never>>()
        weakSignal.object = Signal<Token, Never>.never
            .testTransform()
            .on(disposed: { isDisposed.withValue { $0 = true } })
        #expect(weakSignal.object == nil)
        #expect(isDisposed.value)
    }

    @Test(
        "testTransform: should be disposed of if it is not explicitly retained and its generator observer is not retained"
    )
    func transformDisposedWhenGeneratorObserverIsReleased() {
        let input = LockedTestValue<Observer<Token, Never>?>(nil)
        let isDisposed = LockedTestValue(false)
        let weakSignal = WeakBox<Signal<Token, Never>>()
        let disposable: Disposable
        do {
            let signal = Signal<Token, Never> { observer, lifetime in
                input.withValue { $0 = observer }
                lifetime.observeEnded { isDisposed.withValue { $0 = true } }
            }
            let transformed = signal.testTransform()
            disposable = transformed.observe(Observer { _ in })
            weakSignal.object = transformed
        }
        #expect(weakSignal.object == nil)
        #expect(!isDisposed.value)

        input.withValue { $0 = nil }
        #expect(isDisposed.value)
        withExtendedLifetime(disposable) {}
    }

    @Test("testTransform: should deallocate if it is unreachable and has no observer")
    func transformChainUnreachableDeallocates() {
        let (sourceSignal, sourceObserver) = Signal<Int, Never>.pipe()
        let counters = LockedTestValue([0, 0, 0])
        func run() {
            _ =
                sourceSignal
                .map { value -> Int in
                    counters.withValue { $0[0] += 1 }
                    return value
                }
                .map { value -> Int in
                    counters.withValue { $0[1] += 1 }
                    return value
                }
                .map { value -> Int in
                    counters.withValue { $0[2] += 1 }
                    return value
                }
        }
        run()

        sourceObserver.send(value: 1)
        #expect(counters.value == [0, 0, 0])

        sourceObserver.send(value: 2)
        #expect(counters.value == [0, 0, 0])
        #expect(sourceSignal.observerCount == 0)
    }

    @Test("testTransform: should not deallocate if it is unreachable but still has at least one observer")
    func transformChainObservedLives() {
        let (sourceSignal, sourceObserver) = Signal<Int, Never>.pipe()
        let counters = LockedTestValue([0, 0, 0])
        var disposable: Disposable?
        func run() {
            disposable =
                sourceSignal
                .map { value -> Int in
                    counters.withValue { $0[0] += 1 }
                    return value
                }
                .map { value -> Int in
                    counters.withValue { $0[1] += 1 }
                    return value
                }
                .map { value -> Int in
                    counters.withValue { $0[2] += 1 }
                    return value
                }
                .observe { _ in }
        }
        run()

        sourceObserver.send(value: 1)
        #expect(counters.value == [1, 1, 1])

        sourceObserver.send(value: 2)
        #expect(counters.value == [2, 2, 2])

        disposable?.dispose()

        sourceObserver.send(value: 3)
        #expect(counters.value == [2, 2, 2])
        #expect(sourceSignal.observerCount == 0)
    }

    // MARK: describe("observe")

    /// The two cases of `observe`: the observer's closure captures a token, which is freed when the
    /// signal ends with `end`, and not before.
    private func observeHandlerReleased(by end: Event<Int, TestError>) {
        let (signal, observer) = Signal<Int, TestError>.pipe()
        let weakToken = WeakBox<Token>()
        do {
            let token = Token()
            weakToken.object = token
            signal.observe { [token] _ in withExtendedLifetime(token) {} }
        }
        #expect(weakToken.object != nil)

        observer.send(value: 1)
        #expect(weakToken.object != nil)

        observer.send(value: 2)
        #expect(weakToken.object != nil)

        observer.send(end)
        #expect(weakToken.object == nil)
    }

    @Test("observe: should deallocate observe handler when signal completes")
    func observeHandlerReleasedOnCompletion() {
        observeHandlerReleased(by: .completed)
    }

    @Test("observe: should deallocate observe handler when signal fails")
    func observeHandlerReleasedOnFailure() {
        observeHandlerReleased(by: .failed(.boom))
    }
}
