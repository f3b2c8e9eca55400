import Dispatch
import Foundation
import Signals
import Testing

/// An untyped error, for the forms that throw `any Error`.
private struct UntypedError: Error, Equatable {}

@Suite("attempt and attemptMap")
struct AttemptTests {
    @Test("attempt forwards values the action accepts and fails with the first error it throws, calling it no more")
    func attemptValuesAndFailure() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let seen = TestLog<Int>()
        let throwing = EventRecorder<Int, TestError>()
        let resulting = EventRecorder<Int, TestError>()
        signal.attempt { (value: Int) throws(TestError) in
            seen.append(value)
            if value == 3 { throw .boom }
        }.observe(throwing.observer)
        signal.attempt { value in value == 2 ? .failure(.other) : .success(()) }.observe(resulting.observer)
        for value in 1...5 { input.send(value: value) }
        input.sendCompleted()
        #expect(throwing.events == [.value(1), .value(2), .failed(.boom)])
        #expect(resulting.events == [.value(1), .failed(.other)])
        #expect(seen.entries == [1, 2, 3], "the action is not called after it threw")
    }

    @Test("attemptMap sends each transformed value and fails with the first error, typed or as a Result")
    func attemptMapValuesAndFailure() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let throwing = EventRecorder<String, TestError>()
        let resulting = EventRecorder<Bool, TestError>()
        signal.attemptMap { (value: Int) throws(TestError) -> String in
            if value > 2 { throw .other }
            return "#\(value)"
        }.observe(throwing.observer)
        signal.attemptMap { value -> Result<Bool, TestError> in .success(value.isMultiple(of: 2)) }
            .observe(resulting.observer)
        for value in 1...4 { input.send(value: value) }
        input.sendCompleted()
        #expect(throwing.events == [.value("#1"), .value("#2"), .failed(.other)])
        #expect(resulting.events == [.value(false), .value(true), .value(false), .value(true), .completed])
    }

    @Test("attempt and attemptMap forward every terminal event of the source unchanged")
    func attemptTerminals() {
        for terminal in [Event<Int, TestError>.completed, .failed(.boom), .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let attempted = EventRecorder<Int, TestError>()
            let mapped = EventRecorder<Int, TestError>()
            signal.attempt { _ in .success(()) }.observe(attempted.observer)
            signal.attemptMap { (value: Int) throws(TestError) in value * 10 }.observe(mapped.observer)
            input.send(value: 1)
            input.send(terminal)
            #expect(attempted.events == [.value(1), terminal])
            #expect(mapped.events == [.value(10), terminal])
        }
    }

    @Test("On a stream that cannot fail, the closure's error type becomes the result's: typed, or any Error")
    func neverFailingSourceTakesTheClosuresErrorType() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let typed = EventRecorder<Int, TestError>()
        let untyped = LockedTestValue<[String]>([])
        let resulting = EventRecorder<String, TestError>()
        signal.attempt { (value: Int) throws(TestError) in if value == 2 { throw .boom } }.observe(typed.observer)
        let anyError: Signal<Int, any Error> = signal.attemptMap { value in
            if value == 3 { throw UntypedError() }
            return value * 2
        }
        anyError.observe { event in
            let line: String
            switch event {
            case let .value(value): line = "value \(value)"
            case let .failed(error): line = "failed with UntypedError: \(error is UntypedError)"
            case .completed: line = "completed"
            case .interrupted: line = "interrupted"
            }
            untyped.withValue { $0.append(line) }
        }
        signal.attemptMap { value -> Result<String, TestError> in value < 3 ? .success("\(value)") : .failure(.other) }
            .observe(resulting.observer)
        for value in 1...4 { input.send(value: value) }
        #expect(typed.events == [.value(1), .failed(.boom)])
        #expect(untyped.value == ["value 2", "value 4", "failed with UntypedError: true"])
        #expect(resulting.events == [.value("1"), .value("2"), .failed(.other)])
    }

    @Test(
        "Producer attempt and attemptMap: each run starts afresh, a failure ends the underlying run, disposal interrupts it"
    )
    func producerRunsAndDisposal() {
        let producer = SignalProducer<Int, TestError>(values: 1, 2, 3)
            .attemptMap { (value: Int) throws(TestError) -> Int in
                if value == 3 { throw .boom }
                return value
            }
        for _ in 0..<2 {
            let recorder = EventRecorder<Int, TestError>()
            producer.start(recorder.observer)
            #expect(recorder.events == [.value(1), .value(2), .failed(.boom)])
        }

        let failing = OperatorTestControlledProducer<Int>()
        let failed = EventRecorder<Int, TestError>()
        failing.producer.attempt { value in value > 1 ? .failure(.other) : .success(()) }.start(failed.observer)
        failing.input().send(value: 1)
        #expect(!failing.hasEnded())
        failing.input().send(value: 2)
        #expect(failing.hasEnded(), "the failure ends the underlying run")
        #expect(failed.events == [.value(1), .failed(.other)])

        let disposed = OperatorTestControlledProducer<Int>()
        let interrupted = EventRecorder<String, TestError>()
        let run = disposed.producer.attemptMap { value -> Result<String, TestError> in .success("\(value)") }
            .start(interrupted.observer)
        disposed.input().send(value: 7)
        run.dispose()
        disposed.input().send(value: 8)
        #expect(disposed.hasEnded())
        #expect(interrupted.events == [.value("7"), .interrupted])

        let never = EventRecorder<Int, TestError>()
        SignalProducer<Int, Never>(values: 1, 2).attempt { (value: Int) throws(TestError) in
            if value == 2 { throw .boom }
        }.start(never.observer)
        #expect(never.events == [.value(1), .failed(.boom)])
    }

    @Test("An observer of the result that sends into the source is queued, not recursed into")
    func reentrancy() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let probe = InFlightProbe()
        let recorder = EventRecorder<Int, TestError>()
        let result = signal.attemptMap { (value: Int) throws(TestError) -> Int in
            probe.run {}
            if value == 4 { throw .boom }
            return value
        }
        result.observeValues { value in probe.run { input.send(value: value + 1) } }
        result.observe(recorder.observer)
        input.send(value: 1)
        #expect(probe.maximum == 1)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .failed(.boom)])
    }

    @Test("Four threads sending into one source: attemptMap sees every value once, in delivery order, and fails once")
    func threads() {
        for iteration in 0..<20 {
            let perThread = 2_000
            let (signal, input) = Signal<Int, TestError>.pipe()
            let delivered = EventRecorder<Int, TestError>()
            let mapped = EventRecorder<Int, TestError>()
            let failing = EventRecorder<Int, TestError>()
            let calls = LockedTestValue(0)
            signal.observe(delivered.observer)
            signal.attemptMap { (value: Int) throws(TestError) in value * 2 }.observe(mapped.observer)
            signal.attempt { (value: Int) throws(TestError) in
                calls.withValue { $0 += 1 }
                if value == perThread / 2 { throw .boom }
            }.observe(failing.observer)
            Watchdog.runOnThreads(4) { thread in
                for value in 0..<perThread { input.send(value: thread * perThread + value) }
            }
            input.sendCompleted()
            let order = delivered.values
            #expect(order.sorted() == Array(0..<(4 * perThread)), "iteration \(iteration)")
            #expect(mapped.events == order.map { .value($0 * 2) } + [.completed])
            let upToFailure = Array(order.prefix(through: order.firstIndex(of: perThread / 2)!))
            #expect(failing.events == upToFailure.dropLast().map { .value($0) } + [.failed(.boom)])
            #expect(calls.value == upToFailure.count)
        }
    }
}
