import Signals
import Testing

@Suite("timeout")
struct TimeoutTests {
    typealias Heard = HeardAt<Int, TestError>

    @Test("timeout forwards values and completion that come in time, and cancels the deadline")
    func timeoutInTime() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.timeout(after: .seconds(2), raising: .other, on: scheduler).observe(timedObserver(log, scheduler))
        scheduler.advance(by: .seconds(1))
        input.send(value: 1)
        input.sendCompleted()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(log.entries == [Heard(.seconds(1), .value(1)), Heard(.seconds(1), .completed)])
    }

    @Test("timeout fails with the error at the deadline and detaches from the source")
    func timeoutFires() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Heard>()
        signal.timeout(after: .seconds(2), raising: .other, on: scheduler).observe(timedObserver(log, scheduler))
        input.send(value: 1)
        scheduler.advance(by: .seconds(2))
        input.send(value: 2)
        #expect(log.entries == [Heard(.zero, .value(1)), Heard(.seconds(2), .failed(.other))])
        #expect(signal.observerCount == 0)
    }

    @Test("timeout forwards a failure or an interruption of the source and cancels the deadline")
    func timeoutTerminals() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.timeout(after: .seconds(2), raising: .other, on: scheduler).observe(recorder.observer)
            input.send(terminal)
            #expect(scheduler.pendingActionCount == 0)
            #expect(recorder.events == [terminal])
        }
    }

    @Test("a producer's timeout counts from each start; disposing a run cancels the deadline")
    func timeoutProducer() {
        let scheduler = TestScheduler()
        let producer = SignalProducer<Int, Never>.never.timeout(
            after: .seconds(1), raising: TestError.boom, on: scheduler)
        scheduler.advance(by: .seconds(5))
        let recorder = EventRecorder<Int, TestError>()
        let lifetimeEnded = LockedTestValue(false)
        let started = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                lifetimeEnded.withValue { $0 = true }
            }
        }.timeout(after: .seconds(1), raising: TestError.boom, on: scheduler)
        started.start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.failed(.boom)])
        #expect(lifetimeEnded.value)

        let disposed = EventRecorder<Int, TestError>()
        producer.start(disposed.observer).dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(disposed.events == [.interrupted])
    }

    @Test("an observer of a timeout that sends into the source during delivery is queued")
    func timeoutReentrancy() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<Event<Int, TestError>>()
        let result = signal.timeout(after: .seconds(1), raising: .other, on: scheduler)
        result.observe(
            Observer { event in
                log.append(event)
                if case let .value(value) = event, value < 3 { input.send(value: value + 1) }
            })
        input.send(value: 1)
        scheduler.run()
        #expect(log.entries == [.value(1), .value(2), .value(3), .failed(.other)])
        withExtendedLifetime(result) {}
    }

    @Test("timeout racing sends from other threads gives one terminal event and a grammatical stream")
    func timeoutThreads() {
        for _ in 0..<200 {
            let scheduler = TestScheduler()
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.timeout(after: .milliseconds(1), raising: .other, on: scheduler).observe(recorder.observer)
            Watchdog.runOnThreads(3) { thread in
                switch thread {
                case 0: scheduler.advance(by: .milliseconds(1))
                case 1: for value in 0..<50 { input.send(value: value) }
                default: input.sendCompleted()
                }
            }
            #expect(recorder.followsGrammar)
            #expect(recorder.terminalCount == 1)
            #expect(scheduler.pendingActionCount == 0)
        }
    }
}

