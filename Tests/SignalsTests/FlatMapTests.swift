import Dispatch
import Foundation
import Signals
import Testing

private enum FlattenTestError: Error, Equatable {
    case outer
    case inner
}

/// Outer and inner producers whose observers the test keeps, which log when they start and end.
private final class Harness: @unchecked Sendable {
    // Safe: every stored `var` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    private var outerInput: Observer<Int, FlattenTestError>?
    private var innerInputs: [Int: Observer<Int, FlattenTestError>] = [:]

    var log: [String] { lock.withLock { lines } }

    func record(_ line: String) {
        lock.withLock { lines.append(line) }
    }

    /// The outer producer: logs "start outer" / "end outer" (its lifetime ended).
    var outer: SignalProducer<Int, FlattenTestError> {
        SignalProducer { [self] observer, lifetime in
            record("start outer")
            lock.withLock { outerInput = observer }
            lifetime.observeEnded { [self] in record("end outer") }
        }
    }

    /// Inner number `key`: logs "start key" / "end key" (its lifetime ended).
    func inner(_ key: Int) -> SignalProducer<Int, FlattenTestError> {
        SignalProducer { [self] observer, lifetime in
            record("start \(key)")
            lock.withLock { innerInputs[key] = observer }
            lifetime.observeEnded { [self] in record("end \(key)") }
        }
    }

    /// The input of the outer producer's run (records an issue if it never started).
    var outerObserver: Observer<Int, FlattenTestError> {
        guard let input = lock.withLock({ outerInput }) else {
            Issue.record("the outer producer never started")
            return Observer { _ in }
        }
        return input
    }

    /// The input of the run of inner `key` (records an issue if it never started).
    func innerObserver(_ key: Int) -> Observer<Int, FlattenTestError> {
        guard let input = lock.withLock({ innerInputs[key] }) else {
            Issue.record("inner \(key) never started")
            return Observer { _ in }
        }
        return input
    }
}

private let allStrategies: [FlattenStrategy] = [.merge, .latest, .concat]

@Suite("flatMap and flatten")
struct FlatMapTests {
    // MARK: All strategies

    @Test(
        "the outer stream's failure fails the result at once and disposes the outer run and running inners",
        arguments: allStrategies)
    func outerFailure(strategy: FlattenStrategy) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(strategy) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        harness.outerObserver.send(error: .outer)

