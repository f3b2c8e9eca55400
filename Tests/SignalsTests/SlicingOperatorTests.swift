import Dispatch
import Foundation
import Signals
import Testing

/// Sends `values` into `input`, then `terminal`.
private func send<Value>(
    _ values: [Value], then terminal: Event<Value, TestError>?, into input: Observer<Value, TestError>
) {
    for value in values { input.send(value: value) }
    if let terminal { input.send(terminal) }
}

/// The terminal events every slicing operator must forward unchanged (completion is checked per
/// operator, since some send values on completion).
private let failureAndInterruption: [Event<Int, TestError>] = [.failed(.boom), .interrupted]

@Suite("skip, take(while:), take(last:), collect, combinePrevious, skipNil, uniqueValues and prefix")
struct SlicingOperatorTests {
    // MARK: skip

    @Test("skip(first:) drops the first values; skip(while:) drops until the first false, then forwards all")
    func skipValues() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let first = EventRecorder<Int, TestError>()
        let whileSmall = EventRecorder<Int, TestError>()
        let none = EventRecorder<Int, TestError>()
        signal.skip(first: 2).observe(first.observer)
        signal.skip(while: { $0 < 3 }).observe(whileSmall.observer)
        signal.skip(first: 0).observe(none.observer)
        send([1, 2, 3, 1, 4], then: .completed, into: input)
        #expect(first.events == [.value(3), .value(1), .value(4), .completed])
        #expect(whileSmall.events == [.value(3), .value(1), .value(4), .completed])
        #expect(none.values == [1, 2, 3, 1, 4])
    }

    @Test("skip, skipNil and uniqueValues forward failure and interruption")
    func skipTerminals() {
        for terminal in failureAndInterruption {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let skipped = EventRecorder<Int, TestError>()
            let unique = EventRecorder<Int, TestError>()
            let nonNil = EventRecorder<Int, TestError>()
            signal.skip(first: 5).observe(skipped.observer)
            signal.uniqueValues().observe(unique.observer)
            signal.map { $0 == 2 ? nil : $0 }.skipNil().observe(nonNil.observer)
            send([1, 2, 1], then: terminal, into: input)
            #expect(skipped.events == [terminal])
            #expect(unique.events == [.value(1), .value(2), terminal])
            #expect(nonNil.events == [.value(1), .value(1), terminal])
        }
    }

    @Test("uniqueValues by identity keeps the first value of each identity, per producer run")
    func uniqueValuesByIdentity() {
        let producer = SignalProducer<String, TestError>(values: "apple", "avocado", "banana", "blueberry", "cherry")
            .uniqueValues { $0.first! }
        for _ in 0..<2 {
            let recorder = EventRecorder<String, TestError>()
            producer.start(recorder.observer)
            #expect(recorder.events == [.value("apple"), .value("banana"), .value("cherry"), .completed])
        }
        let nonNil = EventRecorder<Int, TestError>()
        SignalProducer<Int?, TestError>(values: 1, nil, 3).skipNil().start(nonNil.observer)
        #expect(nonNil.events == [.value(1), .value(3), .completed])
    }

    // MARK: take(while:), take(last:)

    @Test("take(while:) forwards until the first false, then completes without that value and detaches")
    func takeWhile() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        weak var weakTaken: Signal<Int, TestError>?
        do {
            let taken = signal.take(while: { $0 < 3 })
            weakTaken = taken
            taken.observe(recorder.observer)
        }
        send([1, 2, 3, 1], then: .failed(.boom), into: input)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(weakTaken == nil)
        for terminal in failureAndInterruption + [.completed] {
            let (other, otherInput) = Signal<Int, TestError>.pipe()
            let forwarded = EventRecorder<Int, TestError>()
            other.take(while: { _ in true }).observe(forwarded.observer)
            send([1], then: terminal, into: otherInput)
            #expect(forwarded.events == [.value(1), terminal])
        }
    }

    @Test("Producer take(while:) ends the underlying run at the first false")
    func producerTakeWhile() {
        let source = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        source.producer.take(while: { $0 < 3 }).start(recorder.observer)
        source.input().send(value: 1)
        #expect(!source.hasEnded())
        source.input().send(value: 5)
        #expect(source.hasEnded())
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("take(last:) sends the last values on completion; failure and interruption drop them")
    func takeLast() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let two = EventRecorder<Int, TestError>()
        let many = EventRecorder<Int, TestError>()
        let zero = EventRecorder<Int, TestError>()
        signal.take(last: 2).observe(two.observer)
        signal.take(last: 10).observe(many.observer)
        signal.take(last: 0).observe(zero.observer)
        send([1, 2, 3, 4], then: nil, into: input)
        #expect(two.events == [])
        input.sendCompleted()
        #expect(two.events == [.value(3), .value(4), .completed])
        #expect(many.events == [.value(1), .value(2), .value(3), .value(4), .completed])
        #expect(zero.events == [.completed])
        for terminal in failureAndInterruption {
            let (other, otherInput) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            other.take(last: 2).observe(recorder.observer)
            send([1, 2], then: terminal, into: otherInput)
            #expect(recorder.events == [terminal])
        }
    }

    @Test("Disposing a take(last:) run interrupts the underlying run and sends nothing it kept")
    func producerTakeLastDisposal() {
        let source = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        let run = source.producer.take(last: 1).start(recorder.observer)
        source.input().send(value: 1)
        run.dispose()
        #expect(source.hasEnded())
        #expect(recorder.events == [.interrupted])
    }

    // MARK: collect

    @Test("collect() sends all values as one array on completion, and an empty array if there were none")
    func collectAll() {
        let all = EventRecorder<[Int], TestError>()
        SignalProducer<Int, TestError>(values: 1, 2, 3).collect().start(all.observer)
        #expect(all.events == [.value([1, 2, 3]), .completed])
        let empty = EventRecorder<[Int], TestError>()
        SignalProducer<Int, TestError>.empty.collect().start(empty.observer)
        #expect(empty.events == [.value([]), .completed])
    }

    @Test("collect(count:) sends full arrays as they fill and the rest on completion; collect(_:) by predicate")
    func collectCount() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let byCount = EventRecorder<[Int], TestError>()
        let exact = EventRecorder<[Int], TestError>()
        let bySum = EventRecorder<[Int], TestError>()
        signal.collect(count: 2).observe(byCount.observer)
        signal.take(first: 4).collect(count: 2).observe(exact.observer)
        signal.collect { $0.reduce(0, +) >= 5 }.observe(bySum.observer)
        send([1, 2, 3, 4, 5], then: .completed, into: input)
        #expect(byCount.events == [.value([1, 2]), .value([3, 4]), .value([5]), .completed])
        #expect(exact.events == [.value([1, 2]), .value([3, 4]), .completed], "no trailing empty array")
        #expect(bySum.events == [.value([1, 2, 3]), .value([4, 5]), .completed])
    }

    @Test("collect forwards failure and interruption and drops what it gathered")
    func collectTerminals() {
        for terminal in failureAndInterruption {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<[Int], TestError>()
            signal.collect().observe(recorder.observer)
            send([1, 2], then: terminal, into: input)
            #expect(recorder.events == [terminal.map { [$0] }])
        }
        let source = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<[Int], TestError>()
        let run = source.producer.collect(count: 3).start(disposed.observer)
        source.input().send(value: 1)
        run.dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.interrupted])
    }

    // MARK: combinePrevious

    @Test("combinePrevious pairs each value with the previous one, from the initial value or the second value")
    func combinePrevious() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let withInitial = EventRecorder<[Int], TestError>()
        let withoutInitial = EventRecorder<[Int], TestError>()
        signal.combinePrevious(0).map { [$0.previous, $0.current] }.observe(withInitial.observer)
        signal.combinePrevious().map { [$0.previous, $0.current] }.observe(withoutInitial.observer)
        send([1, 2, 3], then: .failed(.boom), into: input)
        #expect(withInitial.events == [.value([0, 1]), .value([1, 2]), .value([2, 3]), .failed(.boom)])
        #expect(withoutInitial.events == [.value([1, 2]), .value([2, 3]), .failed(.boom)])

        let producer = SignalProducer<Int, TestError>(values: 5, 6).combinePrevious(4).map {
            [$0.previous, $0.current]
        }
        for _ in 0..<2 {
            let recorder = EventRecorder<[Int], TestError>()
            producer.start(recorder.observer)
            #expect(
                recorder.events == [.value([4, 5]), .value([5, 6]), .completed],
                "each run starts from the initial value")
        }
        let source = OperatorTestControlledProducer<Int>()
        let run = source.producer.combinePrevious().start()
        run.dispose()
        #expect(source.hasEnded())
    }

    // MARK: prefix

    @Test("prefix runs the prefix first, then this producer; a failing prefix does not start it")
    func prefix() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 3, 4).prefix(value: 2).prefix(SignalProducer(value: 1)).start(
            recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .value(4), .completed])

        let source = OperatorTestControlledProducer<Int>()
        let failed = EventRecorder<Int, TestError>()
        source.producer.prefix(SignalProducer(error: .boom)).start(failed.observer)
        #expect(failed.events == [.failed(.boom)])
        #expect(source.startCount == 0)

        let disposed = EventRecorder<Int, TestError>()
        let run = source.producer.prefix(value: 0).start(disposed.observer)
        run.dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.value(0), .interrupted])
    }

    // MARK: Disposal mid-stream

    @Test("Disposing a collect(), combinePrevious or skipNil run mid-stream interrupts it and ends the underlying run")
    func disposalMidStream() {
        #expect(
            eventsDisposingMidStream(after: [1, 2]) { $0.collect() } == [.interrupted], "what was gathered is dropped")
        let pairs = eventsDisposingMidStream(after: [1, 2]) { $0.combinePrevious(0).map { [$0.previous, $0.current] } }
        #expect(pairs == [.value([0, 1]), .value([1, 2]), .interrupted])
        let laterPairs = eventsDisposingMidStream(after: [1, 2, 3]) {
            $0.combinePrevious().map { [$0.previous, $0.current] }
        }
        #expect(laterPairs == [.value([1, 2]), .value([2, 3]), .interrupted])
        let nonNil = eventsDisposingMidStream(after: [1, 2, 3]) { $0.map { $0 == 2 ? nil : $0 }.skipNil() }
        #expect(nonNil == [.value(1), .value(3), .interrupted])
    }

    @Test("Disposing a prefix run while the prefix runs interrupts it, and the producer is never started")
    func prefixDisposalMidStream() {
        let main = OperatorTestControlledProducer<Int>()
        let duringPrefix = eventsDisposingMidStream(after: [1, 2]) { main.producer.prefix($0) }
        #expect(duringPrefix == [.value(1), .value(2), .interrupted])
        #expect(main.startCount == 0)
        let afterPrefix = eventsDisposingMidStream(after: [1, 2]) { $0.prefix(value: 0) }
        #expect(afterPrefix == [.value(0), .value(1), .value(2), .interrupted])
    }

    // MARK: Reentrancy and threads

    @Test("An observer of each slicing operator's result that sends into the source is queued, never recursive")
    func resultObserverReentrancy() {
        typealias Script = [Event<Int, TestError>]
        let values: (Int...) -> Script = { $0.map { .value($0) } }
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 4) + [.completed]) { $0.skip(first: 2) } == [
                .value(3), .value(4), .completed,
            ])
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 1, 4) + [.completed]) { $0.skip(while: { $0 < 3 }) }
                == [.value(3), .value(1), .value(4), .completed]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 4) + [.completed]) { $0.take(while: { $0 < 3 }) }
                == [.value(1), .value(2), .completed]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 4) + [.completed, .value(5)]) { $0.take(last: 2) }
                == [.value(3), .value(4), .completed]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2) + [.completed, .value(3)]) { $0.collect() } == [
                .value([1, 2]), .completed,
            ])
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 4, 5) + [.completed]) { $0.collect(count: 2) }
                == [.value([1, 2]), .value([3, 4]), .value([5]), .completed]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2, 3, 4, 5) + [.completed]) { $0.collect { $0.reduce(0, +) >= 5 } }
                == [.value([1, 2, 3]), .value([4, 5]), .completed]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2, 3) + [.failed(.boom)]) {
                $0.combinePrevious(0).map { [$0.previous, $0.current] }
            }
                == [.value([0, 1]), .value([1, 2]), .value([2, 3]), .failed(.boom)]
        )
        #expect(
            eventsWithReentrantSends(values(1, 2, 3) + [.interrupted]) {
                $0.combinePrevious().map { [$0.previous, $0.current] }
            }
                == [.value([1, 2]), .value([2, 3]), .interrupted]
        )
        let optionals: [Event<Int?, TestError>] = [.value(1), .value(nil), .value(3), .completed]
        #expect(eventsWithReentrantSends(optionals) { $0.skipNil() } == [.value(1), .value(3), .completed])
        #expect(
            eventsWithReentrantSends(values(1, 2, 1, 3) + [.completed]) { $0.uniqueValues() }
                == [.value(1), .value(2), .value(3), .completed]
        )
        #expect(
            eventsOfRunWithReentrantSends(values(1, 2) + [.completed]) { SignalProducer(values: 100, 101).prefix($0) }
                == [.value(1), .value(2), .value(100), .value(101), .completed]
        )
    }

    @Test("Observers that send into the source during delivery are queued, in order, for every slicing operator")
    func reentrancy() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let probe = InFlightProbe()
        signal.observeValues { value in
            probe.run { if value < 6 { input.send(value: value + 1) } else if value == 6 { input.sendCompleted() } }
        }
        let skipped = EventRecorder<Int, TestError>()
        let takenWhile = EventRecorder<Int, TestError>()
        let last = EventRecorder<Int, TestError>()
        let collected = EventRecorder<[Int], TestError>()
        let pairs = EventRecorder<[Int], TestError>()
        signal.skip(first: 2).observe(skipped.observer)
        signal.take(while: { $0 < 4 }).observe(takenWhile.observer)
        signal.take(last: 2).observe(last.observer)
        signal.collect(count: 4).observe(collected.observer)
        signal.combinePrevious().map { [$0.previous, $0.current] }.observe(pairs.observer)
        input.send(value: 1)
        #expect(probe.maximum == 1)
        #expect(skipped.events == [.value(3), .value(4), .value(5), .value(6), .completed])
        #expect(takenWhile.events == [.value(1), .value(2), .value(3), .completed])
        #expect(last.events == [.value(5), .value(6), .completed])
        #expect(collected.events == [.value([1, 2, 3, 4]), .value([5, 6]), .completed])
        #expect(pairs.values == [[1, 2], [2, 3], [3, 4], [4, 5], [5, 6]])
    }

    @Test(
        "Four threads sending into one source: each slicing operator, take(while:) and skip(while:) included, sees every value once, in delivery order"
    )
    func threads() {
        let perThread = 10_000
        let total = 4 * perThread
        let (signal, input) = Signal<Int, TestError>.pipe()
        let delivered = EventRecorder<Int, TestError>()
        let skipped = EventRecorder<Int, TestError>()
        let last = EventRecorder<Int, TestError>()
        let collected = EventRecorder<[Int], TestError>()
        let pairs = EventRecorder<[Int], TestError>()
        let unique = EventRecorder<Int, TestError>()
        let takenWhile = EventRecorder<Int, TestError>()
        let skippedWhile = EventRecorder<Int, TestError>()
        signal.observe(delivered.observer)
        signal.skip(first: 10).observe(skipped.observer)
        signal.take(last: 3).observe(last.observer)
        signal.collect(count: 7).observe(collected.observer)
        signal.combinePrevious().map { [$0.previous, $0.current] }.observe(pairs.observer)
        signal.map { $0 % 100 }.uniqueValues().observe(unique.observer)
        // 17,777 is the 7,778th value of the second thread: where it lands among the others' values
        // decides what these two see.
        signal.take(while: { $0 != 17_777 }).observe(takenWhile.observer)
        signal.skip(while: { $0 != 17_777 }).observe(skippedWhile.observer)
        Watchdog.runOnThreads(4) { thread in
            for value in 0..<perThread { input.send(value: thread * perThread + value) }
        }
        input.sendCompleted()
        let order = delivered.values
        #expect(order.sorted() == Array(0..<total))
        #expect(skipped.values == Array(order.dropFirst(10)))
        #expect(last.values == Array(order.suffix(3)))
        #expect(collected.values.flatMap { $0 } == order)
        #expect(pairs.values == zip(order, order.dropFirst()).map { [$0, $1] })
        #expect(unique.values.sorted() == Array(0..<100))
        #expect(takenWhile.events == order.prefix { $0 != 17_777 }.map { .value($0) } + [.completed])
        #expect(skippedWhile.events == order.drop { $0 != 17_777 }.map { .value($0) } + [.completed])
        for recorder in [skipped, last, unique] {
            #expect(recorder.events.last == .completed && recorder.terminalCount == 1)
        }
    }
}
