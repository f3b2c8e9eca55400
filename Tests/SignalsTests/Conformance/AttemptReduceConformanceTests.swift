import Signals
import Testing

// ReactiveSwift's SignalSpec and SignalProducerLiftingSpec cases for attempt, attemptMap, reduce and
// the map forms, written against our API. ReactiveSwift's throwing forms fail with `Swift.Error`; ours
// throw the stream's error type, so the "attempt throws" cases are written with `Signal<_, any Error>`,
// where the two agree.

private struct OperationError: Error, Equatable {}

/// ReactiveSwift's test helper: the value, or the error if there is none.
private func operation<T>(value: T?) throws -> T {
    guard let value else { throw OperationError() }
    return value
}

@Suite("Conformance: SignalSpec and SignalProducerLiftingSpec (attempt, attemptMap, reduce, map forms)")
struct AttemptReduceConformanceTests {
    @Test("SignalSpec: map should replace the values of the signal to constant new value")
    func mapConstant() {
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.map(value: 1).observe(recorder.observer)
        input.send(value: "foo")
        input.send(value: "foobar")
        #expect(recorder.events == [.value(1), .value(1)])
    }

    @Test("SignalSpec: map should support key paths")
    func mapKeyPath() {
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.map(\String.count).observe(recorder.observer)
        input.send(value: "foo")
        input.send(value: "foobar")
        #expect(recorder.events == [.value(3), .value(6)])
    }

    @Test("SignalSpec: reduce should send the initial value if none are received")
    func reduceInitial() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.reduce(1, +).observe(recorder.observer)
        #expect(recorder.events == [])
        input.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("SignalSpec: reduce should send the final value")
    func reduceFinal() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.reduce(1, +).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(recorder.events == [])
        input.sendCompleted()
        #expect(recorder.events == [.value(4), .completed])
    }

    @Test("SignalSpec: reduce should not send the final value on interruption or failure")
    func reduceNoFinalOnInterruption() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        signal.reduce(into: 1) { $0 += $1 }.observe(interrupted.observer)
        input.send(value: 1)
        input.sendInterrupted()
        #expect(interrupted.events == [.interrupted])
        let (failing, failingInput) = Signal<Int, TestError>.pipe()
        let failed = EventRecorder<Int, TestError>()
        failing.reduce(1, +).observe(failed.observer)
        failingInput.send(value: 1)
        failingInput.send(error: .boom)
        #expect(failed.events == [.failed(.boom)])
    }

    @Test("SignalSpec: attempt should forward original values upon success")
    func attemptForwards() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.attempt { _ in .success(()) }.observe(recorder.observer)
        for value in 1...5 { input.send(value: value) }
        #expect(recorder.events == (1...5).map { .value($0) })
    }

    @Test("SignalSpec: attempt should error if an attempt fails")
    func attemptFails() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.attempt { _ in .failure(.boom) }.observe(recorder.observer)
        input.send(value: 42)
        #expect(recorder.events == [.failed(.boom)])
    }

    @Test("SignalSpec: attemptMap should forward mapped values upon success, and error if a mapping fails")
    func attemptMapResult() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let even = EventRecorder<Bool, TestError>()
        let failing = EventRecorder<Bool, TestError>()
        signal.attemptMap { number -> Result<Bool, TestError> in .success(number % 2 == 0) }.observe(even.observer)
        signal.attemptMap { _ -> Result<Bool, TestError> in .failure(.boom) }.observe(failing.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(even.events == [.value(false), .value(true)])
        #expect(failing.events == [.failed(.boom)])
    }

    @Test(
        "SignalSpec: attempt throws should forward original values upon success, error if an attempt fails, and allow throwing closures with Never"
    )
    func attemptThrows() {
        let (signal, input) = Signal<Int, any Error>.pipe()
        let values = LockedTestValue<[Int]>([])
        let failures = LockedTestValue<[Bool]>([])
        signal.attempt { _ in _ = try operation(value: 1) }.observeValues { value in
            values.withValue { $0.append(value) }
        }
        signal.attempt { _ in _ = try operation(value: nil) as Int }
            .observeFailed { error in failures.withValue { $0.append(error is OperationError) } }
        for value in 1...3 { input.send(value: value) }
        #expect(values.value == [1, 2, 3])
        #expect(failures.value == [true])

        let (never, neverInput) = Signal<Int, Never>.pipe()
        let neverValues = LockedTestValue<[Int]>([])
        let promoted: Signal<Int, any Error> = never.attempt { _ in _ = try operation(value: 1) }
        promoted.observeValues { value in neverValues.withValue { $0.append(value) } }
        neverInput.send(value: 42)
        #expect(neverValues.value == [42])
    }

    @Test("SignalSpec: attemptMap throws should forward mapped values upon success, and error if a mapping fails")
    func attemptMapThrows() {
        let (signal, input) = Signal<Int, any Error>.pipe()
        let even = LockedTestValue<[Bool]>([])
        let failures = LockedTestValue<[Bool]>([])
        signal.attemptMap { number in try operation(value: number % 2 == 0) }
            .observeValues { value in even.withValue { $0.append(value) } }
        signal.attemptMap { _ in try operation(value: nil) as Bool }
            .observeFailed { error in failures.withValue { $0.append(error is OperationError) } }
        input.send(value: 1)
        input.send(value: 2)
        #expect(even.value == [false, true])
        #expect(failures.value == [true])
    }

    @Test("SignalProducerLiftingSpec: attempt and attemptMap should forward values upon success and error if they fail")
    func producerAttempt() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let producer = SignalProducer(signal)
        let attempted = EventRecorder<Int, TestError>()
        let mapped = EventRecorder<Bool, TestError>()
        producer.attempt { value in value < 3 ? .success(()) : .failure(.boom) }.start(attempted.observer)
        producer.attemptMap { number -> Result<Bool, TestError> in .success(number % 2 == 0) }.start(mapped.observer)
        for value in 1...3 { input.send(value: value) }
        #expect(attempted.events == [.value(1), .value(2), .failed(.boom)])
        #expect(mapped.events == [.value(false), .value(true), .value(false)])
    }

    @Test(
        "SignalProducerLiftingSpec: reduce should accumulate one value, and send the initial value if none are received"
    )
    func producerReduce() {
        let accumulated = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).reduce(1, +).start(accumulated.observer)
        #expect(accumulated.events == [.value(4), .completed])
        let initial = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.empty.reduce(1, +).start(initial.observer)
        #expect(initial.events == [.value(1), .completed])
    }
}
