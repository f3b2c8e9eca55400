import Automaton
import Dispatch
import Foundation
import Signals
import Testing

// The synchronous feedback path: the first value an effect's start handler sends at once, on the
// thread that started it, is held by the processing thread instead of queued under the lock, and
// processed as soon as the handler returns (see `AutomatonEngine.held`). Nothing about it may be
// visible: each test states the order the queue gives, and attacks the cases where the held value
// must give way to the queue (an input sent meanwhile, a termination, an end on another thread).

/// Every event of `replies` and `effectEvents`, and what `note` adds, as lines, in the order heard.
private final class Log<State: Sendable, Input: Sendable>: Sendable {
    let lines = Recording<String>()

    init(_ automaton: Automaton<State, Input>) {
        automaton.replies.observe { [lines] event in
            switch event {
            case let .value(reply): lines.append("reply \(reply)")
            case .completed: lines.append("replies completed")
            case .interrupted: lines.append("replies interrupted")
            }
        }
        automaton.effectEvents.observeValues { [lines] event in lines.append(event.description) }
    }

    func note(_ line: String) { lines.append(line) }
}

/// Yields until `condition` holds, for at most 10 seconds; returns whether it held.
private func spin(until condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + .seconds(10)
    while !condition() {
        if DispatchTime.now() > deadline { return false }
        sched_yield()
    }
    return true
}

@Suite("Synchronous feedback: a value an effect sends at once is processed as if queued")
struct HeldInputTests {
    enum Step: Hashable, Sendable, CustomStringConvertible {
        case start, value(Int), outside(Int), stop
        var description: String {
            switch self {
            case .start: return "start"
            case let .value(n): return "value \(n)"
            case let .outside(n): return "outside \(n)"
            case .stop: return "stop"
            }
        }
    }

