import Signals
import Testing

// The behaviours of ReactiveSwift's SignalSpec (the core and the signal operators), written against our
// API. Each test names the spec case it follows; where we differ on purpose, the test asserts our
// behaviour and says so, and APIContracts.md's "Differences from ReactiveSwift" explains why.

@Suite("Conformance: SignalSpec")
struct SignalConformanceTests {
    // MARK: The core

    @Test("SignalSpec: init should run the generator immediately")
    func generatorRunsImmediately() {
        let ran = LockedTestValue(false)
        _ = Signal<Int, Never> { _ in
            ran.withValue { $0 = true }
            return nil
        }
        #expect(ran.value)
    }

    @Test("SignalSpec: should forward events to observers")
    func forwardsEvents() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let first = EventRecorder<Int, TestError>()
        let second = EventRecorder<Int, TestError>()
        signal.observe(first.observer)
        signal.observe(second.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        #expect(first.events == [.value(1), .value(2), .completed])
        #expect(second.events == first.events)
    }

    @Test(
        "SignalSpec: should dispose of the returned disposable upon completion, error and interruption",
        arguments: [Event<Int, TestError>.completed, .failed(.boom), .interrupted])
    func generatorDisposableOnTermination(terminal: Event<Int, TestError>) {
        let disposable = AnyDisposable()
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let signal = Signal<Int, TestError> { observer in
            input.withValue { $0 = observer }
            return disposable
        }
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        #expect(!disposable.isDisposed)
        input.value?.send(terminal)
        #expect(disposable.isDisposed)
        #expect(recorder.events == [terminal])
    }

    @Test(
        "SignalSpec: should not deliver events after completion, error or interruption",
        arguments: [Event<Int, TestError>.completed, .failed(.boom), .interrupted])
    func nothingAfterTerminal(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        input.send(value: 1)
        input.send(terminal)
        input.send(value: 2)
        input.sendCompleted()
        input.send(error: .other)
        input.sendInterrupted()
        #expect(recorder.events == [.value(1), terminal])
    }

    @Test(
        "SignalSpec: an observer added after termination (difference: it gets the actual terminal event, not interrupted)",
        arguments: [Event<Int, TestError>.completed, .failed(.boom), .interrupted])
    func lateObserver(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        input.send(terminal)
        let recorder = EventRecorder<Int, TestError>()
        let disposable = signal.observe(recorder.observer)
        // ReactiveSwift sends `.interrupted` whatever the signal ended with, and returns no disposable.
        #expect(recorder.events == [terminal])
        #expect(disposable.isDisposed)
    }

