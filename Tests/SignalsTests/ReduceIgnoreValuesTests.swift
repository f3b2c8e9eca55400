import Dispatch
import Foundation
import Signals
import Testing

private struct Person: Sendable, Equatable {
    var name: String
    var age: Int
}

/// The terminal event `event`, on a stream of no values.
private func valueless(_ event: Event<Int, TestError>) -> Event<Never, TestError> {
    switch event {
    case .value: preconditionFailure("not a terminal event: \(event)")
    case let .failed(error): return .failed(error)
    case .completed: return .completed
    case .interrupted: return .interrupted
    }
}

@Suite("reduce, ignoreValues, promoteValue, map(value:) and map(keyPath)")
struct ReduceIgnoreValuesTests {
    // MARK: reduce

    @Test("reduce sends the accumulation once, on completion; with no value, the initial value")
    func reduceValues() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let sum = EventRecorder<Int, TestError>()
        let gathered = EventRecorder<[Int], TestError>()
        signal.reduce(10, +).observe(sum.observer)
        signal.reduce(into: []) { $0.append($1) }.observe(gathered.observer)
        for value in 1...4 { input.send(value: value) }
        #expect(sum.events == [], "nothing before completion")
        input.sendCompleted()
        #expect(sum.events == [.value(20), .completed])
        #expect(gathered.events == [.value([1, 2, 3, 4]), .completed])

