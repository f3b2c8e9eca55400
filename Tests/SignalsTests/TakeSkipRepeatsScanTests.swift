import Dispatch
import Signals
import Testing

@Suite("take(first:), skipRepeats and scan")
struct TakeSkipRepeatsScanTests {
    // MARK: take(first:)

    @Test("Signal.take(first:) forwards the first values, then completes and ignores the rest")
    func signalTake() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(first: 2).observe(recorder.observer)
        for value in 1...4 { input.send(value: value) }
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("Signal.take(first: 0) completes at once")
    func signalTakeZero() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(first: 0).observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.completed])
    }

    @Test("Signal.take(first:) forwards a failure or interruption that comes before the count")
    func signalTakeTerminals() {
        let (failing, failingInput) = Signal<Int, TestError>.pipe()
        let failed = EventRecorder<Int, TestError>()
        failing.take(first: 3).observe(failed.observer)
        failingInput.send(value: 1)
        failingInput.send(error: .boom)
        #expect(failed.events == [.value(1), .failed(.boom)])

        let (interrupting, interruptingInput) = Signal<Int, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        interrupting.take(first: 3).observe(interrupted.observer)
        interruptingInput.send(value: 1)
        interruptingInput.sendInterrupted()
        #expect(interrupted.events == [.value(1), .interrupted])

        let (completing, completingInput) = Signal<Int, TestError>.pipe()
        let completed = EventRecorder<Int, TestError>()
        completing.take(first: 3).observe(completed.observer)
        completingInput.send(value: 1)
        completingInput.sendCompleted()
        #expect(completed.events == [.value(1), .completed])
    }

    @Test("Signal.take(first:) detaches from its upstream once done")
    func signalTakeDetaches() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let taken = signal.take(first: 1)
        taken.observe(recorder.observer)
        #expect(signal.observerCount == 1)
        input.send(value: 1)
        #expect(signal.observerCount == 0)
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("Producer take(first:) completes after the count and ends the underlying run, which stops sending")
    func producerTakeDisposesUpstream() {
        let ended = TestLog<String>()
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { ended.append("ended") }
            for value in 1...5 where !lifetime.hasEnded {
                observer.send(value: value)
                ended.append("sent \(value)")
            }
        }
        let recorder = EventRecorder<Int, TestError>()
        producer.take(first: 2).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(ended.entries == ["sent 1", "ended", "sent 2"])
    }

    @Test("Producer take(first:) ends the underlying run when the count is reached asynchronously")
    func producerTakeLaterValues() {
        let source = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        source.producer.take(first: 1).start(recorder.observer)
        #expect(!source.hasEnded())
        source.input().send(value: 7)
        #expect(source.hasEnded())
        source.input().send(value: 8)
        #expect(recorder.events == [.value(7), .completed])
    }

    @Test("Producer take(first: 0) completes without running the start handler")
    func producerTakeZero() {
        let source = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        source.producer.take(first: 0).start(recorder.observer)
        #expect(recorder.events == [.completed])
        #expect(source.startCount == 0)
    }

    @Test("Producer take(first:) forwards failure and is interrupted by disposal")
    func producerTakeTerminals() {
        let failed = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: .boom).take(first: 2).start(failed.observer)
        #expect(failed.events == [.failed(.boom)])

        let source = OperatorTestControlledProducer<Int>()
        let interrupted = EventRecorder<Int, TestError>()
        let run = source.producer.take(first: 2).start(interrupted.observer)
        source.input().send(value: 1)
        run.dispose()
        #expect(source.hasEnded())
        #expect(interrupted.events == [.value(1), .interrupted])
    }

    @Test("Each run of a take(first:) producer counts from zero")
    func producerTakePerRun() {
        let producer = SignalProducer<Int, Never>(values: 1, 2, 3).take(first: 2)
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        producer.start(first.observer)
        producer.start(second.observer)
        #expect(first.events == [.value(1), .value(2), .completed])
        #expect(second.events == [.value(1), .value(2), .completed])
    }

    @Test("Signal.take(first:) forwards exactly the count when values arrive from many threads")
    func signalTakeConcurrent() {
        for _ in 0..<20 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let recorder = EventRecorder<Int, Never>()
            signal.take(first: 100).observe(recorder.observer)
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<50 { input.send(value: thread * 100 + index) }
            }
            let events = recorder.events
            #expect(events.count == 101)
            #expect(events.last == .completed)
            #expect(events.dropLast().allSatisfy { $0.value != nil })
        }
    }

    // MARK: skipRepeats

    @Test("Signal.skipRepeats() drops values equal to the previous one")
    func signalSkipRepeats() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.skipRepeats().observe(recorder.observer)
        for value in [1, 1, 2, 2, 2, 1, 3, 3] { input.send(value: value) }
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .value(2), .value(1), .value(3), .failed(.boom)])
    }

    @Test("Signal.skipRepeats(_:) uses the given equivalence against the last forwarded value")
    func signalSkipRepeatsCustom() {
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<String, Never>()
        signal.skipRepeats { $0.lowercased() == $1.lowercased() }.observe(recorder.observer)
        for value in ["a", "A", "b", "B", "b", "a"] { input.send(value: value) }
        input.sendInterrupted()
        #expect(recorder.events == [.value("a"), .value("b"), .value("a"), .interrupted])
    }

    @Test("Producer skipRepeats starts afresh on each run and forwards terminal events")
    func producerSkipRepeats() {
        let producer = SignalProducer<Int, Never>(values: 1, 1, 2, 2).skipRepeats()
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        producer.start(first.observer)
        producer.start(second.observer)
        #expect(first.events == [.value(1), .value(2), .completed])
        #expect(second.events == [.value(1), .value(2), .completed])

        let source = OperatorTestControlledProducer<Int>()
        let custom = EventRecorder<Int, TestError>()
        let run = source.producer.skipRepeats { $0 / 10 == $1 / 10 }.start(custom.observer)
        for value in [1, 5, 12, 19, 3] { source.input().send(value: value) }
        run.dispose()
        #expect(source.hasEnded())
        #expect(custom.events == [.value(1), .value(12), .value(3), .interrupted])
    }

    // MARK: scan

    @Test("Signal.scan sends each running accumulation, not the initial value")
    func signalScan() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.scan(10) { $0 + $1 }.observe(recorder.observer)
        for value in 1...3 { input.send(value: value) }
        input.sendCompleted()
        #expect(recorder.events == [.value(11), .value(13), .value(16), .completed])
    }

    @Test("Signal.scan(into:) mutates the accumulator in place and forwards failure")
    func signalScanInto() {
        let (signal, input) = Signal<String, TestError>.pipe()
        let recorder = EventRecorder<[String], TestError>()
        signal.scan(into: [String]()) { $0.append($1) }.observe(recorder.observer)
        input.send(value: "a")
        input.send(value: "b")
        input.send(error: .boom)
        #expect(recorder.events == [.value(["a"]), .value(["a", "b"]), .failed(.boom)])
    }

    @Test("Signal.scan forwards interruption")
    func signalScanInterrupted() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.scan(0, +).observe(recorder.observer)
        input.send(value: 4)
        input.sendInterrupted()
        #expect(recorder.events == [.value(4), .interrupted])
    }

    @Test("Producer scan starts again from the initial value on each run")
    func producerScan() {
        let producer = SignalProducer<Int, Never>(values: 1, 2, 3).scan(0, +)
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        producer.start(first.observer)
        producer.start(second.observer)
        #expect(first.events == [.value(1), .value(3), .value(6), .completed])
        #expect(second.events == [.value(1), .value(3), .value(6), .completed])

        let into = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).scan(into: 100) { $0 -= $1 }.start(into.observer)
        #expect(into.events == [.value(99), .value(97), .completed])
    }

    @Test("Producer scan forwards failure and disposal ends the underlying run")
    func producerScanTerminals() {
        let source = OperatorTestControlledProducer<Int>()
        let failed = EventRecorder<Int, TestError>()
        source.producer.scan(0, +).start(failed.observer)
        source.input(0).send(value: 2)
        source.input(0).send(error: .boom)
        #expect(failed.events == [.value(2), .failed(.boom)])

        let interrupted = EventRecorder<Int, TestError>()
        let run = source.producer.scan(0, +).start(interrupted.observer)
        source.input(1).send(value: 5)
        run.dispose()
        #expect(source.hasEnded(1))
        #expect(interrupted.events == [.value(5), .interrupted])
    }
}