    @Test("a chain: each effect's value is processed after its end and its cleanup, in FIFO order")
    func chainOrder() {
        let log = Locked<Log<Int, Int>?>(nil)
        let automaton = Automaton<Int, Int>(
            state: 0,
            mapping: { state, input in
                guard input <= 3 else { return nil }
                return (
                    input,
                    SignalProducer { observer, lifetime in
                        lifetime.observeEnded { log.withCriticalRegion { $0?.note("cleanup of \(input)") } }
                        observer.send(value: input + 1)
                        observer.sendCompleted()
                        log.withCriticalRegion { $0?.note("handler of \(input) returned") }
                    }
                )
            })
        let recorder = Log(automaton)
        log.withCriticalRegion { $0 = recorder }

        automaton.send(1)

        #expect(
            recorder.lines.values == [
                "reply success(1, 0 => 1)", "effect 0 started by 1", "effect 0 ended", "cleanup of 1",
                "handler of 1 returned",
                "reply success(2, 1 => 2)", "effect 1 started by 2", "effect 1 ended", "cleanup of 2",
                "handler of 2 returned",
                "reply success(3, 2 => 3)", "effect 2 started by 3", "effect 2 ended", "cleanup of 3",
                "handler of 3 returned",
                "reply failure(4, 3)",
            ])
        #expect(automaton.state.value == 3)
        #expect(automaton.runningEffectCount == 0)
    }

    /// An automaton whose `.start` effect runs `handler`; `.value(n)` and `.outside(n)` succeed
    /// without effects, counting up.
    private func machine(
        strategy: AutomatonStrategy = .merge,
        _ handler: @escaping @Sendable (Observer<Step, Never>, Lifetime, Automaton<Int, Step>?) -> Void
    ) -> (Automaton<Int, Step>, Log<Int, Step>) {
        let this = Locked<WeakReference?>(nil)
        let automaton = Automaton<Int, Step>(
            state: 0,
            mapping: { state, input in
                switch input {
                case .start:
                    return (
                        state + 1,
                        SignalProducer { observer, lifetime in
                            handler(observer, lifetime, this.withCriticalRegion { $0?.automaton })
                        }
                    )
                case .value, .outside: return (state + 1, .empty)
                case .stop: return nil
                }
            },
            strategy: strategy)
        this.withCriticalRegion { $0 = WeakReference(automaton) }
        return (automaton, Log(automaton))
    }

    private final class WeakReference: @unchecked Sendable {
        // Safe: set once, before any input, read after.
        weak var automaton: Automaton<Int, Step>?
        init(_ automaton: Automaton<Int, Step>) { self.automaton = automaton }
    }

    /// A start handler, what the test sends after `.start`, and every line the log must then hold.
    struct OrderCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let handler: @Sendable (Observer<Step, Never>, Automaton<Int, Step>?) -> Void
        let sentAfter: [Step]
        let lines: [String]
    }

    static let orderCases: [OrderCase] = [
        OrderCase(
            testDescription: "an outside input sent after the value comes after it",
            handler: { observer, automaton in
                observer.send(value: .value(1))
                automaton?.send(.outside(1))
                observer.send(value: .value(2))
                observer.sendCompleted()
            },
            sentAfter: [],
            lines: [
                "reply success(start, 0 => 1)", "effect 0 started by start", "effect 0 ended",
                "reply success(value 1, 1 => 2)", "reply success(outside 1, 2 => 3)",
                "reply success(value 2, 3 => 4)",
            ]),
        OrderCase(
            testDescription: "an outside input sent before the value comes before it",
            handler: { observer, automaton in
                automaton?.send(.outside(1))
                observer.send(value: .value(1))
                observer.send(value: .value(2))
                observer.sendCompleted()
            },
            sentAfter: [],
            lines: [
                "reply success(start, 0 => 1)", "effect 0 started by start", "effect 0 ended",
                "reply success(outside 1, 1 => 2)", "reply success(value 1, 2 => 3)",
                "reply success(value 2, 3 => 4)",
            ]),
        OrderCase(
            testDescription: "a value sent after the end is dropped; the one before it is processed",
            handler: { observer, _ in
                observer.send(value: .value(1))
                observer.sendCompleted()
                observer.send(value: .value(2))
            },
            sentAfter: [.outside(1)],
            lines: [
                "reply success(start, 0 => 1)", "effect 0 started by start", "effect 0 ended",
                "reply success(value 1, 1 => 2)", "reply success(outside 1, 2 => 3)",
            ]),
        OrderCase(
            // Nothing is held when the value comes: only the effect's end can drop it.
            testDescription: "a value sent after the end, with none held before, is dropped",
            handler: { observer, _ in
                observer.sendCompleted()
                observer.send(value: .value(1))
            },
            sentAfter: [.outside(1)],
            lines: [
                "reply success(start, 0 => 1)", "effect 0 started by start", "effect 0 ended",
                "reply success(outside 1, 1 => 2)",
            ]),
        OrderCase(
            // The handler's thread does not see this end (it skips the lifetime's lock for ends on
            // its own thread only): its late value is dropped by the engine, and its observer's
            // release, as the handler returns, ends nothing a second time.
            testDescription: "an effect ended on another thread during its handler ends once; a later value is dropped",
            handler: { observer, _ in
                let ended = DispatchSemaphore(value: 0)
                Thread {
                    observer.sendCompleted()
                    ended.signal()
                }.start()
                ended.wait()
                observer.send(value: .value(1))
                observer.sendCompleted()
            },
            sentAfter: [.outside(1)],
            lines: [
                "reply success(start, 0 => 1)", "effect 0 started by start", "effect 0 ended",
                "reply success(outside 1, 1 => 2)",
            ]),
    ]

    @Test(
        "a start handler's values, the inputs it sends and its end come out in the queue's order",
        arguments: orderCases)
    func queueOrder(_ order: OrderCase) {
        let (automaton, log) = machine { observer, _, automaton in order.handler(observer, automaton) }

        automaton.send(.start)
        for input in order.sentAfter { automaton.send(input) }

        #expect(log.lines.values == order.lines)
        #expect(automaton.runningEffectCount == 0)
    }

    @Test("a value held while the input signal is interrupted from the start handler is dropped")
    func heldValueDroppedByInterruption() {
        let (input, inputObserver) = Signal<Step, Never>.pipe()
        let lines = Recording<String>()
        let automaton = Automaton<Int, Step>(
            state: 0, input: input,
            mapping: { state, step in
                switch step {
                case .start:
                    return (
                        state + 1,
                        SignalProducer { observer, _ in
                            // `.stop` fails: had it been processed, its failure would be replied.
                            observer.send(value: .stop)
                            inputObserver.sendInterrupted()
                            observer.send(value: .value(2))
                        }
                    )
                case .value, .outside: return (state + 1, .empty)
                case .stop: return nil
                }
            })
        automaton.replies.observe { event in lines.append("\(event)") }

        // Through `send`, so that the input signal is not delivering, and delivers the interruption at
        // once, from inside the start handler.
        automaton.send(.start)

        #expect(lines.values == ["value(success(start, 0 => 1))", "interrupted"])
        #expect(automaton.state.value == 1)
        #expect(automaton.runningEffectCount == 0)
    }

    @Test(
        "under .latest, a value held while another thread ends its effect keeps its place in the tree",
        arguments: [false, true])
    func endOnAnotherThreadKeepsTree(waitForTheEnd: Bool) async {
        // `.start` starts R, which sends `.value(1)` at once, then has another thread complete it. The
        // value's effect S never ends by itself; it is R's child, so the next `.start` replaces R's
        // whole chain, S included. Had the held value lost its origin when R was forgotten on the
        // other thread, S would be an orphan, and would run on. (Not waited for, the other thread's
        // end almost always lands after the held value was processed: starting a thread takes longer
        // than the rest of the handler. That variant checks the outcome stays the same, not the
        // handshake, which the waited-for variant drives every time.)
        let iterations = 300
        let failures = await onDedicatedThread { () -> [String] in
            var failures: [String] = []
            for iteration in 0..<iterations {
                let childEnded = Recording<String>()
                let automaton = Automaton<Int, Step>(
                    state: 0,
                    mapping: { state, input in
                        switch input {
                        case .start:
                            return (
                                state + 1,
                                SignalProducer { observer, _ in
                                    observer.send(value: .value(1))
                                    let ended = DispatchSemaphore(value: 0)
                                    Thread {
                                        observer.sendCompleted()
                                        ended.signal()
                                    }.start()
                                    if waitForTheEnd { ended.wait() }
                                }
                            )
                        case .value:
                            return (
                                state + 1,
                                SignalProducer { observer, lifetime in
                                    lifetime.observeEnded {
                                        childEnded.append("child ended")
                                        withExtendedLifetime(observer) {}
                                    }
                                }
                            )
                        case .outside, .stop: return (state + 1, .empty)
                        }
                    },
                    strategy: .latest)
                let replies = automaton.replies.record()
                automaton.send(.start)
                // Let the other thread's end land (it needs no lock this thread holds).
                guard spin(until: { automaton.runningEffectCount <= 1 }) else {
                    failures.append("iteration \(iteration): \(automaton.runningEffectCount) effects still run")
                    break
                }
                automaton.send(.start)
                let expected: [Event<Reply<Int, Step>, Never>] = [
                    .value(.success(.start, 0, 1)), .value(.success(.value(1), 1, 2)),
                    .value(.success(.start, 2, 3)), .value(.success(.value(1), 3, 4)),
                ]
                _ = spin(until: { replies.count >= 4 })
                if replies.values != expected {
                    failures.append("iteration \(iteration): replies \(replies.values)")
                }
                if childEnded.values != ["child ended"] {
                    failures.append("iteration \(iteration): first child \(childEnded.values)")
                }
                guard spin(until: { automaton.runningEffectCount <= 1 }) else {
                    failures.append("iteration \(iteration): the second chain still runs")
                    break
                }
                if !failures.isEmpty { break }
            }
            return failures
        }
        #expect(failures == [])
    }
}

