import Dispatch
import Signals
import Testing

@Suite("values: the AsyncSequence view")
struct ValuesTests {
    @Test("A producer's values arrive in order and the loop ends when the run completes")
    func producerCompletes() async {
        var received: [Int] = []
        for await value in SignalProducer<Int, Never>(values: 1, 2, 3).values {
            received.append(value)
        }
        #expect(received == [1, 2, 3])
    }

    @Test("A signal's values sent after the iterator was made are buffered, in order, and the loop ends on completion")
    func signalCompletes() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        input.send(value: 0)
        var iterator = signal.values.makeAsyncIterator()
        for value in 1...100 { input.send(value: value) }
        input.sendCompleted()
        var received: [Int] = []
        while let value = await iterator.next() {
            received.append(value)
        }
        #expect(received == Array(1...100))
        #expect(await iterator.next() == nil)
    }

    @Test("values keeps every value in order when the consumer never catches up with the buffer")
    func bufferStaysAhead() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        var iterator = signal.values.makeAsyncIterator()
        for value in 0..<100 { input.send(value: value) }
        var received: [Int] = []
        for value in 100..<5_000 {
            if let next = await iterator.next() { received.append(next) }
            input.send(value: value)
        }
        input.sendCompleted()
        while let value = await iterator.next() {
            received.append(value)
        }
        #expect(received == Array(0..<5_000))
    }

    @Test("values throws the failure after the buffered values, then returns nil")
    func failureThrows() async throws {
        let producer = SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.send(value: 2)
            observer.send(error: .boom)
        }
        var iterator = producer.values.makeAsyncIterator()
        var received: [Int] = []
        var thrown: TestError?
        do {
            while let value = try await iterator.next() {
                received.append(value)
            }
        } catch {
            thrown = error
        }
        #expect(received == [1, 2])
        #expect(thrown == .boom)
        #expect(try await iterator.next() == nil)

        await #expect(throws: TestError.boom) {
            for try await _ in SignalProducer<Int, TestError>(error: .boom).values {}
        }
    }

    @Test("values finishes without throwing when the stream is interrupted")
    func interruptionFinishes() async throws {
        let (signal, input) = Signal<Int, TestError>.pipe()
        var iterator = signal.values.makeAsyncIterator()
        input.send(value: 5)
        input.sendInterrupted()
        #expect(try await iterator.next() == 5)
        #expect(try await iterator.next() == nil)
    }

    @Test("values waits for values sent later from another thread")
    func valuesFromAnotherThread() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let ready = DispatchSemaphore(value: 0)
        operatorTestRunOnNewThread {
            ready.wait()
            for value in 0..<1_000 { input.send(value: value) }
            input.sendCompleted()
        }
        var received: [Int] = []
        let values = signal.values
        var iterator = values.makeAsyncIterator()
        ready.signal()
        while let value = await iterator.next() {
            received.append(value)
        }
        #expect(received == Array(0..<1_000))
    }

    @Test("Each iterator of a producer's values starts its own run")
    func iteratorPerRun() async {
        let starts = TestLog<String>()
        let values = SignalProducer<Int, Never> { observer, _ in
            starts.append("start")
            observer.send(value: 1)
            observer.sendCompleted()
        }.values
        #expect(starts.entries.isEmpty)
        var first: [Int] = []
        for await value in values { first.append(value) }
        var second: [Int] = []
        for await value in values { second.append(value) }
        #expect(first == [1] && second == [1])
        #expect(starts.entries == ["start", "start"])
    }

    @Test("Cancelling the task iterating a producer's values disposes the run and ends the loop")
    func cancellationDisposesRun() async {
        let started = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let received = TestLog<String>()
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { ended.signal() }
            observer.send(value: 1)
            started.signal()
        }
        let task = Task {
            for await value in producer.values {
                received.append("value \(value)")
            }
            received.append("loop ended")
            finished.signal()
        }
        #expect(await Watchdog.signalled(started))
        task.cancel()
        #expect(await Watchdog.signalled(ended), "the run's lifetime did not end after the task was cancelled")
        #expect(await Watchdog.signalled(finished), "the loop did not end after the task was cancelled")
        let entries = received.entries
        #expect(entries == ["value 1", "loop ended"] || entries == ["loop ended"])
    }

    @Test("Cancelling the task iterating a signal's values detaches it and ends the loop")
    func cancellationDetachesSignal() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let waiting = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let received = TestLog<String>()
        let task = Task {
            var iterator = signal.values.makeAsyncIterator()
            waiting.signal()
            while let value = await iterator.next() {
                received.append("value \(value)")
            }
            received.append("loop ended")
            finished.signal()
        }
        #expect(await Watchdog.signalled(waiting))
        task.cancel()
        #expect(await Watchdog.signalled(finished), "the loop did not end after the task was cancelled")
        input.send(value: 9)
        #expect(received.entries == ["loop ended"])
    }

    @Test("Releasing an iterator disposes the run it started")
    func releasingIteratorDisposesRun() async throws {
        let source = OperatorTestControlledProducer<Int>()
        do {
            var iterator = source.producer.values.makeAsyncIterator()
            source.input().send(value: 1)
            #expect(try await iterator.next() == 1)
            #expect(!source.hasEnded())
        }
        #expect(source.hasEnded())
    }

    @Test("Many values sent from several threads while a task iterates all arrive, once each")
    func concurrentProducers() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        var iterator = signal.values.makeAsyncIterator()
        operatorTestRunOnNewThread {
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for value in 0..<500 { input.send(value: thread * 1_000 + value) }
            }
            input.sendCompleted()
        }
        var received: [Int] = []
        while let value = await iterator.next() {
            received.append(value)
        }
        #expect(received.count == 2_000)
        for thread in 0..<4 {
            #expect(received.filter { $0 / 1_000 == thread } == (0..<500).map { thread * 1_000 + $0 })
        }
    }
}
