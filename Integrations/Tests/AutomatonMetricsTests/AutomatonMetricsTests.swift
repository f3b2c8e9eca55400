import Automaton
import AutomatonMetrics
import CoreMetrics
import Dispatch
import MetricsTestKit
import Testing

enum Phase: Sendable, Equatable {
    case idle, connecting, closing, closed
}

enum Command: Sendable, Equatable {
    case connect, send, disconnect, closed
}

/// A connection: `connect` starts an effect that runs until cancelled; `disconnect` replaces it
/// (`.latest`) with one that sends `closed` at once and ends.
func makeConnection(input: Signal<Command, Never>? = nil) -> Automaton<Phase, Command> {
    Automaton(
        state: .idle, input: input, strategy: .latest,
        table: [
            .connect | .idle => .connecting | .never,
            .disconnect | .connecting => .closing | SignalProducer(value: .closed),
            .closed | .closing => .closed,
        ])
}

/// Keeps nothing but tells, through a weak reference, when whatever held it let go of it.
final class Token: Sendable {}

/// What stops the recording: the automaton's termination (released, its input interrupted, its
/// input completed with no effect running), or the disposal.
enum Stop: String, CaseIterable, Sendable {
    case released, interrupted, completed, disposed
}

/// A metrics factory, for a weak reference to tell when recording let go of it: it makes its
/// metrics with a `TestMetrics` the test keeps.
final class ForwardingFactory: MetricsFactory {
    let base: TestMetrics