@Suite("sample")
struct SampleTests {
    @Test("sample(with:) pairs the latest value with each sampler value, and repeats it")
    func sampleWith() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (sampler, samplerInput) = Signal<String, Never>.pipe()
        let log = TestLog<String>()
        signal.sample(with: sampler).observe { event in
            switch event {
            case let .value((value, sample)): log.append("\(value)\(sample)")
            default: log.append("\(event)")
            }
        }
        samplerInput.send(value: "a")  // nothing sampled yet
        input.send(value: 1)
        input.send(value: 2)
        samplerInput.send(value: "b")
        samplerInput.send(value: "c")
        input.sendCompleted()
        samplerInput.send(value: "d")  // the source completed; its last value is still sampled
        samplerInput.sendCompleted()
        #expect(log.entries == ["2b", "2c", "2d", "completed"])
    }

    @Test("sample(on:) completes only when both have completed, in either order")
    func sampleOnCompletion() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (sampler, samplerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.sample(on: sampler).observe(recorder.observer)
        input.send(value: 1)
        samplerInput.sendCompleted()
        input.send(value: 2)
        #expect(recorder.events == [])
        input.sendCompleted()
        #expect(recorder.events == [.completed])
    }

    @Test("sample forwards the source's failure and interruption, and the sampler's interruption")
    func sampleTerminals() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let (sampler, samplerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.sample(on: sampler).observe(recorder.observer)
            input.send(value: 1)
            samplerInput.send(value: ())
            input.send(terminal)
            #expect(recorder.events == [.value(1), terminal])
            #expect(sampler.observerCount == 0)
        }
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (sampler, samplerInput) = Signal<Void, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.sample(on: sampler).observe(recorder.observer)
        #expect(signal.observerCount == 1)
        samplerInput.sendInterrupted()
        #expect(recorder.events == [.interrupted])
        #expect(signal.observerCount == 0)
        withExtendedLifetime(input) {}
    }

    @Test("a producer's sample starts the source first, so its synchronous values are sampled")
    func sampleProducer() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).sample(on: SignalProducer(values: (), ())).start(recorder.observer)
        #expect(recorder.events == [.value(2), .value(2), .completed])
        let pairs = LockedTestValue<[String]>([])
        SignalProducer<Int, Never>(value: 7).sample(with: SignalProducer(values: "x", "y")).startWithValues {
            value, sample in
            pairs.withValue { $0.append("\(value)\(sample)") }
        }
        #expect(pairs.value == ["7x", "7y"])
    }

    @Test("disposing a sampling run interrupts both inner runs")
    func sampleDisposal() {
        let ended = TestLog<String>()
        let source = SignalProducer<Int, Never> { observer, lifetime in
            observer.send(value: 1)
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.append("source")
            }
        }
        let sampler = SignalProducer<Void, Never> { observer, lifetime in
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.append("sampler")
            }
        }
        let recorder = EventRecorder<Int, Never>()
        let run = source.sample(on: sampler).start(recorder.observer)
        run.dispose()
        #expect(recorder.events == [.interrupted])
        #expect(Set(ended.entries) == ["source", "sampler"])
    }

    @Test("an observer of a sample that sends into the sampler during delivery is queued")
    func sampleReentrancy() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let (sampler, samplerInput) = Signal<Void, Never>.pipe()
        let log = TestLog<Event<Int, Never>>()
        let sampled = signal.sample(on: sampler)
        sampled.observe(
            Observer { event in
                log.append(event)
                if case let .value(value) = event, value < 3 {
                    input.send(value: value + 1)
                    samplerInput.send(value: ())
                }
            })
        input.send(value: 1)
        samplerInput.send(value: ())
        #expect(log.entries == [.value(1), .value(2), .value(3)])
        // The observer keeps both inputs: ending the streams releases it.
        input.sendCompleted()
        samplerInput.sendCompleted()
        #expect(log.entries == [.value(1), .value(2), .value(3), .completed])
        withExtendedLifetime(sampled) {}
    }

    @Test("sample with the source and the sampler on different threads: grammar, one completion, known values")
    func sampleThreads() {
        for _ in 0..<20 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let (sampler, samplerInput) = Signal<Void, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            signal.sample(on: sampler).observe(recorder.observer)
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for value in 0..<2000 { input.send(value: value) }
                    input.sendCompleted()
                } else {
                    for _ in 0..<2000 { samplerInput.send(value: ()) }
                    samplerInput.sendCompleted()
                }
            }
            #expect(recorder.followsGrammar)
            #expect(recorder.events.last == .completed)
            let values = recorder.values
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }
}