    @Test("SignalSpec: disposing an observer's disposable stops its events; other observers go on")
    func observerDisposal() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        let disposable = signal.observe(first.observer)
        signal.observe(second.observer)
        input.send(value: 1)
        disposable.dispose()
        input.send(value: 2)
        input.sendCompleted()
        #expect(first.events == [.value(1)])
        #expect(second.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalSpec: a send from inside an observer (difference: queued and delivered next; ReactiveSwift deadlocks)")
    func recursiveSend() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<String>()
        signal.observeValues { value in
            log.append("first \(value)")
            if value == 1 { input.send(value: 2) }
        }
        signal.observeValues { value in log.append("second \(value)") }
        input.send(value: 1)
        #expect(log.entries == ["first 1", "second 1", "first 2", "second 2"])
        input.sendCompleted()  // releases the observer that holds the input
    }

    @Test("SignalSpec: Signal.never should not send any events")
    func never() {
        let recorder = EventRecorder<Int, Never>()
        // Observed, it lives (as ReactiveSwift's): the observation is disposed, or it would never end.
        let observation = Signal<Int, Never>.never.observe(recorder.observer)
        #expect(recorder.events == [])
        observation.dispose()
        #expect(recorder.events == [])
    }

    @Test(
        "SignalSpec: observeValues, observeCompleted, observeFailed, observeInterrupted and observeTerminated see their kind only"
    )
    func convenienceObservers() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        signal.observeValues { log.append("value \($0)") }
        signal.observeCompleted { log.append("completed") }
        signal.observeFailed { log.append("failed \($0)") }
        signal.observeInterrupted { log.append("interrupted") }
        signal.observeTerminated { log.append("terminated") }
        input.send(value: 1)
        input.send(error: .boom)
        #expect(log.entries == ["value 1", "failed boom", "terminated"])
    }

    // MARK: Operators

    @Test("SignalSpec: map should transform the values of the signal")
    func map() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<String, TestError>()
        signal.map { "\($0 * 2)" }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.send(error: .boom)
        #expect(recorder.events == [.value("2"), .value("4"), .failed(.boom)])
    }

    @Test("SignalSpec: mapError should transform the errors of the signal")
    func mapError() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.mapError { _ in TestError.other }.observe(recorder.observer)
        input.send(value: 1)
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .failed(.other)])
    }

    @Test("SignalSpec: filter should omit values from the signal")
    func filter() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.filter { $0.isMultiple(of: 2) }.observe(recorder.observer)
        for value in 1...4 { input.send(value: value) }
        input.sendCompleted()
        #expect(recorder.events == [.value(2), .value(4), .completed])
    }

    @Test("SignalSpec: compactMap should forward only values that aren't nil")
    func compactMap() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<String, Never>()
        signal.compactMap { $0.isMultiple(of: 2) ? "\($0)" : nil }.observe(recorder.observer)
        for value in 1...4 { input.send(value: value) }
        input.sendInterrupted()
        #expect(recorder.events == [.value("2"), .value("4"), .interrupted])
    }

    @Test("SignalSpec: skipRepeats should skip duplicate Equatable values")
    func skipRepeats() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.skipRepeats().observe(recorder.observer)
        for value in [1, 1, 2, 2, 1, 3, 3] { input.send(value: value) }
        input.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(1), .value(3), .completed])
    }

    @Test("SignalSpec: skipRepeats should skip values according to a predicate")
    func skipRepeatsPredicate() {
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<String, Never>()
        signal.skipRepeats { $0.count == $1.count }.observe(recorder.observer)
        for value in ["a", "b", "cc", "d", "ee", "ff"] { input.send(value: value) }
        #expect(recorder.values == ["a", "cc", "d", "ee"])
    }

    @Test("SignalSpec: skipRepeats should not store strong references to previously passed items")
    func skipRepeatsReleasesItems() {
        let released = TestLog<String>()
        let (signal, input) = Signal<ReleaseLogger, Never>.pipe()
        signal.skipRepeats { $0.name.first == $1.name.first }.observeValues { _ in }
        input.send(value: ReleaseLogger("a1", log: released))
        #expect(released.entries == [])
        input.send(value: ReleaseLogger("b1", log: released))
        #expect(released.entries == ["a1"])
        input.send(value: ReleaseLogger("b2", log: released))
        #expect(released.entries == ["a1", "b2"])
        input.send(value: ReleaseLogger("a2", log: released))
        #expect(released.entries == ["a1", "b2", "b1"])
        input.sendCompleted()
        #expect(released.entries == ["a1", "b2", "b1", "a2"])
    }

    @Test("SignalSpec: scan should incrementally accumulate a value")
    func scan() {
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<String, Never>()
        signal.scan("", +).observe(recorder.observer)
        input.send(value: "a")
        input.send(value: "b")
        input.send(value: "c")
        input.sendCompleted()
        #expect(recorder.events == [.value("a"), .value("ab"), .value("abc"), .completed])
    }

    @Test("SignalSpec: scan(into:) should incrementally accumulate a value")
    func scanInto() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        signal.scan(into: []) { $0.append($1) }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(recorder.values == [[1], [1, 2]])
    }

    @Test("SignalSpec: take should take initial values and complete immediately after taking the given number")
    func take() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.take(first: 2).observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.value(1)])
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        input.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test(
        "SignalSpec: take should interrupt when 0 (difference: ours completes, as the late-observer rule gives the real terminal event)"
    )
    func takeZero() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.take(first: 0).observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.completed])
    }

    @Test("SignalSpec: merge should forward values from all signals and complete when all have completed")
    func merge() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        Signal.merge(first, second).observe(recorder.observer)
        firstInput.send(value: 1)
        secondInput.send(value: 2)
        firstInput.sendCompleted()
        secondInput.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .value(3)])
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test("SignalSpec: merge should forward an error or interruption from any signal at once")
    func mergeForwardsFailure() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        first.merge(with: second).observe(recorder.observer)
        firstInput.send(value: 1)
        secondInput.send(error: .boom)
        firstInput.send(value: 2)
        #expect(recorder.events == [.value(1), .failed(.boom)])
    }

    @Test("SignalSpec: on should attach event handlers, in order, before the event is forwarded, then disposed")
    func on() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        signal.on(
            event: { log.append("event \($0)") },
            value: { log.append("value \($0)") },
            failed: { log.append("failed \($0)") },
            completed: { log.append("completed") },
            interrupted: { log.append("interrupted") },
            terminated: { log.append("terminated") },
            disposed: { log.append("disposed") }
        ).observe { log.append("observer \($0)") }
        input.send(value: 1)
        input.sendCompleted()
        #expect(
            log.entries == [
                "event value(1)", "value 1", "observer value(1)",
                "event completed", "completed", "terminated", "observer completed", "disposed",
            ])
    }

    @Test("SignalSpec: observeOn should send events on the given scheduler")
    func observeOn() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observe(on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        #expect(recorder.events == [])
        scheduler.run()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalSpec: delay should send events on the given scheduler after the interval")
    func delay() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.delay(.seconds(10), on: scheduler).observe(recorder.observer)
        scheduler.schedule { input.send(value: 1) }
        scheduler.schedule(after: .seconds(5)) {
            input.send(value: 2)
            input.sendCompleted()
        }
        scheduler.advance(by: .seconds(4))
        #expect(recorder.events == [])
        scheduler.advance(by: .seconds(10))
        #expect(recorder.events == [.value(1)])
        scheduler.advance(by: .seconds(10))
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalSpec: delay should schedule errors immediately")
    func delayFailure() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.delay(.seconds(10), on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        input.send(error: .boom)
        // Scheduled without delay: it arrives at the scheduler's next turn, and the value still waiting
        // is dropped.
        #expect(recorder.events == [])
        scheduler.advance()
        #expect(recorder.events == [.failed(.boom)])
        scheduler.run()
        #expect(recorder.events == [.failed(.boom)])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("SignalSpec: logEvents should output the events (difference: our own timestamped one-line format)")
    func logEvents() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let lines = TestLog<String>()
        signal.logEvents(identifier: "id", logger: lines.append).observe { _ in }
        input.send(value: 1)
        input.sendCompleted()
        let suffixes = lines.entries.map { $0.split(separator: "] ", maxSplits: 1).last.map(String.init) ?? "" }
        #expect(suffixes == ["[id] value(1)", "[id] completed"])
    }
}

