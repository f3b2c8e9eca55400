import Automaton
import Dispatch
import Foundation
import Signals
import Testing

// `observeProcessing(_:)`: one record per processed input, in processing order, saying which effect
// sent the input and which effect the transition made; told before that effect starts; nothing after
// the end; let go of on disposal and at the termination.

private enum Chore: Hashable, Sendable {
    case start, tick, stop, bad
}

/// `.start` starts an effect that sends two ticks and completes, on the thread that starts it.
private func jobAutomaton(state: Int = 0, strategy: AutomatonStrategy = .merge) -> Automaton<Int, Chore> {
    let ticks = SignalProducer<Chore, Never>(values: [.tick, .tick])
    return Automaton(
        state: state,
        mapping: { state, job in
            switch job {
            case .start: (state + 1, ticks)
            case .tick: (state + 1, .empty)
            case .stop: (state, .empty)
            case .bad: nil
            }
        },
        strategy: strategy)
}

/// A record as one comparable line.
private func line(_ record: InputProcessing<Int, Chore>) -> String {
    let sender = record.sentByEffect.map { " from effect \($0)" } ?? ""
    let made = record.effect.map { ", made effect \($0)" } ?? ""
    return "\(record.reply)\(sender)\(made)"
}

/// Holds an object that the test watches with a weak reference.
private final class Token: Sendable {}