    init(_ base: TestMetrics) {
        self.base = base
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> CounterHandler {
        base.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> MeterHandler {
        base.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> TimerHandler {
        base.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: CounterHandler) {
        base.destroyCounter(handler)
    }

    func destroyFloatingPointCounter(_ handler: FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }

    func destroyMeter(_ handler: MeterHandler) {
        base.destroyMeter(handler)
    }

    func destroyRecorder(_ handler: RecorderHandler) {
        base.destroyRecorder(handler)
    }

    func destroyTimer(_ handler: TimerHandler) {
        base.destroyTimer(handler)
    }
}

@Suite("Automaton.recordMetrics(label:dimensions:inputCase:recordProcessingTime:factory:)")
struct AutomatonMetricsTests {
    @Test("a script's metrics: replies by outcome, effect events, the running-effects meter; no timer")
    func scriptMetrics() throws {
        let metrics = TestMetrics()
        let automaton = makeConnection()
        automaton.recordMetrics(label: "conn", dimensions: [("pool", "a")], factory: metrics)

        automaton.send(.connect)  // effect 0 starts
        automaton.send(.send)  // refused
        automaton.send(.disconnect)  // effect 0 cancelled; effect 1 starts, sends closed, ends

        #expect(try metrics.expectCounter("conn.replies", [("pool", "a"), ("outcome", "success")]).totalValue == 3)
        #expect(try metrics.expectCounter("conn.replies", [("pool", "a"), ("outcome", "failure")]).totalValue == 1)
        #expect(try metrics.expectCounter("conn.effects", [("pool", "a"), ("event", "started")]).totalValue == 2)
        #expect(try metrics.expectCounter("conn.effects", [("pool", "a"), ("event", "ended")]).totalValue == 1)
        #expect(try metrics.expectCounter("conn.effects", [("pool", "a"), ("event", "cancelled")]).totalValue == 1)
        #expect(try metrics.expectMeter("conn.effects.running", [("pool", "a")]).values == [1, 0, 1, 0])
        #expect(metrics.timers.isEmpty)
        #expect(metrics.counters.allSatisfy { counter in !counter.dimensions.contains { $0.0 == "input" } })
    }

    @Test("recordProcessingTime: one timer value per input, in nanoseconds")
    func processingTimer() throws {
        let metrics = TestMetrics()
        let automaton = makeConnection()
        automaton.recordMetrics(label: "conn", recordProcessingTime: true, factory: metrics)

        automaton.send(.connect)
        automaton.send(.send)
        automaton.send(.disconnect)

        let timer = try metrics.expectTimer("conn.processing.duration")
        #expect(timer.values.count == 4)
        #expect(timer.values.allSatisfy { $0 >= 0 && $0 < 10_000_000_000 })
        #expect(try metrics.expectCounter("conn.replies", [("outcome", "success")]).totalValue == 3)
        #expect(try metrics.expectCounter("conn.replies", [("outcome", "failure")]).totalValue == 1)
    }

    @Test("the input dimension only through inputCase")
    func inputCaseDimension() throws {
        let metrics = TestMetrics()
        let automaton = makeConnection()
        automaton.recordMetrics(label: "conn", inputCase: { "\($0)" }, factory: metrics)

        automaton.send(.connect)
        automaton.send(.send)
        automaton.send(.send)
        automaton.send(.disconnect)

        let replies = metrics.counters(label: "conn.replies")
        let series = Dictionary(
            uniqueKeysWithValues: replies.map { counter in
                (counter.dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ","), counter.totalValue)
            })
        #expect(
            series == [
                "outcome=success,input=connect": 1,
                "outcome=failure,input=send": 2,
                "outcome=success,input=disconnect": 1,
                "outcome=success,input=closed": 1,
            ])
    }

    @Test("disposal stops the recording and takes the effects still running off the meter")
    func disposalStops() throws {
        let metrics = TestMetrics()
        let automaton = makeConnection()
        let recording = automaton.recordMetrics(label: "conn", factory: metrics)

        automaton.send(.connect)
        let running = try metrics.expectMeter("conn.effects.running")
        #expect(running.lastValue == 1)
        recording.dispose()
        #expect(running.lastValue == 0)
        automaton.send(.send)
        automaton.send(.disconnect)

        #expect(try metrics.expectCounter("conn.replies", [("outcome", "success")]).totalValue == 1)
        #expect(try metrics.expectCounter("conn.replies", [("outcome", "failure")]).totalValue == 0)
        #expect(try metrics.expectCounter("conn.effects", [("event", "started")]).totalValue == 1)
        #expect(try metrics.expectCounter("conn.effects", [("event", "cancelled")]).totalValue == 0)
        #expect(running.values == [1, 0])
    }

    @Test("machines recorded under one label share the meter: it holds their sum")
    func sharedMeter() throws {
        let metrics = TestMetrics()
        let automata = (0..<3).map { _ in makeConnection() }
        for automaton in automata {
            automaton.recordMetrics(label: "conn", factory: metrics)
            automaton.send(.connect)
        }
        let running = try metrics.expectMeter("conn.effects.running")
        #expect(running.lastValue == 3)
        automata[1].send(.disconnect)
        #expect(running.lastValue == 2)
        #expect(try metrics.expectCounter("conn.replies", [("outcome", "success")]).totalValue == 5)
    }

    @Test("released while recorded: its effects' cancellations are counted, the meter is back to 0, all let go of")
    func releasedWhileRecorded() throws {
        let metrics = TestMetrics()
        weak var token: Token?
        do {
            let automaton = makeConnection()
            let strong = Token()
            token = strong
            automaton.recordMetrics(
                label: "conn", inputCase: { _ in withExtendedLifetime(strong) { "any" } },
                recordProcessingTime: true, factory: metrics)
            automaton.send(.connect)
        }
        #expect(token == nil)
        #expect(try metrics.expectMeter("conn.effects.running").values == [1, 0])
        #expect(try metrics.expectCounter("conn.effects", [("event", "cancelled")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("conn.replies", [("outcome", "success"), ("input", "any")]).totalValue == 1)
    }

    @Test(
        "when recording stops, the factory, the metrics and inputCase are let go of, though the disposable is held",
        arguments: Stop.allCases)
    func letsGoOfFactoryWhileDisposableHeld(stop: Stop) throws {
        let metrics = TestMetrics()
        let (input, sink) = Signal<Command, Never>.pipe()
        var automaton: Automaton<Phase, Command>? = makeConnection(input: input)
        weak var factory: ForwardingFactory?
        weak var token: Token?
        let recording: Disposable
        do {
            let strongFactory = ForwardingFactory(metrics)
            let strongToken = Token()
            factory = strongFactory
            token = strongToken
            recording = automaton!.recordMetrics(
                label: "conn", inputCase: { _ in withExtendedLifetime(strongToken) { "any" } },
                recordProcessingTime: true, factory: strongFactory)
        }
        sink.send(value: .connect)  // effect 0 starts, and runs until cancelled
        #expect(factory != nil)
        #expect(token != nil)
        switch stop {
        case .released: automaton = nil
        case .interrupted: sink.sendInterrupted()
        case .completed:
            sink.send(value: .disconnect)  // effect 0 replaced; effect 1 sends closed and ends
            sink.sendCompleted()
        case .disposed: recording.dispose()
        }
        #expect(factory == nil)
        #expect(token == nil)
        #expect(recording.isDisposed == (stop == .disposed))
        // Disposing after the stop does nothing.
        recording.dispose()
        automaton?.send(.connect)

        let replies = stop == .completed ? 3 : 1
        let effects: [Int64] =
            switch stop {
            case .released, .interrupted: [1, 0, 1]
            case .completed: [2, 1, 1]
            case .disposed: [1, 0, 0]
            }
        let running: [Double] = stop == .completed ? [1, 0, 1, 0] : [1, 0]
        #expect(try metrics.expectMeter("conn.effects.running").values == running)
        #expect(
            try ["started", "ended", "cancelled"].map {
                try metrics.expectCounter("conn.effects", [("event", $0)]).totalValue
            } == effects)
        #expect(
            metrics.counters(label: "conn.replies").map { counter in
                counter.dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + " \(counter.totalValue)"
            } == ["outcome=success,input=any \(replies)"])
        #expect(try metrics.expectTimer("conn.processing.duration").values.count == replies)
        // Recording an automaton that has terminated keeps nothing either.
        if stop == .interrupted || stop == .completed, let automaton {
            weak var late: ForwardingFactory?
            let lateRecording: Disposable
            do {
                let strongFactory = ForwardingFactory(TestMetrics())
                late = strongFactory
                lateRecording = automaton.recordMetrics(label: "late", factory: strongFactory)
            }
            #expect(late == nil)
            withExtendedLifetime(lateRecording) {}
        }
        withExtendedLifetime((automaton, sink)) {}
    }

    @Test("4 threads × 500 inputs each: counters exact, timer values exact")
    func concurrentSenders() throws {
        let metrics = TestMetrics()
        let automaton = Automaton<Int, Command>(state: 0) { count, command in
            command == .send ? count + 1 : nil
        }
        automaton.recordMetrics(
            label: "count", inputCase: { "\($0)" }, recordProcessingTime: true, factory: metrics)
        let plain = Automaton<Int, Command>(state: 0) { count, command in
            command == .send ? count + 1 : nil
        }
        plain.recordMetrics(label: "plain", factory: metrics)

        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for index in 0..<500 {
                let command: Command = index.isMultiple(of: 4) ? .disconnect : .send
                automaton.send(command)
                plain.send(command)
            }
        }

        #expect(
            try metrics.expectCounter("count.replies", [("outcome", "success"), ("input", "send")]).totalValue
                == 1500)
        #expect(
            try metrics.expectCounter("count.replies", [("outcome", "failure"), ("input", "disconnect")]).totalValue
                == 500)
        #expect(metrics.counters(label: "count.replies").count == 2)
        #expect(try metrics.expectTimer("count.processing.duration").values.count == 2000)
        #expect(try metrics.expectCounter("plain.replies", [("outcome", "success")]).totalValue == 1500)
        #expect(try metrics.expectCounter("plain.replies", [("outcome", "failure")]).totalValue == 500)
    }
}