        #expect(recorder.events == [.value(10), .failed(.outer)])
        #expect(harness.log == ["start outer", "start 1", "end outer", "end 1"])
    }

    @Test(
        "an inner stream's failure fails the result at once and disposes the outer run and other inners",
        arguments: allStrategies)
    func innerFailure(strategy: FlattenStrategy) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(strategy) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        harness.innerObserver(1).send(error: .inner)
        harness.outerObserver.send(value: 2)

        #expect(recorder.events == [.value(10), .failed(.inner)])
        #expect(harness.log == ["start outer", "start 1", "end 1", "end outer"])
    }

    @Test(
        "interrupting the outer stream interrupts the result and disposes the running inner", arguments: allStrategies)
    func outerInterruption(strategy: FlattenStrategy) {
        let (outer, outerInput) = Signal<Int, FlattenTestError>.pipe()
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        outer.flatMap(strategy) { harness.inner($0) }.observe(recorder.observer)
        outerInput.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        outerInput.sendInterrupted()
        harness.innerObserver(1).send(value: 11)

        #expect(recorder.events == [.value(10), .interrupted])
        #expect(harness.log == ["start 1", "end 1"])
    }

    @Test("an inner stream's own interruption counts as its completion, as in ReactiveSwift", arguments: allStrategies)
    func innerInterruption(strategy: FlattenStrategy) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(strategy) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        harness.innerObserver(1).sendInterrupted()
        #expect(recorder.events == [.value(10)])
        #expect(harness.log == ["start outer", "start 1", "end 1"])

        harness.outerObserver.sendCompleted()
        #expect(recorder.events == [.value(10), .completed])
        #expect(harness.log == ["start outer", "start 1", "end 1", "end outer"])
    }

    @Test(
        "disposing the result's run interrupts it and ends the outer run and every running inner",
        arguments: allStrategies)
    func disposal(strategy: FlattenStrategy) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let disposable = harness.outer.flatMap(strategy) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.send(value: 2)
        harness.innerObserver(1).send(value: 10)
        disposable.dispose()
        disposable.dispose()

        #expect(recorder.events == (strategy == .latest ? [.interrupted] : [.value(10), .interrupted]))
        switch strategy {
        case .merge:
            #expect(harness.log == ["start outer", "start 1", "start 2", "end outer", "end 1", "end 2"])
        case .latest:
            #expect(harness.log == ["start outer", "start 1", "end 1", "start 2", "end outer", "end 2"])
        default:
            // The queued second inner never starts.
            #expect(harness.log == ["start outer", "start 1", "end outer", "end 1"])
        }
    }

    @Test("disposing the run after the outer stream completed still ends the running inners", arguments: allStrategies)
    func disposalAfterOuterCompleted(strategy: FlattenStrategy) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let disposable = harness.outer.flatMap(strategy) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.sendCompleted()
        disposable.dispose()

        #expect(recorder.events == [.interrupted])
        #expect(harness.log == ["start outer", "start 1", "end outer", "end 1"])
    }

    @Test("a result completes at once when the outer stream completes without sending", arguments: allStrategies)
    func emptyOuter(strategy: FlattenStrategy) {
        let recorder = EventRecorder<Int, FlattenTestError>()
        SignalProducer<Int, FlattenTestError>.empty.flatMap(strategy) { SignalProducer(value: $0) }.start(
            recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test("synchronous inners are forwarded in order and the result completes once", arguments: allStrategies)
    func synchronousInners(strategy: FlattenStrategy) {
        let recorder = EventRecorder<Int, FlattenTestError>()
        SignalProducer<Int, FlattenTestError>(values: [1, 2, 3])
            .flatMap(strategy) { SignalProducer(values: [$0 * 10, $0 * 10 + 1]) }
            .start(recorder.observer)
        #expect(
            recorder.events == [.value(10), .value(11), .value(20), .value(21), .value(30), .value(31), .completed])
    }

    @Test("an inner started after the result ended never runs", arguments: allStrategies)
    func innerAfterTermination(strategy: FlattenStrategy) {
        let recorder = EventRecorder<Int, FlattenTestError>()
        let log = Harness()
        SignalProducer<Int, FlattenTestError>(values: [1, 2])
            .flatMap(strategy) { key in
                SignalProducer { observer, _ in
                    log.record("start \(key)")
                    observer.send(error: .inner)
                }
            }
            .start(recorder.observer)
        #expect(recorder.events == [.failed(.inner)])
        #expect(log.log == ["start 1"])
    }

    @Test(
        "a result observer that feeds each value back into the outer signal runs a long chain in constant stack",
        arguments: allStrategies)
    func synchronousFeedback(strategy: FlattenStrategy) {
        let steps = 10_000
        let (outer, outerInput) = Signal<Int, FlattenTestError>.pipe()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let result = outer.flatMap(strategy) { SignalProducer(value: $0) }
        result.observe(recorder.observer)
        result.observeValues { value in
            if value < steps {
                outerInput.send(value: value + 1)
            } else {
                outerInput.sendCompleted()
            }
        }
        outerInput.send(value: 1)

        let expected: [Event<Int, FlattenTestError>] = (1...steps).map { .value($0) } + [.completed]
        #expect(recorder.events == expected)
    }

    // MARK: Signal and flatten

    @Test("Signal.flatMap forwards inner values and completes after the outer signal and the inners")
    func signalFlatMap() {
        let (outer, outerInput) = Signal<Int, FlattenTestError>.pipe()
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        outer.flatMap(.merge) { harness.inner($0) }.observe(recorder.observer)
        outerInput.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        outerInput.sendCompleted()
        #expect(recorder.events == [.value(10)])
        harness.innerObserver(1).sendCompleted()

        #expect(recorder.events == [.value(10), .completed])
        #expect(harness.log == ["start 1", "end 1"])
    }

    @Test("Signal.flatMap stops observing the outer signal when an inner fails")
    func signalFlatMapDetachesOuter() {
        let (outer, outerInput) = Signal<Int, FlattenTestError>.pipe()
        let transforms = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        outer.flatMap(.merge) { key in
            transforms.record("transform \(key)")
            return SignalProducer(error: .inner)
        }.observe(recorder.observer)
        outerInput.send(value: 1)
        outerInput.send(value: 2)

        #expect(recorder.events == [.failed(.inner)])
        #expect(transforms.log == ["transform 1"])
    }

    @Test("flatten starts the producers a signal or a producer sends")
    func flatten() {
        let (outer, outerInput) = Signal<SignalProducer<Int, FlattenTestError>, FlattenTestError>.pipe()
        let signalRecorder = EventRecorder<Int, FlattenTestError>()
        outer.flatten(.concat).observe(signalRecorder.observer)
        outerInput.send(value: SignalProducer(values: [1, 2]))
        outerInput.send(value: SignalProducer(value: 3))
        outerInput.sendCompleted()
        #expect(signalRecorder.events == [.value(1), .value(2), .value(3), .completed])

        let producerRecorder = EventRecorder<Int, FlattenTestError>()
        SignalProducer<SignalProducer<Int, FlattenTestError>, FlattenTestError>(values: [
            SignalProducer(value: 1), .empty, SignalProducer(values: [2, 3]),
        ])
        .flatten(.merge)
        .start(producerRecorder.observer)
        #expect(producerRecorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test("inners that cannot fail flatten into a stream that can, and a failing outer stream still fails it")
    func neverFailingInners() {
        let recorder = EventRecorder<Int, FlattenTestError>()
        let (outer, outerInput) = Signal<Int, FlattenTestError>.pipe()
        outer.flatMap(.merge) { SignalProducer<Int, Never>(value: $0) }.observe(recorder.observer)
        outerInput.send(value: 1)
        outerInput.send(error: .outer)
        #expect(recorder.events == [.value(1), .failed(.outer)])

        let producerRecorder = EventRecorder<Int, FlattenTestError>()
        SignalProducer<Int, FlattenTestError>(values: [1, 2])
            .flatMap(.concat) { SignalProducer<Int, Never>(values: [$0, $0]) }
            .start(producerRecorder.observer)
        #expect(producerRecorder.events == [.value(1), .value(1), .value(2), .value(2), .completed])

        // The inner error type is inferred from the outer one when nothing says otherwise.
        let inferred: SignalProducer<Int, Never> = SignalProducer<Int, Never>(value: 1).flatMap(.latest) {
            SignalProducer(value: $0 + 1)
        }
        let inferredRecorder = EventRecorder<Int, Never>()
        inferred.start(inferredRecorder.observer)
        #expect(inferredRecorder.events == [.value(2), .completed])
    }

    // MARK: merge

    @Test("merge runs every inner and interleaves their values as they arrive")
    func mergeInterleaves() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let disposable = harness.outer.flatMap(.merge) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        harness.outerObserver.send(value: 2)
        harness.innerObserver(2).send(value: 20)
        harness.innerObserver(1).send(value: 11)
        harness.innerObserver(2).send(value: 21)

        #expect(recorder.events == [.value(10), .value(20), .value(11), .value(21)])
        #expect(harness.log == ["start outer", "start 1", "start 2"])
        disposable.dispose()
    }

    @Test("merge completes when the outer stream completes after every inner")
    func mergeOuterCompletesLast() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.merge) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.send(value: 2)
        harness.innerObserver(1).sendCompleted()
        harness.innerObserver(2).send(value: 20)
        harness.innerObserver(2).sendCompleted()
        #expect(recorder.events == [.value(20)])
        harness.outerObserver.sendCompleted()

        #expect(recorder.events == [.value(20), .completed])
        #expect(harness.log == ["start outer", "start 1", "start 2", "end 1", "end 2", "end outer"])
    }

    @Test("merge completes when the last inner completes after the outer stream")
    func mergeInnerCompletesLast() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.merge) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.send(value: 2)
        harness.outerObserver.sendCompleted()
        harness.innerObserver(2).sendCompleted()
        harness.innerObserver(1).send(value: 10)
        #expect(recorder.events == [.value(10)])
        harness.innerObserver(1).sendCompleted()

        #expect(recorder.events == [.value(10), .completed])
        #expect(harness.log == ["start outer", "start 1", "start 2", "end outer", "end 2", "end 1"])
    }

    @Test("merge delivers every value exactly once when inners send from four threads at once")
    func mergeConcurrentInners() {
        let threads = 4
        let perThread = 5_000
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.merge) { harness.inner($0) }.start(recorder.observer)
        for key in 0..<threads {
            harness.outerObserver.send(value: key)
        }
        harness.outerObserver.sendCompleted()

        let group = DispatchGroup()
        for key in 0..<threads {
            let input = harness.innerObserver(key)
            runOnNewThread(group) {
                for index in 0..<perThread {
                    input.send(value: key * perThread + index)
                }
                input.sendCompleted()
            }
        }
        #expect(group.wait(timeout: .now() + 20) == .success, "senders did not finish")
        #expect(recorder.waitForTermination(), "the result did not terminate")

        let events = recorder.events
        #expect(events.last == .completed)
        let values = events.compactMap(\.value)
        #expect(values.count == threads * perThread)
        #expect(values.sorted() == Array(0..<threads * perThread))
        // Each inner's own values keep their order.
        for key in 0..<threads {
            let own = values.filter { $0 / perThread == key }
            #expect(own == Array(key * perThread..<(key + 1) * perThread))
        }
    }

    // MARK: latest

    @Test("latest disposes the previous inner before it starts the next one")
    func latestDisposesBeforeStarting() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let disposable = harness.outer.flatMap(.latest) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).send(value: 10)
        harness.outerObserver.send(value: 2)
        harness.innerObserver(2).send(value: 20)
        harness.outerObserver.send(value: 3)

        #expect(recorder.events == [.value(10), .value(20)])
        #expect(harness.log == ["start outer", "start 1", "end 1", "start 2", "end 2", "start 3"])
        disposable.dispose()
    }

    @Test("latest completes when the outer stream and the current inner have completed, replaced inners aside")
    func latestCompletion() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.latest) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.send(value: 2)
        harness.outerObserver.sendCompleted()
        harness.innerObserver(2).send(value: 20)
        #expect(recorder.events == [.value(20)])
        harness.innerObserver(2).sendCompleted()
        #expect(recorder.events == [.value(20), .completed])

        let harness2 = Harness()
        let recorder2 = EventRecorder<Int, FlattenTestError>()
        harness2.outer.flatMap(.latest) { harness2.inner($0) }.start(recorder2.observer)
        harness2.outerObserver.send(value: 1)
        harness2.innerObserver(1).sendCompleted()
        #expect(recorder2.events == [])
        harness2.outerObserver.sendCompleted()
        #expect(recorder2.events == [.completed])
    }

    /// How the replaced inner ends in `latestIgnoresLateEvents`.
    enum LateTerminal: String, CaseIterable, Sendable {
        case completed
        case failed
        case interruptedByReplacement
    }

    @Test("latest ignores a replaced inner's late value and late terminal event", arguments: LateTerminal.allCases)
    func latestIgnoresLateEvents(lateTerminal: LateTerminal) {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        // The first value blocks its delivering thread, so that inner 1's signal keeps delivering while the
        // test queues more of its events and replaces it.
        harness.outer.flatMap(.latest) { harness.inner($0) }.start(
            Observer { event in
                recorder.observer.send(event)
                if event == .value(10) {
                    entered.signal()
                    _ = gate.wait(timeout: .now() + 10)
                }
            })
        harness.outerObserver.send(value: 1)
        let inner1 = harness.innerObserver(1)
        let sender = DispatchGroup()
        runOnNewThread(sender) { inner1.send(value: 10) }
        #expect(entered.wait(timeout: .now() + 10) == .success)

        // Queued in inner 1's signal, behind the blocked delivery, before inner 1 is replaced.
        inner1.send(value: 11)
        switch lateTerminal {
        case .completed: inner1.sendCompleted()
        case .failed: inner1.send(error: .inner)
        case .interruptedByReplacement: break  // replacing it queues its `.interrupted`
        }
        harness.outerObserver.send(value: 2)
        harness.innerObserver(2).send(value: 20)
        harness.outerObserver.sendCompleted()
        gate.signal()
        #expect(sender.wait(timeout: .now() + 10) == .success)

        // Inner 1's late 11 and terminal event were delivered to flatMap after the replacement: dropped.
        #expect(recorder.events == [.value(10), .value(20)])
        harness.innerObserver(2).sendCompleted()
        #expect(recorder.events == [.value(10), .value(20), .completed])
        #expect(harness.log == ["start outer", "start 1", "start 2", "end outer", "end 1", "end 2"])
    }

    @Test("latest never delivers a replaced inner's value after a newer inner's value, under concurrency")
    func latestOrderUnderConcurrency() {
        let replacements = 2_000
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.latest) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 0)

        // A second thread keeps sending into whichever inner is newest, while this thread replaces it.
        let stop = TestBox(false)
        let current = TestBox(0)
        let sender = DispatchGroup()
        runOnNewThread(sender) {
            while !stop.value {
                let key = current.value
                harness.innerObserver(key).send(value: key)
            }
        }
        for key in 1...replacements {
            harness.outerObserver.send(value: key)
            current.value = key
        }
        stop.value = true
        #expect(sender.wait(timeout: .now() + 20) == .success)
        harness.outerObserver.sendCompleted()
        harness.innerObserver(replacements).sendCompleted()

        let events = recorder.events
        #expect(events.filter(\.isTerminating) == [.completed])
        #expect(events.last == .completed)
        let values = events.compactMap(\.value)
        #expect(values == values.sorted(), "a replaced inner's value came after a newer inner's value")
    }

    // MARK: concat

    @Test("concat runs one inner at a time, in outer order, starting each after the previous completed")
    func concatKeepsOrder() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.concat) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.outerObserver.send(value: 2)
        harness.outerObserver.send(value: 3)
        harness.innerObserver(1).send(value: 10)
        #expect(harness.log == ["start outer", "start 1"])
        harness.innerObserver(1).sendCompleted()
        harness.innerObserver(2).send(value: 20)
        harness.innerObserver(2).sendCompleted()
        harness.outerObserver.sendCompleted()
        #expect(recorder.events == [.value(10), .value(20)])
        harness.innerObserver(3).send(value: 30)
        harness.innerObserver(3).sendCompleted()

        #expect(recorder.events == [.value(10), .value(20), .value(30), .completed])
        #expect(
            harness.log == ["start outer", "start 1", "end 1", "start 2", "end 2", "start 3", "end outer", "end 3"])
    }

    @Test(
        "concat completes when the outer stream completes after every inner, or the last queued inner completes after it"
    )
    func concatCompletion() {
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.concat) { harness.inner($0) }.start(recorder.observer)
        harness.outerObserver.send(value: 1)
        harness.innerObserver(1).sendCompleted()
        #expect(recorder.events == [])
        harness.outerObserver.sendCompleted()
        #expect(recorder.events == [.completed])

        let harness2 = Harness()
        let recorder2 = EventRecorder<Int, FlattenTestError>()
        harness2.outer.flatMap(.concat) { harness2.inner($0) }.start(recorder2.observer)
        harness2.outerObserver.send(value: 1)
        harness2.outerObserver.send(value: 2)
        harness2.outerObserver.sendCompleted()
        harness2.innerObserver(1).sendCompleted()
        #expect(recorder2.events == [])
        harness2.innerObserver(2).sendCompleted()
        #expect(recorder2.events == [.completed])
    }

    @Test("concat runs 100,000 synchronous inners from a synchronous outer stream in order")
    func concatManySynchronousInners() {
        let count = 100_000
        let recorder = EventRecorder<Int, FlattenTestError>()
        SignalProducer<Int, FlattenTestError>(values: 0..<count)
            .flatMap(.concat) { SignalProducer(value: $0) }
            .start(recorder.observer)
        let expected: [Event<Int, FlattenTestError>] = (0..<count).map { .value($0) } + [.completed]
        #expect(recorder.events == expected)
    }

    @Test("concat runs a queue of 100,000 synchronous inners, released by one completion, in constant stack")
    func concatQueuedSynchronousChain() {
        let count = 100_000
        let harness = Harness()
        let recorder = EventRecorder<Int, FlattenTestError>()
        harness.outer.flatMap(.concat) { key in key == 0 ? harness.inner(0) : SignalProducer(value: key) }
            .start(recorder.observer)
        for key in 0..<count {
            harness.outerObserver.send(value: key)
        }
        harness.outerObserver.sendCompleted()
        harness.innerObserver(0).send(value: 0)
        // Each queued inner completes during its own start, which must start the next without recursion.
        harness.innerObserver(0).sendCompleted()

        let expected: [Event<Int, FlattenTestError>] = (0..<count).map { .value($0) } + [.completed]
        #expect(recorder.events == expected)
    }
}

/// Runs `body` on a new thread, inside `group`. A thread of its own, rather than a Dispatch worker, so
/// that tests blocked in waits cannot starve it.
private func runOnNewThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
    group.enter()
    Thread.detachNewThread {
        body()
        group.leave()
    }
}

/// A value behind a lock, for test threads.
private final class TestBox<Value: Sendable>: @unchecked Sendable {
    // Safe: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: Value

    init(_ value: Value) {
        storage = value
    }

    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
