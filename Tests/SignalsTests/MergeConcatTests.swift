import Dispatch
import Signals
import Testing

@Suite("merge, concat and then")
struct MergeConcatTests {
    // MARK: Signal.merge

    @Test("Signal.merge forwards values as they arrive and completes only after every input completed")
    func signalMergeCompletesAfterAll() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let (third, thirdInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        Signal.merge(first, second, third).observe(recorder.observer)
        firstInput.send(value: 1)
        secondInput.send(value: 2)
        firstInput.sendCompleted()
        thirdInput.send(value: 3)
        thirdInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3)])
        secondInput.send(value: 4)
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .value(4), .completed])
    }

    @Test("Signal.merge forwards a failure of any input at once and ignores the others afterwards")
    func signalMergeFailure() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        first.merge(with: second).observe(recorder.observer)
        firstInput.send(value: 1)
        secondInput.send(error: .boom)
        firstInput.send(value: 2)
        firstInput.sendCompleted()
        #expect(recorder.events == [.value(1), .failed(.boom)])
    }

    @Test("Signal.merge counts an interrupted input as completed, as in ReactiveSwift")
    func signalMergeInterruption() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        Signal.merge([first, second]).observe(recorder.observer)
        firstInput.sendCompleted()
        secondInput.send(value: 1)
        secondInput.sendInterrupted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("Signal.merge of no signals completes at once")
    func signalMergeEmpty() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>.merge([]).observe(recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test("Signal.merge detaches from every input once it has ended")
    func signalMergeDetaches() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        let merged = Signal.merge(first, second)
        merged.observe(recorder.observer)
        #expect(first.observerCount == 1 && second.observerCount == 1)
        firstInput.send(error: .boom)
        #expect(first.observerCount == 0)
        #expect(second.observerCount == 0)
        secondInput.send(value: 1)
        #expect(recorder.events == [.failed(.boom)])
    }

    @Test(
        "Signal.merge of inputs sending from many threads delivers every value once, in each input's order, then completes once"
    )
    func signalMergeConcurrent() {
        for _ in 0..<10 {
            let pipes = (0..<4).map { _ in Signal<Int, Never>.pipe() }
            let recorder = EventRecorder<Int, Never>()
            Signal.merge(pipes.map(\.output)).observe(recorder.observer)
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                for value in 0..<250 { pipes[index].input.send(value: index * 1_000 + value) }
                pipes[index].input.sendCompleted()
            }
            let events = recorder.events
            #expect(events.count == 1_001)
            #expect(events.last == .completed)
            let values = events.compactMap(\.value)
            for index in 0..<4 {
                #expect(values.filter { $0 / 1_000 == index } == (0..<250).map { index * 1_000 + $0 })
            }
        }
    }

    // MARK: SignalProducer.merge

    @Test("Producer merge starts every producer and completes after all of them")
    func producerMergeCompletesAfterAll() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        first.producer.merge(with: second.producer).start(recorder.observer)
        #expect(first.startCount == 1 && second.startCount == 1)
        second.input().send(value: 1)
        first.input().send(value: 2)
        second.input().sendCompleted()
        #expect(recorder.events == [.value(1), .value(2)])
        first.input().send(value: 3)
        first.input().sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
        #expect(first.hasEnded() && second.hasEnded())
    }

    @Test("Producer merge of synchronous producers forwards their values in start order")
    func producerMergeSynchronous() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer.merge(SignalProducer(values: 1, 2), SignalProducer(values: 3), .empty).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])

        let empty = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.merge([]).start(empty.observer)
        #expect(empty.events == [.completed])
    }

    @Test("Producer merge forwards a failure at once and disposes the other inner runs")
    func producerMergeFailure() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.merge([first.producer, second.producer]).start(recorder.observer)
        first.input().send(value: 1)
        second.input().send(error: .boom)
        first.input().send(value: 2)
        #expect(recorder.events == [.value(1), .failed(.boom)])
        #expect(first.hasEnded() && second.hasEnded())
    }

    @Test("Producer merge stops starting producers once an earlier one has failed synchronously")
    func producerMergeSynchronousFailure() {
        let later = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.merge(SignalProducer(error: .boom), later.producer).start(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
        #expect(later.startCount == 0)
    }

    @Test(
        "Producer merge counts an interrupted inner run as completed and leaves the others running, as in ReactiveSwift"
    )
    func producerMergeInnerInterruption() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.merge(first.producer, second.producer).start(recorder.observer)
        first.input().sendInterrupted()
        #expect(recorder.events == [])
        #expect(!second.hasEnded())
        second.input().send(value: 2)
        second.input().sendCompleted()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test("Disposing a merged run disposes every inner run")
    func producerMergeDisposal() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        let run = SignalProducer.merge(first.producer, second.producer).start(recorder.observer)
        first.input().send(value: 1)
        run.dispose()
        second.input().send(value: 2)
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(first.hasEnded() && second.hasEnded())
    }

    // MARK: concat

    @Test("concat starts the next producer only after the previous one completed, and forwards values in order")
    func concatOrder() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        first.producer.concat(second.producer).start(recorder.observer)
        first.input().send(value: 1)
        #expect(second.startCount == 0)
        first.input().send(value: 2)
        first.input().sendCompleted()
        #expect(second.startCount == 1)
        second.input().send(value: 3)
        second.input().sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test("concat of synchronous producers runs them in order")
    func concatSynchronous() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer.concat(SignalProducer(values: 1, 2), .empty, SignalProducer(value: 3)).start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])

        let empty = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.concat([]).start(empty.observer)
        #expect(empty.events == [.completed])
    }

    @Test("concat of many synchronously completing producers runs in constant stack")
    func concatLongChain() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer.concat((0..<20_000).map { SignalProducer<Int, Never>(value: $0) }).start(recorder.observer)
        #expect(recorder.events == (0..<20_000).map { .value($0) } + [.completed])
    }

    @Test("concat forwards a failure and does not start the next producer")
    func concatFailure() {
        let next = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.send(error: .boom)
        }
        .concat(next.producer)
        .start(recorder.observer)
        #expect(recorder.events == [.value(1), .failed(.boom)])
        #expect(next.startCount == 0)
    }

    @Test("concat counts an interrupted producer as completed and starts the next, as in ReactiveSwift")
    func concatInterruption() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        first.producer.concat(second.producer).start(recorder.observer)
        first.input().sendInterrupted()
        #expect(recorder.events == [])
        #expect(second.startCount == 1)
        second.input().sendCompleted()
        #expect(recorder.events == [.completed])
    }

    @Test("Disposing a concatenated run disposes the running producer and starts no other")
    func concatDisposal() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let third = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        let run = SignalProducer.concat(first.producer, second.producer, third.producer).start(recorder.observer)
        first.input().sendCompleted()
        second.input().send(value: 1)
        run.dispose()
        #expect(second.hasEnded())
        second.input().sendCompleted()
        #expect(third.startCount == 0)
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test("concat starts the next producer when the previous one completes on another thread")
    func concatAcrossThreads() {
        for _ in 0..<50 {
            let first = OperatorTestControlledProducer<Int>()
            let recorder = EventRecorder<Int, TestError>()
            let done = DispatchSemaphore(value: 0)
            first.producer.concat(SignalProducer(values: 2, 3)).start(
                Observer { event in
                    recorder.observer.send(event)
                    if event.isTerminating { done.signal() }
                })
            operatorTestRunOnNewThread {
                first.input().send(value: 1)
                first.input().sendCompleted()
            }
            #expect(done.wait(timeout: .now() + 5) == .success)
            #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
        }
    }

    // MARK: then

    @Test("then ignores the first producer's values and forwards the replacement after it completes")
    func thenReplaces() {
        let first = OperatorTestControlledProducer<Int>()
        let replacement = OperatorTestControlledProducer<String>()
        let recorder = EventRecorder<String, TestError>()
        first.producer.then(replacement.producer).start(recorder.observer)
        first.input().send(value: 1)
        #expect(replacement.startCount == 0)
        first.input().sendCompleted()
        replacement.input().send(value: "a")
        replacement.input().sendCompleted()
        #expect(recorder.events == [.value("a"), .completed])
    }

    @Test("then forwards a failure of the first producer without starting the replacement")
    func thenFailure() {
        let replacement = OperatorTestControlledProducer<String>()
        let recorder = EventRecorder<String, TestError>()
        SignalProducer<Int, TestError>(error: .boom).then(replacement.producer).start(recorder.observer)
        #expect(recorder.events == [.failed(.boom)])
        #expect(replacement.startCount == 0)
    }

    @Test("Disposing a then run disposes whichever producer is running")
    func thenDisposal() {
        let first = OperatorTestControlledProducer<Int>()
        let replacement = OperatorTestControlledProducer<String>()
        let recorder = EventRecorder<String, TestError>()
        let run = first.producer.then(replacement.producer).start(recorder.observer)
        run.dispose()
        #expect(first.hasEnded())
        #expect(replacement.startCount == 0)

        let secondRun = first.producer.then(replacement.producer).start(recorder.observer)
        first.input(1).sendCompleted()
        secondRun.dispose()
        #expect(replacement.hasEnded())
        #expect(recorder.events == [.interrupted, .interrupted])
    }
}