        let empty = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>.empty.reduce(7, +).start(empty.observer)
        #expect(empty.events == [.value(7), .completed])
    }

    @Test("reduce forwards failure and interruption and sends nothing it accumulated")
    func reduceTerminals() {
        for terminal in [Event<Int, TestError>.failed(.boom), .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            let into = EventRecorder<[Int], TestError>()
            signal.reduce(0, +).observe(recorder.observer)
            signal.reduce(into: []) { $0.append($1) }.observe(into.observer)
            input.send(value: 1)
            input.send(terminal)
            #expect(recorder.events == [terminal])
            #expect(into.events == [terminal.map { [$0] }])
        }
    }

    @Test("Producer reduce: each run starts again from the initial value; disposal interrupts the underlying run")
    func producerReduce() {
        let producer = SignalProducer<Int, TestError>(values: 1, 2, 3).reduce(into: "") { $0 += "\($1)" }
        for _ in 0..<2 {
            let recorder = EventRecorder<String, TestError>()
            producer.start(recorder.observer)
            #expect(recorder.events == [.value("123"), .completed])
        }
        let source = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<Int, TestError>()
        let run = source.producer.reduce(0, +).start(disposed.observer)
        source.input().send(value: 5)
        run.dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.interrupted])
    }

    // MARK: ignoreValues, promoteValue

    @Test("ignoreValues forwards only the terminal event; promoteValue retypes it to merge with values")
    func ignoreValuesAndPromote() {
        for terminal in [Event<Int, TestError>.completed, .failed(.boom), .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let ignored = EventRecorder<Never, TestError>()
            let promoted = EventRecorder<String, TestError>()
            signal.ignoreValues().observe(ignored.observer)
            signal.ignoreValues().promoteValue(String.self).observe(promoted.observer)
            input.send(value: 1)
            input.send(value: 2)
            input.send(terminal)
            #expect(ignored.events == [valueless(terminal)])
            #expect(promoted.events == [terminal.map { "\($0)" }])
        }

        let log = TestLog<String>()
        let then = EventRecorder<String, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2)
            .on(value: { log.append("work \($0)") })
            .ignoreValues()
            .then(SignalProducer(value: "done"))
            .start(then.observer)
        #expect(log.entries == ["work 1", "work 2"])
        #expect(then.events == [.value("done"), .completed])

        let source = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<Int, TestError>()
        let run = source.producer.ignoreValues().promoteValue().start(disposed.observer)
        source.input().send(value: 3)
        run.dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.interrupted])
    }

    // MARK: map(value:), map(keyPath)

    @Test("map(value:) replaces each value; map(keyPath) reads a property of each; both forward terminal events")
    func mapForms() {
        for terminal in [Event<Person, TestError>.completed, .failed(.boom), .interrupted] {
            let (signal, input) = Signal<Person, TestError>.pipe()
            let constant = EventRecorder<String, TestError>()
            let names = EventRecorder<String, TestError>()
            let ages = EventRecorder<Int, TestError>()
            signal.map(value: "tick").observe(constant.observer)
            signal.map(\.name).observe(names.observer)
            let keyPath: KeyPath<Person, Int> & Sendable = \Person.age
            signal.map(keyPath).observe(ages.observer)
            input.send(value: Person(name: "Ada", age: 36))
            input.send(value: Person(name: "Alan", age: 41))
            input.send(terminal)
            #expect(constant.events == [.value("tick"), .value("tick"), terminal.map { _ in "" }])
            #expect(names.events == [.value("Ada"), .value("Alan"), terminal.map { _ in "" }])
            #expect(ages.events == [.value(36), .value(41), terminal.map { _ in 0 }])
        }

        let producer = SignalProducer<Person, TestError>(values: Person(name: "Grace", age: 85))
        let names = EventRecorder<String, TestError>()
        let constant = EventRecorder<Bool, TestError>()
        producer.map(\.name).start(names.observer)
        producer.map(value: true).start(constant.observer)
        #expect(names.events == [.value("Grace"), .completed])
        #expect(constant.events == [.value(true), .completed])

        let source = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<Int, TestError>()
        let run = source.producer.map(\.bitWidth).map(value: 1).start(disposed.observer)
        source.input().send(value: 9)
        run.dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.value(1), .interrupted])
    }

    // MARK: Reentrancy and threads

    @Test("Observers that send into the source during delivery are queued, in order, for each of these operators")
    func reentrancy() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let probe = InFlightProbe()
        let sum = EventRecorder<Int, TestError>()
        let ignored = EventRecorder<Never, TestError>()
        let constant = EventRecorder<String, TestError>()
        let widths = EventRecorder<Int, TestError>()
        signal.map(value: "v").observeValues { _ in
            probe.run {}
        }
        // The feedback comes from an observer of map(keyPath)'s result.
        signal.map(\.self).observeValues { value in
            probe.run { if value < 5 { input.send(value: value + 1) } else { input.sendCompleted() } }
        }
        signal.reduce(0, +).observe(sum.observer)
        signal.ignoreValues().observe(ignored.observer)
        signal.map(value: "v").observe(constant.observer)
        signal.map(\.bitWidth).observe(widths.observer)
        input.send(value: 1)
        #expect(probe.maximum == 1)
        #expect(sum.events == [.value(15), .completed])
        #expect(ignored.events == [.completed])
        #expect(constant.events == Array(repeating: .value("v"), count: 5) + [.completed])
        #expect(widths.values == Array(repeating: Int.bitWidth, count: 5))
    }

    @Test("Four threads sending into one source: reduce totals every value once; the others see delivery order")
    func threads() {
        for iteration in 0..<20 {
            let perThread = 2_000
            let total = 4 * perThread
            let (signal, input) = Signal<Int, TestError>.pipe()
            let delivered = EventRecorder<Int, TestError>()
            let sum = EventRecorder<Int, TestError>()
            let gathered = EventRecorder<[Int], TestError>()
            let ignored = EventRecorder<Never, TestError>()
            let negated = EventRecorder<Int, TestError>()
            signal.observe(delivered.observer)
            signal.reduce(0, +).observe(sum.observer)
            signal.reduce(into: []) { $0.append($1) }.observe(gathered.observer)
            signal.ignoreValues().observe(ignored.observer)
            signal.map(\.magnitude).map { -Int($0) }.observe(negated.observer)
            Watchdog.runOnThreads(4) { thread in
                for value in 0..<perThread { input.send(value: thread * perThread + value) }
            }
            input.sendCompleted()
            let order = delivered.values
            #expect(order.count == total, "iteration \(iteration)")
            #expect(sum.events == [.value((0..<total).reduce(0, +)), .completed])
            #expect(gathered.events == [.value(order), .completed])
            #expect(ignored.events == [.completed])
            #expect(negated.values == order.map { -$0 })
        }
    }
}
