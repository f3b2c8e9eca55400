import Dispatch
import Foundation
import Signals
import Testing

@Suite("combineLatest and zip")
struct CombineLatestZipTests {
    // MARK: combineLatest

    @Test("combineLatest sends the latest pair once both have sent, and completes when both complete")
    func combineLatestValuesAndCompletion() {
        let (a, aInput) = Signal<Int, TestError>.pipe()
        let (b, bInput) = Signal<String, TestError>.pipe()
        let recorder = EventRecorder<String, TestError>()
        Signal.combineLatest(a, b).map { "\($0)\($1)" }.observe(recorder.observer)
        aInput.send(value: 1)
        aInput.send(value: 2)
        bInput.send(value: "x")
        aInput.send(value: 3)
        aInput.sendCompleted()
        bInput.send(value: "y")
        #expect(recorder.events == [.value("2x"), .value("3x"), .value("3y")])
        bInput.sendCompleted()
        #expect(recorder.events == [.value("2x"), .value("3x"), .value("3y"), .completed])
    }

    @Test("combineLatest of 3 and 4 signals, the instance form and an array of signals")
    func combineLatestArities() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let (c, cInput) = Signal<Int, Never>.pipe()
        let (d, dInput) = Signal<Int, Never>.pipe()
        let three = EventRecorder<[Int], Never>()
        let four = EventRecorder<[Int], Never>()
        let with = EventRecorder<[Int], Never>()
        let array = EventRecorder<[Int], Never>()
        Signal.combineLatest(a, b, c).map { [$0, $1, $2] }.observe(three.observer)
        Signal.combineLatest(a, b, c, d).map { [$0, $1, $2, $3] }.observe(four.observer)
        a.combineLatest(with: b).map { [$0, $1] }.observe(with.observer)
        Signal.combineLatest([a, b, c, d]).observe(array.observer)
        aInput.send(value: 1)
        bInput.send(value: 2)
        cInput.send(value: 3)
        dInput.send(value: 4)
        aInput.send(value: 5)
        for input in [aInput, bInput, cInput, dInput] { input.sendCompleted() }
        #expect(three.events == [.value([1, 2, 3]), .value([5, 2, 3]), .completed])
        #expect(four.events == [.value([1, 2, 3, 4]), .value([5, 2, 3, 4]), .completed])
        #expect(with.events == [.value([1, 2]), .value([5, 2]), .completed])
        #expect(array.events == [.value([1, 2, 3, 4]), .value([5, 2, 3, 4]), .completed])
    }

    @Test("combineLatest of no signals or producers completes at once")
    func combineLatestEmpty() {
        let signal = EventRecorder<[Int], Never>()
        Signal<Int, Never>.combineLatest([Signal<Int, Never>]()).observe(signal.observer)
        #expect(signal.events == [.completed])
        let producer = EventRecorder<[Int], Never>()
        SignalProducer<Int, Never>.combineLatest([SignalProducer<Int, Never>]()).start(producer.observer)
        #expect(producer.events == [.completed])
    }

    @Test("combineLatest fails or is interrupted as soon as any source is, and detaches from all")
    func combineLatestTerminals() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let (a, aInput) = Signal<Int, TestError>.pipe()
            let (b, bInput) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<[Int], TestError>()
            weak var weakResult: Signal<(Int, Int), TestError>?
            do {
                let result = Signal.combineLatest(a, b)
                weakResult = result
                result.map { [$0, $1] }.observe(recorder.observer)
            }
            aInput.send(value: 1)
            bInput.send(value: 2)
            bInput.send(terminal)
            aInput.send(value: 3)
            aInput.sendCompleted()
            #expect(recorder.events == [.value([1, 2]), terminal.map { [$0] }])
            #expect(weakResult == nil, "the result detached from its sources")
        }
    }

    @Test("A completed source keeps its last value in later pairs; one that never sent keeps the result silent")
    func combineLatestCompletedSource() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        Signal.combineLatest(a, b).map { [$0, $1] }.observe(recorder.observer)
        aInput.sendCompleted()
        bInput.send(value: 1)
        bInput.sendCompleted()
        #expect(recorder.events == [.completed])
    }

    @Test("Producer combineLatest starts both, and disposing the run interrupts both inner runs")
    func producerCombineLatestDisposal() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<[Int], TestError>()
        let run = first.producer.combineLatest(with: second.producer).map { [$0, $1] }.start(recorder.observer)
        first.input().send(value: 1)
        second.input().send(value: 2)
        run.dispose()
        first.input().send(value: 3)
        #expect(recorder.events == [.value([1, 2]), .interrupted])
        #expect(first.hasEnded() && second.hasEnded())
    }

    @Test("Producer combineLatest: a failing source interrupts the other; a synchronous failure skips starting it")
    func producerCombineLatestFailure() {
        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<[Int], TestError>()
        SignalProducer.combineLatest(first.producer, second.producer).map { [$0, $1] }.start(recorder.observer)
        second.input().send(error: .boom)
        #expect(recorder.events == [.failed(.boom)])
        #expect(first.hasEnded())

        let never = OperatorTestControlledProducer<Int>()
        let failedAtOnce = EventRecorder<[Int], TestError>()
        SignalProducer.combineLatest([SignalProducer(error: .boom), never.producer]).start(failedAtOnce.observer)
        #expect(failedAtOnce.events == [.failed(.boom)])
        #expect(never.startCount == 0)
    }

    @Test("Producer combineLatest of 3 and 4 producers and of an array, with synchronous sources")
    func producerCombineLatestArities() {
        let one = SignalProducer<Int, Never>(values: 1, 2)
        let three = EventRecorder<[Int], Never>()
        SignalProducer.combineLatest(one, one, one).map { [$0, $1, $2] }.start(three.observer)
        #expect(three.events == [.value([2, 2, 1]), .value([2, 2, 2]), .completed])
        let four = EventRecorder<[Int], Never>()
        SignalProducer.combineLatest(one, one, one, one).map { [$0, $1, $2, $3] }.start(four.observer)
        #expect(four.events == [.value([2, 2, 2, 1]), .value([2, 2, 2, 2]), .completed])
        let array = EventRecorder<[Int], Never>()
        SignalProducer.combineLatest([one, one]).start(array.observer)
        #expect(array.events == [.value([2, 1]), .value([2, 2]), .completed])
    }

    @Test("An observer of combineLatest that sends into a source is queued, not recursed into")
    func combineLatestReentrancy() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let probe = InFlightProbe()
        let recorder = EventRecorder<[Int], Never>()
        let combined = Signal.combineLatest(a, b)
        combined.observeValues { first, second in
            probe.run {
                if first < 3 { aInput.send(value: first + 1) }
                if first == 3 && second == 0 { bInput.send(value: 1) }
            }
        }
        combined.map { [$0, $1] }.observe(recorder.observer)
        bInput.send(value: 0)
        aInput.send(value: 1)
        aInput.sendCompleted()
        bInput.sendCompleted()
        #expect(recorder.events == [.value([1, 0]), .value([2, 0]), .value([3, 0]), .value([3, 1]), .completed])
        #expect(probe.maximum == 1)
    }

    @Test("Two threads sending into the two sources: every observer sees one consistent, complete sequence")
    func combineLatestThreads() {
        let perThread = 10_000
        for _ in 0..<4 {
            let (a, aInput) = Signal<Int, Never>.pipe()
            let (b, bInput) = Signal<Int, Never>.pipe()
            let combined = Signal.combineLatest(a, b)
            let first = EventRecorder<[Int], Never>()
            let second = EventRecorder<[Int], Never>()
            let probe = InFlightProbe()
            combined.observe { event in probe.run { first.record(event.map { [$0, $1] }) } }
            combined.observe { event in second.record(event.map { [$0, $1] }) }
            Watchdog.runOnThreads(2) { thread in
                let input = thread == 0 ? aInput : bInput
                for value in 1...perThread { input.send(value: value) }
                input.sendCompleted()
            }
            #expect(first.waitForTermination())
            let pairs = first.values
            #expect(first.events.last == .completed && first.terminalCount == 1)
            #expect(second.events == first.events, "every observer sees the same sequence")
            #expect(probe.maximum == 1)
            #expect(pairs.last == [perThread, perThread])
            // Each pair after the first moves exactly one source forward by exactly one value.
            let steps = zip(pairs, pairs.dropFirst()).map { [$1[0] - $0[0], $1[1] - $0[1]] }
            #expect(steps.allSatisfy { $0 == [1, 0] || $0 == [0, 1] })
            if let firstPair = pairs.first {
                #expect(pairs.count == 2 * perThread - firstPair[0] - firstPair[1] + 1)
            }
        }
    }

    // MARK: zip

    @Test("zip pairs values in order and completes when a completed source has nothing left waiting")
    func zipValuesAndCompletion() {
        let (a, aInput) = Signal<Int, TestError>.pipe()
        let (b, bInput) = Signal<String, TestError>.pipe()
        let recorder = EventRecorder<String, TestError>()
        Signal.zip(a, b).map { "\($0)\($1)" }.observe(recorder.observer)
        aInput.send(value: 1)
        aInput.send(value: 2)
        aInput.send(value: 3)
        bInput.send(value: "x")
        aInput.sendCompleted()
        #expect(recorder.events == [.value("1x")], "a's values 2 and 3 still wait")
        bInput.send(value: "y")
        #expect(recorder.events == [.value("1x"), .value("2y")])
        bInput.sendCompleted()
        #expect(recorder.events == [.value("1x"), .value("2y"), .completed], "b completed with nothing waiting")
    }

    @Test("zip completes when the source that completes has an empty buffer, with the tuple it completes")
    func zipCompletesWithLastPair() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        a.zip(with: b).map { [$0, $1] }.observe(recorder.observer)
        aInput.send(value: 1)
        aInput.sendCompleted()
        #expect(recorder.events == [])
        bInput.send(value: 10)
        #expect(recorder.events == [.value([1, 10]), .completed])
    }

    @Test("zip of 3, 4 and an array of signals; zip of none completes at once")
    func zipArities() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let (c, cInput) = Signal<Int, Never>.pipe()
        let (d, dInput) = Signal<Int, Never>.pipe()
        let three = EventRecorder<[Int], Never>()
        let four = EventRecorder<[Int], Never>()
        let array = EventRecorder<[Int], Never>()
        Signal.zip(a, b, c).map { [$0, $1, $2] }.observe(three.observer)
        Signal.zip(a, b, c, d).map { [$0, $1, $2, $3] }.observe(four.observer)
        Signal.zip([a, b]).observe(array.observer)
        for (offset, input) in [aInput, bInput, cInput, dInput].enumerated() {
            input.send(value: offset)
            input.send(value: offset + 10)
        }
        #expect(three.values == [[0, 1, 2], [10, 11, 12]])
        #expect(four.values == [[0, 1, 2, 3], [10, 11, 12, 13]])
        #expect(array.values == [[0, 1], [10, 11]])
        dInput.sendInterrupted()
        #expect(four.events.last == .interrupted)
        let empty = EventRecorder<[Int], Never>()
        Signal<Int, Never>.zip([Signal<Int, Never>]()).observe(empty.observer)
        #expect(empty.events == [.completed])
    }

    @Test("zip fails at once and drops what waits; producer zip interrupts the other inner run")
    func zipFailure() {
        let (a, aInput) = Signal<Int, TestError>.pipe()
        let (b, bInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<[Int], TestError>()
        Signal.zip(a, b).map { [$0, $1] }.observe(recorder.observer)
        aInput.send(value: 1)
        aInput.send(error: .boom)
        bInput.send(value: 2)
        #expect(recorder.events == [.failed(.boom)])

        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let produced = EventRecorder<[Int], TestError>()
        SignalProducer.zip(first.producer, second.producer).map { [$0, $1] }.start(produced.observer)
        first.input().send(value: 1)
        second.input().send(value: 2)
        first.input().send(error: .other)
        #expect(produced.events == [.value([1, 2]), .failed(.other)])
        #expect(second.hasEnded())
    }

    @Test("Producer zip: synchronous producers, 3 and 4 arities, and disposal of the run")
    func producerZip() {
        let letters = SignalProducer<Int, TestError>(values: 1, 2, 3)
        let numbers = SignalProducer<Int, TestError>(values: 10, 20)
        let pairs = EventRecorder<[Int], TestError>()
        letters.zip(with: numbers).map { [$0, $1] }.start(pairs.observer)
        #expect(pairs.events == [.value([1, 10]), .value([2, 20]), .completed])
        let three = EventRecorder<[Int], TestError>()
        SignalProducer.zip(letters, numbers, letters).map { [$0, $1, $2] }.start(three.observer)
        #expect(three.events == [.value([1, 10, 1]), .value([2, 20, 2]), .completed])
        let four = EventRecorder<[Int], TestError>()
        SignalProducer.zip(letters, letters, letters, numbers).map { [$0, $1, $2, $3] }.start(four.observer)
        #expect(four.values.count == 2)
        let array = EventRecorder<[Int], TestError>()
        SignalProducer.zip([letters, numbers]).start(array.observer)
        #expect(array.events == [.value([1, 10]), .value([2, 20]), .completed])

        let first = OperatorTestControlledProducer<Int>()
        let second = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<[Int], TestError>()
        let run = SignalProducer.zip(first.producer, second.producer).map { [$0, $1] }.start(disposed.observer)
        first.input().send(value: 1)
        run.dispose()
        #expect(disposed.events == [.interrupted])
        #expect(first.hasEnded() && second.hasEnded())
    }

    @Test("An observer of zip that sends into a source is queued, not recursed into")
    func zipReentrancy() {
        let (a, aInput) = Signal<Int, Never>.pipe()
        let (b, bInput) = Signal<Int, Never>.pipe()
        let probe = InFlightProbe()
        let recorder = EventRecorder<[Int], Never>()
        let zipped = Signal.zip(a, b)
        zipped.observeValues { first, _ in
            probe.run {
                if first < 3 {
                    aInput.send(value: first + 1)
                    bInput.send(value: first + 1)
                }
            }
        }
        zipped.map { [$0, $1] }.observe(recorder.observer)
        aInput.send(value: 1)
        bInput.send(value: 1)
        // Completing ends the result, which releases the observer that holds both inputs.
        aInput.sendCompleted()
        #expect(recorder.events == [.value([1, 1]), .value([2, 2]), .value([3, 3]), .completed])
        #expect(probe.maximum == 1)
    }

    @Test("Two threads sending into the two sources of zip: every observer sees every pair, in order")
    func zipThreads() {
        let perThread = 10_000
        for _ in 0..<4 {
            let (a, aInput) = Signal<Int, Never>.pipe()
            let (b, bInput) = Signal<Int, Never>.pipe()
            let zipped = Signal.zip(a, b)
            let first = EventRecorder<[Int], Never>()
            let second = EventRecorder<[Int], Never>()
            zipped.observe { first.record($0.map { [$0, $1] }) }
            zipped.observe { second.record($0.map { [$0, $1] }) }
            Watchdog.runOnThreads(2) { thread in
                let input = thread == 0 ? aInput : bInput
                for value in 1...perThread { input.send(value: value) }
                input.sendCompleted()
            }
            #expect(first.waitForTermination())
            #expect(first.values == (1...perThread).map { [$0, $0] })
            #expect(first.events.last == .completed && first.terminalCount == 1)
            #expect(second.events == first.events)
        }
    }
}
