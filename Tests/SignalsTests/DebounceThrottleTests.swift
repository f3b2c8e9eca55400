import Signals
import Testing

/// An event and the virtual time an observer heard it at.
struct HeardAt<Value: Equatable & Sendable, Failure: Swift.Error & Equatable>: Equatable, Sendable,
    CustomStringConvertible
{
    let time: Duration
    let event: Event<Value, Failure>

    init(_ time: Duration, _ event: Event<Value, Failure>) {
        self.time = time
        self.event = event
    }

    var description: String { "\(event)@\(time)" }
}

/// Records each event with the virtual time of `scheduler` when it was heard.
func timedObserver<Value: Equatable & Sendable, Failure: Swift.Error & Equatable>(
    _ log: TestLog<HeardAt<Value, Failure>>,
    _ scheduler: TestScheduler
) -> Observer<Value, Failure> {
    Observer { event in log.append(HeardAt(scheduler.now, event)) }
}

@Suite("debounce")
struct DebounceTests {
    typealias Heard = HeardAt<Int, TestError>

    @Test("debounce sends a value once the interval has passed with no newer value")
    func debounceValues() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.debounce(.seconds(1), on: scheduler).observe(timedObserver(log, scheduler))

        input.send(value: 1)
        scheduler.advance(by: .milliseconds(500))
        input.send(value: 2)  // replaces 1 and restarts the wait
        scheduler.advance(by: .milliseconds(999))
        #expect(log.entries == [])
        #expect(scheduler.pendingActionCount == 1)
        scheduler.advance(by: .milliseconds(1))
        input.send(value: 3)
        scheduler.advance(by: .seconds(5))
        #expect(log.entries == [Heard(.milliseconds(1500), .value(2)), Heard(.milliseconds(2500), .value(3))])
        #expect(scheduler.pendingActionCount == 0)
        // The observer keeps the scheduler: the test ends the stream, so that nothing is left waiting
        // in the scheduler for an observer that keeps it (a reference cycle until the action runs).
        input.sendCompleted()
        scheduler.advance()
        #expect(
            log.entries == [
                Heard(.milliseconds(1500), .value(2)), Heard(.milliseconds(2500), .value(3)),
                Heard(.milliseconds(6500), .completed),
            ])
    }

    @Test("debounce drops the waiting value on completion and completes through the scheduler")
    func debounceDiscardsWhenCompleted() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.debounce(.seconds(1), on: scheduler).observe(timedObserver(log, scheduler))
        input.send(value: 1)
        input.sendCompleted()
        #expect(log.entries == [])
        scheduler.advance()
        #expect(log.entries == [Heard(.zero, .completed)])
        scheduler.run()
        #expect(log.entries == [Heard(.zero, .completed)])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("debounce with discardWhenCompleted false sends the waiting value when due, then completes")
    func debounceKeepsWhenCompleted() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.debounce(.seconds(1), on: scheduler, discardWhenCompleted: false).observe(timedObserver(log, scheduler))
        input.send(value: 1)
        scheduler.advance(by: .milliseconds(300))
        input.sendCompleted()
        scheduler.run()
        #expect(log.entries == [Heard(.seconds(1), .value(1)), Heard(.seconds(1), .completed)])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("debounce with discardWhenCompleted false and nothing waiting completes through the scheduler")
    func debounceKeepsWithNothingWaiting() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.debounce(.seconds(1), on: scheduler, discardWhenCompleted: false).observe(timedObserver(log, scheduler))
        input.send(value: 1)
        scheduler.advance(by: .seconds(2))
        input.sendCompleted()
        scheduler.advance()
        #expect(log.entries == [Heard(.seconds(1), .value(1)), Heard(.seconds(2), .completed)])
    }

    @Test("debounce forwards a failure and an interruption through the scheduler at once, dropping the waiting value")
    func debounceFailureAndInterruption() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, TestError>.pipe()
            let log = TestLog<Heard>()
            signal.debounce(.seconds(1), on: scheduler, discardWhenCompleted: false).observe(
                timedObserver(log, scheduler))
            input.send(value: 1)
            input.send(terminal)
            scheduler.run()
            #expect(log.entries == [Heard(.zero, terminal)])
            #expect(scheduler.pendingActionCount == 0)
        }
    }

    @Test("disposing a debounced run interrupts it and cancels the waiting value")
    func debounceDisposal() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let (signal, input) = Signal<Int, Never>.pipe()
        let run = SignalProducer(signal).debounce(.seconds(1), on: scheduler).start(recorder.observer)
        input.send(value: 1)
        #expect(scheduler.pendingActionCount == 1)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(signal.observerCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test("disposing a debounced run whose upstream completed cancels the scheduled value and completion")
    func debounceDisposalAfterUpstreamEnded() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>(values: 1, 2)
            .debounce(.seconds(1), on: scheduler, discardWhenCompleted: false)
            .start(recorder.observer)
        #expect(scheduler.pendingActionCount == 1)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test("a debounced producer: each run has its own wait")
    func debounceProducer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2, 3)
            .debounce(.seconds(1), on: scheduler, discardWhenCompleted: false)
            .start(recorder.observer)
        scheduler.run()
        #expect(recorder.events == [.value(3), .completed])
    }

    @Test("an observer of a debounced signal that sends into the source is queued, and the new value is debounced")
    func debounceReentrancy() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<HeardAt<Int, Never>>()
        let debounced = signal.debounce(.seconds(1), on: scheduler)
        debounced.observe(
            Observer { event in
                log.append(HeardAt(scheduler.now, event))
                if case let .value(value) = event, value < 3 { input.send(value: value + 1) }
            })
        input.send(value: 1)
        scheduler.advance(by: .seconds(10))
        input.sendCompleted()
        scheduler.run()
        #expect(
            log.entries == [
                HeardAt(.seconds(1), .value(1)), HeardAt(.seconds(2), .value(2)), HeardAt(.seconds(3), .value(3)),
                HeardAt(.seconds(10), .completed),
            ])
        withExtendedLifetime(debounced) {}
    }

    @Test("debounce with sends from many threads while the clock advances: the last upstream value is sent last")
    func debounceThreads() {
        for _ in 0..<20 {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, Never>.pipe()
            let lastSeen = LockedTestValue<Int?>(nil)
            signal.observeValues { value in lastSeen.withValue { $0 = value } }
            let recorder = EventRecorder<Int, Never>()
            signal.debounce(.milliseconds(1), on: scheduler, discardWhenCompleted: false).observe(recorder.observer)
            Watchdog.runOnThreads(4) { thread in
                if thread == 3 {
                    for _ in 0..<500 { scheduler.advance(by: .microseconds(300)) }
                } else {
                    for value in 0..<500 { input.send(value: thread * 1000 + value) }
                }
            }
            input.sendCompleted()
            scheduler.run()
            #expect(recorder.followsGrammar)
            #expect(recorder.events.last == .completed)
            #expect(recorder.values.last == lastSeen.value)
            #expect(Set(recorder.values).count == recorder.values.count)
            #expect(scheduler.pendingActionCount == 0)
        }
    }
}

