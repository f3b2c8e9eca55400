import Dispatch
import Foundation
import Signals
import Testing

// MARK: - Helpers shared by the operator tests (MapFilter, TakeSkipRepeatsScan, MergeConcat, On, LogEvents, Values)

/// A producer whose runs send nothing by themselves: each run hands its observer to `runs` and
/// records whether its lifetime ended, so a test can drive it and check disposal.
final class OperatorTestControlledProducer<Value: Sendable>: @unchecked Sendable {
    // Safe: the arrays are only read or written while `lock` is held.
    private let lock = NSLock()
    private var observers: [Observer<Value, TestError>] = []
    private var lifetimes: [Lifetime] = []

    var producer: SignalProducer<Value, TestError> {
        SignalProducer { [self] observer, lifetime in
            lock.lock()
            observers.append(observer)
            lifetimes.append(lifetime)
            lock.unlock()
        }
    }

    /// How many times the producer was started.
    var startCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return observers.count
    }

    /// The input of run `index` (0 for the first run).
    func input(_ index: Int = 0) -> Observer<Value, TestError> {
        lock.lock()
        defer { lock.unlock() }
        return observers[index]
    }

    /// Whether run `index` has ended.
    func hasEnded(_ index: Int = 0) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return lifetimes[index].hasEnded
    }
}

/// Runs `body` on a new thread of its own, so that blocking there never starves Dispatch's or the
/// cooperative pool's threads (which would stall other tests running in parallel).
func operatorTestRunOnNewThread(_ body: @escaping @Sendable () -> Void) {
    Thread(block: body).start()
}

// MARK: - Tests