@Suite("Synchronous feedback under threads")
struct HeldInputThreadTests {
    enum Step: Hashable, Sendable {
        case start(Int), value(Int), outside(Int)
    }

    @Test("values held while other threads send and end effects: none lost, each after its cause, FIFO per sender")
    func heldValuesUnderThreads() async {
        // One thread sends `.start(k)`; each start's effect sends `.value(k)` at once and is completed
        // from a dispatch queue, sometimes before its handler returns, sometimes after. Another thread
        // sends `.outside(j)` meanwhile. Under `.merge` nothing is cancelled, so every input must be
        // replied to exactly once, each value after its start, and each sender's inputs in order.
        let count = 10_000
        let automaton = Automaton<Int, Step>(
            state: 0,
            mapping: { state, input in
                switch input {
                case let .start(k):
                    return (
                        state + 1,
                        SignalProducer { observer, _ in
                            observer.send(value: .value(k))
                            let ended = DispatchSemaphore(value: 0)
                            DispatchQueue.global().async {
                                observer.sendCompleted()
                                ended.signal()
                            }
                            if k % 2 == 0 { ended.wait() }
                        }
                    )
                case .value, .outside: return (state + 1, .empty)
                }
            })
        let replies = Recording<Reply<Int, Step>>()
        automaton.replies.observeValues { replies.append($0) }

        await runOnThreads(2) { thread in
            for index in 0..<count {
                automaton.send(thread == 0 ? .start(index) : .outside(index))
            }
        }
        let finished = await onDedicatedThread { () -> Bool in
            let deadline = DispatchTime.now() + .seconds(60)
            while automaton.runningEffectCount > 0 || replies.count < 3 * count {
                if DispatchTime.now() > deadline { return false }
                sched_yield()
            }
            return true
        }

        #expect(finished == true)
        let inputs = replies.values.map { reply -> Step in
            guard case let .success(input, _, _) = reply else { return .outside(-1) }
            return input
        }
        #expect(inputs.count == 3 * count)
        var position: [Step: Int] = [:]
        for (index, input) in inputs.enumerated() { position[input] = index }
        #expect(position.count == 3 * count, "every input replied to exactly once")
        let starts = inputs.compactMap { if case let .start(k) = $0 { return k } else { return nil } }
        let outsides = inputs.compactMap { if case let .outside(k) = $0 { return k } else { return nil } }
        #expect(starts == Array(0..<count))
        #expect(outsides == Array(0..<count))
        let late = (0..<count).filter { k in
            (position[.value(k)] ?? -1) < (position[.start(k)] ?? Int.max)
        }
        #expect(late == [], "values replied before their start, or never")
        #expect(automaton.state.value == 3 * count)
    }
}