@Suite("throttle")
struct ThrottleTests {
    typealias Heard = HeardAt<Int, TestError>

    @Test("throttle sends the first value at once, then the latest at most once per interval")
    func throttleValues() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.throttle(.seconds(1), on: scheduler).observe(timedObserver(log, scheduler))

        input.send(value: 0)
        scheduler.advance()
        #expect(log.entries == [Heard(.zero, .value(0))])
        input.send(value: 1)
        scheduler.advance(by: .milliseconds(300))
        input.send(value: 2)  // replaces 1
        scheduler.advance(by: .milliseconds(700))
        #expect(log.entries == [Heard(.zero, .value(0)), Heard(.seconds(1), .value(2))])
        scheduler.advance(by: .seconds(3))
        input.send(value: 3)  // long after the last one: at once
        scheduler.advance()
        #expect(log.entries == [Heard(.zero, .value(0)), Heard(.seconds(1), .value(2)), Heard(.seconds(4), .value(3))])
        #expect(scheduler.pendingActionCount == 0)
        // The observer keeps the scheduler: end the stream so that nothing is left waiting for it.
        input.sendCompleted()
        scheduler.advance()
        #expect(
            log.entries == [
                Heard(.zero, .value(0)), Heard(.seconds(1), .value(2)), Heard(.seconds(4), .value(3)),
                Heard(.seconds(4), .completed),
            ])
    }

    @Test("throttle schedules completion at once and drops a value still waiting for its interval")
    func throttleCompletion() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.throttle(.seconds(1), on: scheduler).observe(timedObserver(log, scheduler))
        input.send(value: 0)
        scheduler.advance()
        input.send(value: 1)
        input.sendCompleted()
        #expect(log.entries == [Heard(.zero, .value(0))])
        scheduler.advance()
        #expect(log.entries == [Heard(.zero, .value(0)), Heard(.zero, .completed)])
        scheduler.run()
        #expect(log.entries == [Heard(.zero, .value(0)), Heard(.zero, .completed)])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("throttle forwards failure and interruption through the scheduler, after a value already due")
    func throttleFailureAndInterruption() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, TestError>.pipe()
            let log = TestLog<Heard>()
            signal.throttle(.seconds(1), on: scheduler).observe(timedObserver(log, scheduler))
            input.send(value: 0)
            input.send(terminal)
            scheduler.run()
            #expect(log.entries == [Heard(.zero, .value(0)), Heard(.zero, terminal)])
            #expect(scheduler.pendingActionCount == 0)
        }
    }

    @Test("disposing a throttled run interrupts it and cancels the waiting value")
    func throttleDisposal() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let (signal, input) = Signal<Int, Never>.pipe()
        let run = SignalProducer(signal).throttle(.seconds(1), on: scheduler).start(recorder.observer)
        input.send(value: 1)
        scheduler.advance()
        input.send(value: 2)
        #expect(scheduler.pendingActionCount == 1)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(signal.observerCount == 0)
        scheduler.run()
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test("a throttled producer whose values are all synchronous sends the last one, then completes")
    func throttleProducer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2, 3).throttle(.seconds(1), on: scheduler).start(recorder.observer)
        scheduler.run()
        #expect(recorder.events == [.value(3), .completed])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("an observer of a throttled signal that sends into the source is queued and throttled")
    func throttleReentrancy() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<HeardAt<Int, Never>>()
        let throttled = signal.throttle(.seconds(1), on: scheduler)
        throttled.observe(
            Observer { event in
                log.append(HeardAt(scheduler.now, event))
                if case let .value(value) = event, value < 3 { input.send(value: value + 1) }
            })
        input.send(value: 1)
        scheduler.advance(by: .seconds(10))
        input.sendCompleted()
        scheduler.run()
        #expect(
            log.entries == [
                HeardAt(.zero, .value(1)), HeardAt(.seconds(1), .value(2)), HeardAt(.seconds(2), .value(3)),
                HeardAt(.seconds(10), .completed),
            ])
        withExtendedLifetime(throttled) {}
    }

    @Test("throttle with sends from many threads while the clock advances: spaced values, one terminal event")
    func throttleThreads() {
        for _ in 0..<20 {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, Never>.pipe()
            let log = TestLog<HeardAt<Int, Never>>()
            signal.throttle(.milliseconds(1), on: scheduler).observe(timedObserver(log, scheduler))
            Watchdog.runOnThreads(4) { thread in
                if thread == 3 {
                    for _ in 0..<500 { scheduler.advance(by: .microseconds(300)) }
                } else {
                    for value in 0..<500 { input.send(value: thread * 1000 + value) }
                }
            }
            input.sendCompleted()
            scheduler.run()
            let entries = log.entries
            #expect(entries.last?.event == .completed)
            #expect(entries.dropLast().allSatisfy { $0.event.value != nil })
            let times = entries.dropLast().map(\.time)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= .milliseconds(1) })
            #expect(scheduler.pendingActionCount == 0)
        }
    }
}