@Suite("Processing observers: records in processing order, the sender and the effect made")
struct InputProcessingTests {
    @Test("each input's record names the effect that sent it and the effect it made, in processing order")
    func recordsInOrder() {
        let automaton = jobAutomaton()
        let records = Recording<String>()
        let replies = Recording<String>()
        automaton.replies.observeValues { replies.append("\($0)") }
        automaton.observeProcessing { records.append(line($0)) }
        automaton.send(.start)
        automaton.send(.bad)
        automaton.send(.stop)
        #expect(
            records.values == [
                "\(Reply<Int, Chore>.success(.start, 0, 1)), made effect 0",
                "\(Reply<Int, Chore>.success(.tick, 1, 2)) from effect 0",
                "\(Reply<Int, Chore>.success(.tick, 2, 3)) from effect 0",
                "\(Reply<Int, Chore>.failure(.bad, 3))",
                "\(Reply<Int, Chore>.success(.stop, 3, 3))",
            ])
        // The same replies, in the same order, as `replies` sent.
        #expect(
            records.values.map { $0.components(separatedBy: " from").first!.components(separatedBy: ",").first! }
                == replies.values.map { $0.components(separatedBy: ",").first! })
    }

    @Test("the record of the input that made an effect comes before the effect's start, its inputs and its end")
    func recordBeforeEffect() {
        let automaton = jobAutomaton()
        let log = Recording<String>()
        automaton.effectEvents.observeValues { log.append("\($0)") }
        automaton.replies.observeValues { log.append("reply \($0)") }
        automaton.observeProcessing { log.append("record " + line($0)) }
        automaton.send(.start)
        let values = log.values
        #expect(values.first == "reply \(Reply<Int, Chore>.success(.start, 0, 1))")
        #expect(values.dropFirst().first == "record \(Reply<Int, Chore>.success(.start, 0, 1)), made effect 0")
        let recordIndex = values.firstIndex { $0.hasPrefix("record") }!
        for event in ["effect 0 started by start", "effect 0 ended"] {
            let index = values.firstIndex(of: event)
            #expect(index != nil && index! > recordIndex, "\(values)")
        }
        // Each input's reply, then its record: five lines for the three inputs, in that order.
        #expect(
            values.filter { !$0.hasPrefix("effect") } == [
                "reply \(Reply<Int, Chore>.success(.start, 0, 1))",
                "record \(Reply<Int, Chore>.success(.start, 0, 1)), made effect 0",
                "reply \(Reply<Int, Chore>.success(.tick, 1, 2))",
                "record \(Reply<Int, Chore>.success(.tick, 1, 2)) from effect 0",
                "reply \(Reply<Int, Chore>.success(.tick, 2, 3))",
                "record \(Reply<Int, Chore>.success(.tick, 2, 3)) from effect 0",
            ])
    }

    @Test("a keyed effect dropped by its key's policy, and one waiting for its key, are named as made")
    func keyedEffectsNamed() {
        let forever = SignalProducer<Chore, Never>.never
        let automaton = Automaton<Int, Chore>(
            state: 0,
            mapping: { state, job in
                switch job {
                case .start: (state + 1, forever.keyed("k", .first))
                case .tick: (state + 1, forever.keyed("q", .queue))
                default: nil
                }
            })
        let records = Recording<String>()
        automaton.observeProcessing { records.append(line($0)) }
        let events = Recording<String>()
        automaton.effectEvents.observeValues { events.append("\($0)") }
        automaton.send(.start)
        automaton.send(.start)
        automaton.send(.tick)
        automaton.send(.tick)
        #expect(
            records.values == [
                "\(Reply<Int, Chore>.success(.start, 0, 1)), made effect 0",
                "\(Reply<Int, Chore>.success(.start, 1, 2)), made effect 1",
                "\(Reply<Int, Chore>.success(.tick, 2, 3)), made effect 2",
                "\(Reply<Int, Chore>.success(.tick, 3, 4)), made effect 3",
            ])
        #expect(
            events.values == [
                "effect 0 [k] started by start", "effect 1 [k] dropped by start", "effect 2 [q] started by tick",
            ])
    }

    @Test("disposing stops the records, and lets go of the observer")
    func disposal() {
        let automaton = jobAutomaton()
        let records = Recording<String>()
        weak var watched: Token?
        let disposable: Disposable
        do {
            let token = Token()
            watched = token
            disposable = automaton.observeProcessing { record in
                withExtendedLifetime(token) { records.append(line(record)) }
            }
        }
        automaton.send(.stop)
        #expect(watched != nil)
        disposable.dispose()
        #expect(watched == nil)
        automaton.send(.stop)
        disposable.dispose()
        #expect(records.values == ["\(Reply<Int, Chore>.success(.stop, 0, 0))"])
    }

    @Test("the automaton's release lets go of the observer; attaching after it does nothing")
    func releaseLetsGo() {
        weak var watched: Token?
        var automaton: Automaton<Int, Chore>? = jobAutomaton()
        let records = Recording<String>()
        let disposable: Disposable
        do {
            let token = Token()
            watched = token
            disposable = automaton!.observeProcessing { record in
                withExtendedLifetime(token) { records.append(line(record)) }
            }
        }
        automaton!.send(.stop)
        let (input, sink) = Signal<Chore, Never>.pipe()
        let interrupted = Automaton<Int, Chore>(state: 0, input: input, mapping: { state, _ in state })
        sink.sendInterrupted()
        let late = interrupted.observeProcessing { records.append(line($0)) }
        #expect(late.isDisposed)
        automaton = nil
        #expect(watched == nil)
        disposable.dispose()  // after the release: nothing to do
        #expect(records.values == ["\(Reply<Int, Chore>.success(.stop, 0, 0))"])
    }

    @Test(
        "when replies complete (input completed, effects ended) the observer is let go of; attaching after does nothing"
    )
    func completionLetsGo() {
        weak var watched: Token?
        let (input, sink) = Signal<Chore, Never>.pipe()
        let automaton = Automaton<Int, Chore>(state: 0, input: input, mapping: { state, _ in state + 1 })
        let records = Recording<String>()
        do {
            let token = Token()
            watched = token
            automaton.observeProcessing { record in withExtendedLifetime(token) { records.append(line(record)) } }
        }
        sink.send(value: .stop)
        #expect(watched != nil)
        sink.sendCompleted()
        #expect(watched == nil, "kept after replies completed")
        let late = automaton.observeProcessing { records.append(line($0)) }
        #expect(late.isDisposed)
        #expect(records.values == ["\(Reply<Int, Chore>.success(.stop, 0, 1))"])
    }

    @Test("the duration is measured, and two observers see the same records")
    func durationAndTwoObservers() {
        let automaton = jobAutomaton()
        let first = Recording<InputProcessing<Int, Chore>>()
        let second = Recording<String>()
        automaton.observeProcessing { first.append($0) }
        automaton.observeProcessing { second.append(line($0)) }
        automaton.send(.start)
        #expect(first.values.map(line) == second.values)
        #expect(first.count == 3)
        #expect(first.values.allSatisfy { $0.duration >= .zero && $0.duration < .seconds(60) })
    }

    @Test("4 threads × 2,500 inputs: the records come in the replies' order, one per reply")
    func threads() async {
        let automaton = jobAutomaton()
        let replies = Recording<Reply<Int, Chore>>()
        let records = Recording<Reply<Int, Chore>>()
        automaton.replies.observeValues { replies.append($0) }
        automaton.observeProcessing { records.append($0.reply) }
        await runOnThreads(4) { _ in
            for index in 0..<2_500 {
                automaton.send(index % 100 == 0 ? .start : .stop)
            }
        }
        #expect(replies.count == 10_000 + 2 * 100)
        #expect(records.values == replies.values)
    }

    @Test("observers attached and disposed while 2 threads send: each sees a gap-free run of the replies")
    func attachWhileSending() async {
        let automaton = jobAutomaton()
        let replies = Recording<Reply<Int, Chore>>()
        automaton.replies.observeValues { replies.append($0) }
        let runs = Recording<[Reply<Int, Chore>]>()
        await runOnThreads(3) { index in
            if index == 2 {
                for _ in 0..<200 {
                    let seen = Recording<Reply<Int, Chore>>()
                    let disposable = automaton.observeProcessing { seen.append($0.reply) }
                    disposable.dispose()
                    runs.append(seen.values)
                }
            } else {
                for _ in 0..<5_000 { automaton.send(.stop) }
            }
        }
        let all = replies.values
        for run in runs.values where !run.isEmpty {
            // States only grow by `.start`, so compare by position: find the run's first reply's index.
            let matches = (0...(all.count - run.count)).contains { Array(all[$0..<($0 + run.count)]) == run }
            #expect(matches)
        }
    }
}