/// An object that logs its name when it is freed.
private final class ReleaseLogger: Sendable {
    let name: String
    private let log: TestLog<String>

    init(_ name: String, log: TestLog<String>) {
        self.name = name
        self.log = log
    }

    deinit {
        log.append(name)
    }
}

// MARK: Time and trigger operators (issue 11)

extension SignalConformanceTests {
    @Test("SignalSpec: throttle should send values on the given scheduler at no less than the interval")
    func throttleInterval() {
        let scheduler = TestScheduler()
        let (base, input) = Signal<Int, Never>.pipe()
        let values = TestLog<Int>()
        base.throttle(.seconds(1), on: scheduler).observeValues { values.append($0) }
        input.send(value: 0)
        #expect(values.entries == [])
        scheduler.advance()
        #expect(values.entries == [0])
        input.send(value: 1)
        input.send(value: 2)
        #expect(values.entries == [0])
        scheduler.advance(by: .milliseconds(1500))
        #expect(values.entries == [0, 2])
        scheduler.advance(by: .seconds(3))
        input.send(value: 3)
        #expect(values.entries == [0, 2])
        scheduler.advance()
        #expect(values.entries == [0, 2, 3])
        input.send(value: 4)
        input.send(value: 5)
        scheduler.advance()
        #expect(values.entries == [0, 2, 3])
        scheduler.run()
        #expect(values.entries == [0, 2, 3, 5])
        // (The spec's `rewind(by:)` steps are left out: our TestScheduler's clock never goes back.)
    }