@Suite("debounce and throttle: what the scheduler keeps")
struct DebounceThrottleOwnershipTests {
    // A test that ends with a terminal event still waiting in its `TestScheduler` drops the scheduler
    // with the action. Neither the action nor what ends with the result may keep the scheduler or the
    // result alive, or the scheduler, the operator and the result leak together (a reference cycle that
    // LeakSanitizer found).
    @Test(
        "a scheduler dropped with a debounce's or throttle's terminal event pending is freed, and the result is interrupted",
        arguments: ["debounce", "throttle"]
    )
    func droppedSchedulerIsFreed(operatorName: String) {
        let recorder = EventRecorder<Int, Never>()
        let freed = WeakBox<TestScheduler>()
        do {
            let scheduler = TestScheduler()
            freed.object = scheduler
            let (signal, input) = Signal<Int, Never>.pipe()
            let result =
                operatorName == "debounce"
                ? signal.debounce(.seconds(1), on: scheduler)
                : signal.throttle(.seconds(1), on: scheduler)
            result.observe(recorder.observer)
            input.send(value: 1)
            scheduler.advance(by: .seconds(2))
            input.sendCompleted()
            #expect(scheduler.pendingActionCount == 1)
        }
        #expect(freed.object == nil)
        #expect(recorder.events == [.value(1), .interrupted])
    }
}

