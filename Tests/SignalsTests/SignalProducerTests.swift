import Dispatch
import Foundation
import Signals
import Testing

/// A counter for any thread.
private final class Counter: @unchecked Sendable {
    // Safe: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    @discardableResult
    func increment() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}

/// Keeps the observer a start handler received, so the test can send into a run later.
private final class InputBox<Value: Sendable, Error: Swift.Error>: @unchecked Sendable {
    // Safe: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: Observer<Value, Error>?

    var input: Observer<Value, Error> {
        get {
            guard let input = lock.withLock({ storage }) else {
                Issue.record("the start handler never ran")
                return Observer { _ in }
            }
            return input
        }
        set { lock.withLock { storage = newValue } }
    }
}

/// Errors of `any Error` streams, made comparable.
private func comparable<Value>(_ events: [Event<Value, any Error>]) -> [Event<Value, TestError>] {
    events.map { $0.mapError { $0 as? TestError ?? .other } }
}

@Suite("SignalProducer")
struct SignalProducerTests {
    // MARK: Starting and lifetimes

    // In release builds, Swift 6.3's optimizer took `start` for a function that cannot change what a
    // start handler captured, and read such state from before the start (see `callStartHandler`). Each
    // way of starting a producer is checked here, on state the handler changes and nothing else does.
    @Test("what a start handler changes is visible once start returns, whichever start function ran it")
    func startHandlerEffectsAreVisibleAfterStart() {
        let starts = Counter()
        let producer = SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: starts.increment())
            observer.sendCompleted()
        }
        producer.start()
        #expect(starts.value == 1)
        producer.start(Observer { _ in })
        #expect(starts.value == 2)
        producer.start { _ in }
        #expect(starts.value == 3)
        producer.startWithValues { _ in }
        #expect(starts.value == 4)
        producer.startWithSignal { _, _ in }
        #expect(starts.value == 5)
        producer.map { $0 }.start()
        #expect(starts.value == 6)
        let kept = LockedTestValue<Observer<Int, Never>?>(nil)
        SignalProducer<Int, Never> { observer, _ in kept.withValue { $0 = observer } }.start()
        #expect(kept.value != nil)
    }

    @Test("each start runs the start handler anew, with its own observer")
    func eachStartRunsAnew() {
        let starts = Counter()
        let producer = SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: starts.increment())
            observer.sendCompleted()
        }
        let first = EventRecorder<Int, TestError>()
        let second = EventRecorder<Int, TestError>()
        producer.start(first.observer)
        producer.start(second.observer)

        #expect(starts.value == 2)
        #expect(first.events == [.value(1), .completed])
        #expect(second.events == [.value(2), .completed])
    }

    @Test("disposing a started producer interrupts it once and ends its lifetime once; disposing again is harmless")
    func disposalInterrupts() {
        let ended = Counter()
        let box = InputBox<Int, TestError>()
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            box.input = observer
            lifetime.observeEnded { ended.increment() }
        }
        let recorder = EventRecorder<Int, TestError>()
        let disposable = producer.start(recorder.observer)
        box.input.send(value: 1)
        disposable.dispose()
        disposable.dispose()
        box.input.send(value: 2)
        box.input.sendCompleted()

        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ended.value == 1)
        #expect(disposable.isDisposed)
    }

    @Test("disposing a run from many threads at once interrupts it exactly once")
    func concurrentDisposal() {
        for _ in 0..<200 {
            let ended = Counter()
            let recorder = EventRecorder<Int, TestError>()
            let disposable = SignalProducer<Int, TestError> { _, lifetime in
                lifetime.observeEnded { ended.increment() }
            }.start(recorder.observer)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in disposable.dispose() }

            #expect(recorder.events == [.interrupted])
            #expect(ended.value == 1)
        }
    }

    @Test("completion ends the lifetime; later events and a later disposal are ignored")
    func completionEndsLifetime() {
        let ended = Counter()
        let box = InputBox<Int, TestError>()
        let lifetimeBox = LifetimeBox()
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            box.input = observer
            lifetimeBox.lifetime = lifetime
            lifetime.observeEnded { ended.increment() }
        }
        let recorder = EventRecorder<Int, TestError>()
        let disposable = producer.start(recorder.observer)
        box.input.send(value: 1)
        #expect(lifetimeBox.lifetime?.hasEnded == false)
        box.input.sendCompleted()
        #expect(lifetimeBox.lifetime?.hasEnded == true)
        box.input.send(value: 2)
        box.input.send(error: .boom)
        disposable.dispose()

        #expect(recorder.events == [.value(1), .completed])
        #expect(ended.value == 1)
    }

    @Test("failure ends the lifetime; later events are ignored")
    func failureEndsLifetime() {
        let ended = Counter()
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { ended.increment() }
            observer.send(value: 1)
            observer.send(error: .boom)
            observer.send(value: 2)
            observer.sendCompleted()
        }
        let recorder = EventRecorder<Int, TestError>()
        producer.start(recorder.observer)

        #expect(recorder.events == [.value(1), .failed(.boom)])
        #expect(ended.value == 1)
    }

    // MARK: Initializers

    @Test("init(value:) sends the value and completes")
    func initValue() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(value: 7).start(recorder.observer)
        #expect(recorder.events == [.value(7), .completed])
    }

    @Test("init(values:) sends each value in order and completes")
    func initValues() {
        let fromSequence = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: [1, 2, 3]).start(fromSequence.observer)
        #expect(fromSequence.events == [.value(1), .value(2), .value(3), .completed])

        let variadic = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 4, 5).start(variadic.observer)
        #expect(variadic.events == [.value(4), .value(5), .completed])

        let empty = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: []).start(empty.observer)
        #expect(empty.events == [.completed])
    }

    @Test("init(values:) stops sending when its run is disposed by an observer")
    func initValuesStopsWhenDisposed() {
        let recorder = EventRecorder<Int, TestError>()
        let serial = SerialDisposable()
        let producer = SignalProducer<Int, TestError>(values: 1...1_000_000)
        // Starting through `startWithSignal` hands over the disposable before the first value.
        producer.startWithSignal { signal, interrupter in
            serial.inner = interrupter
            signal.observe(recorder.observer)
            signal.observeValues { value in
                if value == 2 { serial.dispose() }
            }
        }
        #expect(recorder.events == [.value(1), .value(2), .interrupted])
    }

    @Test("init(error:) fails at once")
    func initError() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: .boom).start(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
    }

    @Test("empty completes at once")
    func empty() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>.empty.start(recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test("never sends nothing until its run is disposed, which interrupts it")
    func never() {
        let recorder = EventRecorder<Int, TestError>()
        let disposable = SignalProducer<Int, TestError>.never.start(recorder.observer)
        #expect(recorder.events == [])
        disposable.dispose()
        #expect(recorder.events == [.interrupted])
    }

    @Test("init(_ signal:) forwards the signal's events while started and detaches when its run is disposed")
    func initSignal() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let producer = SignalProducer(signal)
        let disposed = EventRecorder<Int, TestError>()
        let kept = EventRecorder<Int, TestError>()
        let disposable = producer.start(disposed.observer)
        producer.start(kept.observer)
        input.send(value: 1)
        disposable.dispose()
        input.send(value: 2)
        input.sendCompleted()

        #expect(disposed.events == [.value(1), .interrupted])
        #expect(kept.events == [.value(1), .value(2), .completed])
    }

    // MARK: Starting variants

    @Test("startWithSignal lets setup observe every event, even those sent synchronously by the start handler")
    func startWithSignalSeesEverything() {
        let recorder = EventRecorder<Int, TestError>()
        let order = EventRecorder<String, Never>()
        let producer = SignalProducer<Int, TestError> { observer, _ in
            order.observer.send(value: "start handler")
            observer.send(value: 1)
            observer.send(value: 2)
            observer.sendCompleted()
        }
        let result = producer.startWithSignal { signal, _ in
            order.observer.send(value: "setup")
            signal.observe(recorder.observer)
            return 42
        }

        #expect(result == 42)
        #expect(order.events == [.value("setup"), .value("start handler")])
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("disposing the interrupter inside startWithSignal's setup interrupts the run before the start handler runs")
    func startWithSignalEarlyDisposal() {
        let starts = Counter()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError> { _, _ in starts.increment() }
            .startWithSignal { signal, interrupter in
                signal.observe(recorder.observer)
                interrupter.dispose()
            }
        #expect(starts.value == 0)
        #expect(recorder.events == [.interrupted])
    }

    @Test("startWithValues, startWithCompleted, startWithFailed and startWithInterrupted see only their kind of event")
    func startWithKinds() {
        let values = EventRecorder<Int, Never>()
        SignalProducer<Int, TestError>(values: [1, 2]).startWithValues { values.observer.send(value: $0) }
        #expect(values.events == [.value(1), .value(2)])

        let completions = Counter()
        SignalProducer<Int, TestError>(values: [1, 2]).startWithCompleted { completions.increment() }
        #expect(completions.value == 1)

        let failures = EventRecorder<TestError, Never>()
        SignalProducer<Int, TestError>(error: .boom).startWithFailed { failures.observer.send(value: $0) }
        #expect(failures.events == [.value(.boom)])

        let interruptions = Counter()
        SignalProducer<Int, TestError>.never.startWithInterrupted { interruptions.increment() }.dispose()
        #expect(interruptions.value == 1)
    }

    // MARK: Async bridges

    @Test("an async operation's result is sent, then the run completes")
    func asyncOperation() async {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(operation: { () async -> Int in 42 }).start(recorder.observer)
        #expect(await recorder.terminated(), "the run did not end")
        #expect(recorder.events == [.value(42), .completed])
    }

    @Test("an async operation that sends several values sends each, then the run completes")
    func asyncSendingOperation() async {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(operation: { send in
            send(1)
            send(2)
        }).start(recorder.observer)
        #expect(await recorder.terminated(), "the run did not end")
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("a throwing async operation sends its result and completes, or fails with what it throws")
    func asyncThrowingOperation() async {
        let succeeding = EventRecorder<Int, any Error>()
        SignalProducer<Int, any Error>(operation: { () async throws -> Int in 1 }).start(succeeding.observer)
        #expect(await succeeding.terminated(), "the run did not end")
        #expect(comparable(succeeding.events) == [.value(1), .completed])

        let failing = EventRecorder<Int, any Error>()
        SignalProducer<Int, any Error>(operation: { () async throws -> Int in throw TestError.boom }).start(
            failing.observer)
        #expect(await failing.terminated(), "the run did not end")
        #expect(comparable(failing.events) == [.failed(.boom)])
    }

    @Test("disposing the run of an async operation cancels its task and ignores its late result")
    func asyncOperationCancellation() async {
        let started = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let sawCancellation = Counter()
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never>(operation: { () async -> Int in
            await withTaskCancellationHandler {
                started.signal()
                // Runs until cancelled: the sleep ends early, throwing, when the task is cancelled.
                try? await Task.sleep(for: .seconds(60))
                if Task.isCancelled { sawCancellation.increment() }
                finished.signal()
                return 1
            } onCancel: {
                cancelled.signal()
            }
        }).start(recorder.observer)

        #expect(await Watchdog.signalled(started), "the operation did not start")
        disposable.dispose()
        #expect(await Watchdog.signalled(cancelled), "the task was not cancelled")
        #expect(await Watchdog.signalled(finished), "the operation did not finish")
        #expect(sawCancellation.value == 1)
        #expect(recorder.events == [.interrupted])
    }

    @Test("an async sequence's elements are sent in order, then the run completes")
    func asyncSequence() async {
        let stream = AsyncStream<Int> { continuation in
            for value in 1...3 { continuation.yield(value) }
            continuation.finish()
        }
        let recorder = EventRecorder<Int, any Error>()
        SignalProducer<Int, any Error>(stream).start(recorder.observer)
        #expect(await recorder.terminated(), "the run did not end")
        #expect(comparable(recorder.events) == [.value(1), .value(2), .value(3), .completed])
    }

    @Test("an async sequence that throws fails the run after the elements before the error")
    func asyncSequenceFailure() async {
        let stream = AsyncThrowingStream<Int, any Error> { continuation in
            continuation.yield(1)
            continuation.finish(throwing: TestError.boom)
        }
        let recorder = EventRecorder<Int, any Error>()
        SignalProducer<Int, any Error>(stream).start(recorder.observer)
        #expect(await recorder.terminated(), "the run did not end")
        #expect(comparable(recorder.events) == [.value(1), .failed(.boom)])
    }

    @Test("disposing the run of an async sequence cancels its iteration")
    func asyncSequenceCancellation() async {
        let ended = DispatchSemaphore(value: 0)
        // A stream that never yields nor finishes by itself: only cancellation ends its iteration.
        let stream = AsyncStream<Int> { continuation in
            continuation.onTermination = { termination in
                if case .cancelled = termination { ended.signal() }
            }
        }
        let recorder = EventRecorder<Int, any Error>()
        let disposable = SignalProducer<Int, any Error>(stream).start(recorder.observer)
        disposable.dispose()
        #expect(await Watchdog.signalled(ended), "the iteration was not cancelled")
        #expect(comparable(recorder.events) == [.interrupted])
    }
}

/// Keeps the lifetime a start handler received.
private final class LifetimeBox: @unchecked Sendable {
    // Safe: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: Lifetime?

    var lifetime: Lifetime? {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
