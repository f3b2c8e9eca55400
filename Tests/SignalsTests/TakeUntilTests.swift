import Signals
import Testing

@Suite("take(until:), take(during:), skip(until:)")
struct TakeUntilTests {
    @Test("take(until:) forwards until the trigger sends, then completes and detaches from both")
    func takeUntilValues() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(until: trigger).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        triggerInput.send(value: ())
        input.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(signal.observerCount == 0)
        #expect(trigger.observerCount == 0)
    }

    @Test("take(until:) completes when the trigger completes, ignores its interruption, forwards the source's end")
    func takeUntilTerminals() {
        do {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.take(until: trigger).observe(recorder.observer)
            triggerInput.sendCompleted()
            #expect(recorder.events == [.completed])
            withExtendedLifetime(input) {}
        }
        do {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.take(until: trigger).observe(recorder.observer)
            triggerInput.sendInterrupted()
            input.send(value: 1)
            #expect(recorder.events == [.value(1)])
        }
        for terminal in [Event<Int, TestError>.failed(.boom), .completed, .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (trigger, _) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.take(until: trigger).observe(recorder.observer)
            input.send(terminal)
            #expect(recorder.events == [terminal])
            #expect(trigger.observerCount == 0)
        }
    }

    @Test(
        "a producer's take(until:) starts the trigger first: a trigger that fires at once means the producer never starts"
    )
    func takeUntilProducer() {
        let started = LockedTestValue(false)
        let producer = SignalProducer<Int, Never> { observer, _ in
            started.withValue { $0 = true }
            observer.send(value: 1)
        }
        let recorder = EventRecorder<Int, Never>()
        producer.take(until: SignalProducer(value: ())).start(recorder.observer)
        #expect(recorder.events == [.completed])
        #expect(!started.value)

        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let second = EventRecorder<Int, Never>()
        let ended = LockedTestValue(false)
        SignalProducer<Int, Never> { observer, lifetime in
            observer.send(value: 1)
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.withValue { $0 = true }
            }
        }.take(until: trigger).start(second.observer)
        triggerInput.send(value: ())
        #expect(second.events == [.value(1), .completed])
        #expect(ended.value)
    }

    @Test("disposing a take(until:) run interrupts it and detaches from the trigger")
    func takeUntilDisposal() {
        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>.never.take(until: trigger).start(recorder.observer)
        #expect(trigger.observerCount == 1)
        run.dispose()
        #expect(recorder.events == [.interrupted])
        #expect(trigger.observerCount == 0)
        withExtendedLifetime(triggerInput) {}
    }

    @Test("an observer of take(until:) that fires the trigger during delivery completes the result after the value")
    func takeUntilReentrancy() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let (trigger, triggerInput) = Signal<Void, Never>.pipe()
        let log = TestLog<Event<Int, Never>>()
        let result = signal.take(until: trigger)
        result.observe(
            Observer { event in
                log.append(event)
                if case .value(1) = event {
                    input.send(value: 2)
                    triggerInput.send(value: ())
                    input.send(value: 3)
                }
            })
        input.send(value: 1)
        #expect(log.entries == [.value(1), .completed])
        withExtendedLifetime(result) {}
    }

    @Test("take(until:) with the source and the trigger on different threads: grammar and one completion")
    func takeUntilThreads() {
        for _ in 0..<200 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            signal.take(until: trigger).observe(recorder.observer)
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for value in 0..<100 { input.send(value: value) }
                } else {
                    triggerInput.send(value: ())
                }
            }
            #expect(recorder.followsGrammar)
            #expect(recorder.events.last == .completed)
            #expect(recorder.values == Array(0..<recorder.values.count))
        }
    }

    @Test("take(during:) forwards until the lifetime ends, then completes; an ended lifetime completes at once")
    func takeDuring() {
        let (lifetime, token) = Lifetime.make()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(during: lifetime).observe(recorder.observer)
        input.send(value: 1)
        token.dispose()
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .completed])
        #expect(signal.observerCount == 0)

        let late = EventRecorder<Int, TestError>()
        let started = LockedTestValue(0)
        SignalProducer<Int, TestError> { _, _ in started.withValue { $0 += 1 } }
            .take(during: .empty).start(late.observer)
        #expect(late.events == [.completed])
        #expect(started.value == 0)

        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let (lifetime, token) = Lifetime.make()
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.take(during: lifetime).observe(recorder.observer)
            input.send(terminal)
            token.dispose()
            #expect(recorder.events == [terminal])
        }
    }

    @Test("take(during:) with the lifetime ended from another thread: grammar and one completion")
    func takeDuringThreads() {
        for _ in 0..<200 {
            let (lifetime, token) = Lifetime.make()
            let (signal, input) = Signal<Int, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            let run = SignalProducer(signal).take(during: lifetime).start(recorder.observer)
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for value in 0..<100 { input.send(value: value) }
                } else {
                    token.dispose()
                }
            }
            run.dispose()
            #expect(recorder.followsGrammar)
            #expect(recorder.events.last == .completed)
        }
    }

    @Test("skip(until:) drops values until the trigger sends or completes, then forwards everything")
    func skipUntilValues() {
        for fire in [true, false] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.skip(until: trigger).observe(recorder.observer)
            input.send(value: 1)
            if fire { triggerInput.send(value: ()) } else { triggerInput.sendCompleted() }
            input.send(value: 2)
            input.sendCompleted()
            #expect(recorder.events == [.value(2), .completed])
            #expect(trigger.observerCount == 0)
        }
    }

    @Test(
        "skip(until:) forwards the source's terminal event before the trigger fires; an interrupted trigger opens nothing"
    )
    func skipUntilTerminals() {
        for terminal in [Event<Int, TestError>.failed(.boom), .completed, .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.skip(until: trigger).observe(recorder.observer)
            triggerInput.sendInterrupted()
            input.send(value: 1)
            input.send(terminal)
            #expect(recorder.events == [terminal])
            #expect(trigger.observerCount == 0)
        }
    }

    @Test("a producer's skip(until:) starts the trigger first, and disposing a run interrupts both")
    func skipUntilProducer() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).skip(until: SignalProducer(value: ())).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .completed])

        let ended = TestLog<String>()
        let trigger = SignalProducer<Void, Never> { observer, lifetime in
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.append("trigger")
            }
        }
        let source = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.append("source")
            }
        }
        let disposed = EventRecorder<Int, Never>()
        source.skip(until: trigger).start(disposed.observer).dispose()
        #expect(disposed.events == [.interrupted])
        #expect(Set(ended.entries) == ["trigger", "source"])
    }

    @Test("an observer of skip(until:) that sends into the source during delivery is queued")
    func skipUntilReentrancy() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<Event<Int, Never>>()
        let result = signal.skip(until: Signal<Void, Never>.empty)
        result.observe(
            Observer { event in
                log.append(event)
                if case let .value(value) = event, value < 3 { input.send(value: value + 1) }
            })
        input.send(value: 1)
        #expect(log.entries == [.value(1), .value(2), .value(3)])
        // The observer keeps the input: ending the stream releases it.
        input.sendCompleted()
        #expect(log.entries == [.value(1), .value(2), .value(3), .completed])
        withExtendedLifetime(result) {}
    }

    @Test("skip(until:) with the trigger firing from another thread: the forwarded values are a suffix, in order")
    func skipUntilThreads() {
        for _ in 0..<200 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let (trigger, triggerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            signal.skip(until: trigger).observe(recorder.observer)
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for value in 0..<100 { input.send(value: value) }
                } else {
                    triggerInput.send(value: ())
                }
            }
            input.sendCompleted()
            let values = recorder.values
            #expect(values == Array((100 - values.count)..<100))
            #expect(recorder.events.last == .completed)
        }
    }
}

extension Signal where Value == Void, Error == Never {
    /// A signal that has already completed.
    static var empty: Signal {
        let (signal, input) = Signal.pipe()
        input.sendCompleted()
        return signal
    }
}