extension DebounceThrottleOwnershipTests {
    @Test(
        "a scheduler dropped with a throttled value still waiting for its interval is freed", arguments: [false, true])
    func droppedSchedulerWithWaitingValueIsFreed(endsUpstream: Bool) {
        let recorder = EventRecorder<Int, Never>()
        let freed = WeakBox<TestScheduler>()
        let (signal, input) = Signal<Int, Never>.pipe()
        do {
            let scheduler = TestScheduler()
            freed.object = scheduler
            signal.throttle(.seconds(1), on: scheduler).observe(recorder.observer)
            input.send(value: 1)
            scheduler.advance()
            input.send(value: 2)  // waits for the interval: a firing is pending
            if endsUpstream { input.sendCompleted() }
            #expect(scheduler.pendingActionCount == (endsUpstream ? 2 : 1))
        }
        // While the upstream lives, its observer keeps the scheduler (it still needs it); once the
        // upstream has ended, nothing does.
        #expect((freed.object == nil) == endsUpstream)
        #expect(recorder.events == (endsUpstream ? [.value(1), .interrupted] : [.value(1)]))
        withExtendedLifetime(input) {}
    }
}

extension DebounceThrottleOwnershipTests {
    @Test("a scheduler dropped with a timer's repeating action scheduled is freed, and the run is interrupted")
    func droppedSchedulerWithTimerIsFreed() {
        let recorder = EventRecorder<Duration, Never>()
        let freed = WeakBox<TestScheduler>()
        do {
            let scheduler = TestScheduler()
            freed.object = scheduler
            SignalProducer<Duration, Never>.timer(interval: .seconds(1), on: scheduler).start(recorder.observer)
            scheduler.advance(by: .seconds(2))
            #expect(scheduler.pendingActionCount == 1)
        }
        #expect(freed.object == nil)
        #expect(recorder.events == [.value(.seconds(1)), .value(.seconds(2)), .interrupted])
    }

    /// A time scheduler whose clock is read through user code: `now` runs `onRead` first.
    final class ObservedClockScheduler: TimeScheduler, @unchecked Sendable {
        // Safe: `onRead` is set once, before the scheduler is used from other threads.
        let base = TestScheduler()
        var onRead: @Sendable () -> Void = {}
        var now: Duration { onRead(); return base.now }
        func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? { base.schedule(action) }
        func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> Disposable? {
            base.schedule(after: delay, action: action)
        }
        func schedule(
            after delay: Duration, interval: Duration, leeway: Duration, action: @escaping @Sendable () -> Void
        ) -> Disposable? {
            base.schedule(after: delay, interval: interval, leeway: leeway, action: action)
        }
    }

    @Test(
        "throttle reads the scheduler's clock with no lock held: a clock that sends into the source does not deadlock")
    func throttleReadsClockUnlocked() {
        let scheduler = ObservedClockScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.throttle(.seconds(1), on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        scheduler.base.advance()
        input.send(value: 2)  // waits for its interval
        let reads = LockedTestValue(0)
        scheduler.onRead = {
            // Sends into the throttle's source from inside `now`, as the firing reads the clock: the
            // throttle must not hold its lock here, or this send deadlocks on it.
            if reads.withValue({
                $0 += 1; return $0
            }) == 1 {
                input.send(value: 3)
            }
        }
        #expect(Watchdog.runOnThreads(1) { _ in scheduler.base.advance(by: .seconds(1)) })
        scheduler.onRead = {}
        scheduler.base.run()
        // 3 arrived while the firing read the clock, before it took the waiting value: the latest wins.
        #expect(recorder.events == [.value(1), .value(3)])
    }
}