@Suite("map, mapError, filter and compactMap")
struct MapFilterTests {
    @Test("Signal.map transforms each value in order and forwards completion")
    func signalMap() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<String, TestError>()
        signal.map { "#\($0)" }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        input.send(value: 3)
        #expect(recorder.events == [.value("#1"), .value("#2"), .completed])
    }

    @Test("Signal.map forwards failure and interruption unchanged")
    func signalMapTerminals() {
        let (failing, failingInput) = Signal<Int, TestError>.pipe()
        let failed = EventRecorder<Int, TestError>()
        failing.map { $0 * 10 }.observe(failed.observer)
        failingInput.send(value: 1)
        failingInput.send(error: .boom)
        failingInput.send(value: 2)
        #expect(failed.events == [.value(10), .failed(.boom)])

        let (interrupting, interruptingInput) = Signal<Int, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        interrupting.map { $0 * 10 }.observe(interrupted.observer)
        interruptingInput.send(value: 1)
        interruptingInput.sendInterrupted()
        #expect(interrupted.events == [.value(10), .interrupted])
    }

    @Test("Signal.map on a signal that already ended delivers its terminal event at once")
    func signalMapAfterTermination() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        input.send(error: .boom)
        let recorder = EventRecorder<Int, TestError>()
        signal.map { $0 + 1 }.observe(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
    }

    @Test("Signal.mapError transforms the failure and leaves values untouched")
    func signalMapError() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.mapError { _ in TestError.other }.observe(recorder.observer)
        input.send(value: 1)
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .failed(.other)])
    }

    @Test("Signal.filter keeps only matching values and forwards completion")
    func signalFilter() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.filter { $0.isMultiple(of: 2) }.observe(recorder.observer)
        for value in 1...6 { input.send(value: value) }
        input.sendCompleted()
        #expect(recorder.events == [.value(2), .value(4), .value(6), .completed])
    }

    @Test("Signal.filter forwards failure and interruption")
    func signalFilterTerminals() {
        let (failing, failingInput) = Signal<Int, TestError>.pipe()
        let failed = EventRecorder<Int, TestError>()
        failing.filter { $0 > 1 }.observe(failed.observer)
        failingInput.send(value: 1)
        failingInput.send(value: 2)
        failingInput.send(error: .boom)
        #expect(failed.events == [.value(2), .failed(.boom)])

        let (interrupting, interruptingInput) = Signal<Int, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        interrupting.filter { _ in false }.observe(interrupted.observer)
        interruptingInput.send(value: 1)
        interruptingInput.sendInterrupted()
        #expect(interrupted.events == [.interrupted])
    }

    @Test("Signal.compactMap sends the non-nil results and forwards terminal events")
    func signalCompactMap() {
        let (signal, input) = Signal<String, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.compactMap { Int($0) }.observe(recorder.observer)
        for text in ["1", "x", "3", ""] { input.send(value: text) }
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .value(3), .failed(.boom)])

        let (other, otherInput) = Signal<String, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        other.compactMap { Int($0) }.observe(interrupted.observer)
        otherInput.send(value: "7")
        otherInput.sendInterrupted()
        #expect(interrupted.events == [.value(7), .interrupted])
    }

    @Test("Producer map, filter and compactMap apply to each run and forward completion")
    func producerOperators() {
        let producer = SignalProducer<Int, TestError>(values: 1, 2, 3, 4)
        let mapped = EventRecorder<Int, TestError>()
        producer.map { $0 * 2 }.start(mapped.observer)
        #expect(mapped.events == [.value(2), .value(4), .value(6), .value(8), .completed])

        let filtered = EventRecorder<Int, TestError>()
        producer.filter { $0 > 2 }.start(filtered.observer)
        #expect(filtered.events == [.value(3), .value(4), .completed])

        let compacted = EventRecorder<String, TestError>()
        producer.compactMap { $0.isMultiple(of: 2) ? "\($0)" : nil }.start(compacted.observer)
        #expect(compacted.events == [.value("2"), .value("4"), .completed])
    }

    @Test("Producer map, mapError, filter and compactMap forward failure")
    func producerFailure() {
        let producer = SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.send(error: .boom)
        }
        let mapped = EventRecorder<Int, TestError>()
        producer.map { $0 + 1 }.start(mapped.observer)
        #expect(mapped.events == [.value(2), .failed(.boom)])

        let mappedError = EventRecorder<Int, TestError>()
        producer.mapError { _ in .other }.start(mappedError.observer)
        #expect(mappedError.events == [.value(1), .failed(.other)])

        let filtered = EventRecorder<Int, TestError>()
        producer.filter { _ in false }.start(filtered.observer)
        #expect(filtered.events == [.failed(.boom)])

        let compacted = EventRecorder<Int, TestError>()
        producer.compactMap { $0 }.start(compacted.observer)
        #expect(compacted.events == [.value(1), .failed(.boom)])
    }

    @Test("Disposing a run of a mapped, filtered or compact-mapped producer interrupts it and ends the underlying run")
    func producerDisposal() {
        let source = OperatorTestControlledProducer<Int>()
        let recorders = (0..<4).map { _ in EventRecorder<Int, TestError>() }
        let runs = [
            source.producer.map { $0 + 1 }.start(recorders[0].observer),
            source.producer.mapError { $0 }.start(recorders[1].observer),
            source.producer.filter { _ in true }.start(recorders[2].observer),
            source.producer.compactMap { $0 }.start(recorders[3].observer),
        ]
        for index in 0..<4 {
            source.input(index).send(value: 1)
            runs[index].dispose()
            source.input(index).send(value: 2)
            #expect(source.hasEnded(index))
        }
        #expect(
            recorders.map(\.events) == [
                [.value(2), .interrupted],
                [.value(1), .interrupted],
                [.value(1), .interrupted],
                [.value(1), .interrupted],
            ])
    }

    @Test("A signal operator delivers every value from many threads, serially and without loss")
    func concurrentSenders() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.map { $0 * 2 }.filter { _ in true }.observe(recorder.observer)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<500 { input.send(value: thread * 1_000 + index) }
        }
        input.sendCompleted()
        let events = recorder.events
        #expect(events.count == 8 * 500 + 1)
        #expect(events.last == .completed)
        let values = events.compactMap(\.value)
        for thread in 0..<8 {
            let fromThread = values.filter { $0 / 2_000 == thread }
            #expect(fromThread == (0..<500).map { (thread * 1_000 + $0) * 2 })
        }
    }
}