    @Test("SignalSpec: throttle should schedule completion immediately")
    func throttleCompletion() {
        let scheduler = TestScheduler()
        let (base, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        base.throttle(.seconds(1), on: scheduler).observe(recorder.observer)
        input.send(value: 0)
        scheduler.advance()
        input.send(value: 1)
        input.sendCompleted()
        #expect(recorder.events == [.value(0)])
        scheduler.advance()
        #expect(recorder.events == [.value(0), .completed])
        scheduler.run()
        #expect(recorder.events == [.value(0), .completed])
    }

    @Test(
        "SignalSpec: debounce discarding the latest value when terminated: should send values once the interval has passed since the last value was sent, and should schedule completion immediately"
    )
    func debounceDiscarding() {
        let scheduler = TestScheduler()
        let (base, input) = Signal<Int, Never>.pipe()
        let values = TestLog<Int>()
        base.debounce(.seconds(1), on: scheduler, discardWhenCompleted: true).observeValues { values.append($0) }
        input.send(value: 0)
        scheduler.advance()
        input.send(value: 1)
        input.send(value: 2)
        #expect(values.entries == [])
        scheduler.advance(by: .milliseconds(1500))
        #expect(values.entries == [2])
        scheduler.advance(by: .seconds(3))
        input.send(value: 3)
        scheduler.advance()
        input.send(value: 4)
        input.send(value: 5)
        scheduler.advance()
        #expect(values.entries == [2])
        scheduler.run()
        #expect(values.entries == [2, 5])

        let (other, otherInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        other.debounce(.seconds(1), on: scheduler, discardWhenCompleted: true).observe(recorder.observer)
        otherInput.send(value: 0)
        scheduler.advance()
        otherInput.send(value: 1)
        otherInput.sendCompleted()
        #expect(recorder.events == [])
        scheduler.advance()
        #expect(recorder.events == [.completed])
        scheduler.run()
        #expect(recorder.events == [.completed])
    }

    @Test(
        "SignalSpec: debounce without discarding the latest value when terminated: should schedule completion after sending the last value, or immediately if there is no pending value"
    )
    func debounceKeeping() {
        let scheduler = TestScheduler()
        let (base, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        base.debounce(.seconds(1), on: scheduler, discardWhenCompleted: false).observe(recorder.observer)
        input.send(value: 0)
        scheduler.advance()
        input.send(value: 1)
        scheduler.advance()
        input.sendCompleted()
        scheduler.advance()
        #expect(recorder.events == [])
        scheduler.run()
        #expect(recorder.events == [.value(1), .completed])

        let (other, otherInput) = Signal<Int, Never>.pipe()
        let completed = EventRecorder<Int, Never>()
        other.debounce(.seconds(1), on: scheduler, discardWhenCompleted: false).observe(completed.observer)
        otherInput.sendCompleted()
        #expect(completed.events == [])
        scheduler.advance()
        #expect(completed.events == [.completed])
    }

    @Test(
        "SignalSpec: timeoutWithError should complete if within the interval, and should time out outside the interval")
    func timeoutWithError() {
        let scheduler = TestScheduler()
        let (base, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        base.timeout(after: .seconds(2), raising: .boom, on: scheduler).observe(recorder.observer)
        scheduler.schedule(after: .seconds(1)) { input.sendCompleted() }
        scheduler.run()
        #expect(recorder.events == [.completed])

        let (late, lateInput) = Signal<Int, TestError>.pipe()
        let timedOut = EventRecorder<Int, TestError>()
        late.timeout(after: .seconds(2), raising: .boom, on: scheduler).observe(timedOut.observer)
        scheduler.schedule(after: .seconds(3)) { lateInput.sendCompleted() }
        scheduler.run()
        #expect(timedOut.events == [.failed(.boom)])
    }

    @Test(
        "SignalSpec: sampleWith should forward the latest value when the sampler fires, do nothing before a value, send the latest value multiple times, and complete only when both inputs have completed"
    )
    func sampleWith() {
        let (base, input) = Signal<Int, Never>.pipe()
        let (sampler, samplerInput) = Signal<String, Never>.pipe()
        let log = TestLog<String>()
        base.sample(with: sampler).observe { event in
            if case let .value((value, sample)) = event {
                log.append("\(value)\(sample)")
            } else {
                log.append("\(event)")
            }
        }
        samplerInput.send(value: "a")
        input.send(value: 1)
        input.send(value: 2)
        samplerInput.send(value: "b")
        samplerInput.send(value: "c")
        input.sendCompleted()
        #expect(log.entries == ["2b", "2c"])
        samplerInput.sendCompleted()
        #expect(log.entries == ["2b", "2c", "completed"])
    }

    @Test("SignalSpec: sampleOn should emit an initial value if the sampler is a synchronous SignalProducer")
    func sampleOnSynchronousSampler() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).sample(on: SignalProducer(value: ())).start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test(
        "SignalSpec: takeUntil should take values until the trigger fires, and should complete if the trigger fires immediately"
    )
    func takeUntil() {
        let (base, input) = Signal<Int, Never>.pipe()
        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        base.take(until: trigger).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        triggerInput.send(value: ())
        input.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .completed])

        let (other, otherInput) = Signal<Int, Never>.pipe()
        let (immediate, immediateInput) = Signal<Void, Never>.pipe()
        let completed = EventRecorder<Int, Never>()
        other.take(until: immediate).observe(completed.observer)
        immediateInput.send(value: ())
        otherInput.send(value: 1)
        #expect(completed.events == [.completed])
    }

    @Test("SignalSpec: skipUntil should skip values until the trigger fires, and until the trigger completes")
    func skipUntil() {
        for completesTrigger in [false, true] {
            let (base, input) = Signal<Int, Never>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            base.skip(until: trigger).observe(recorder.observer)
            input.send(value: 1)
            input.send(value: 2)
            if completesTrigger { triggerInput.sendCompleted() } else { triggerInput.send(value: ()) }
            input.send(value: 3)
            input.send(value: 4)
            #expect(recorder.events == [.value(3), .value(4)])
        }
    }

    @Test(
        "SignalSpec: skipUntil differs: a source that ends before the trigger fires ends the result at once (ReactiveSwift waits for the trigger, then interrupts)"
    )
    func skipUntilSourceEndsFirst() {
        let (base, input) = Signal<Int, Never>.pipe()
        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        base.skip(until: trigger).observe(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(recorder.events == [.completed])
        withExtendedLifetime(triggerInput) {}
    }

    @Test("SignalSpec: take(during:) completes the signal when the lifetime ends, and at once if it already has")
    func takeDuring() {
        let (lifetime, token) = Lifetime.make()
        let (base, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        base.take(during: lifetime).observe(recorder.observer)
        input.send(value: 1)
        token.dispose()
        #expect(recorder.events == [.value(1), .completed])

        let ended = EventRecorder<Int, Never>()
        base.take(during: .empty).observe(ended.observer)
        #expect(ended.events == [.completed])
    }
}
