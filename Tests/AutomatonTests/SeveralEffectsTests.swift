import Automaton
import AutomatonTesting
import Dispatch
import Foundation
import Signals
import Testing

// Several effects per row (`SignalProducer.effects(_:)`): each element keeps its directive, the
// effects are numbered and start in row order after the reply, and the values their start handlers
// send at once are processed once every effect of the row has started. Each test asserts the whole
// sequence of what the automaton published (replies, effect events) and what the effects did.

private enum Sev: Sendable, Hashable, CustomStringConvertible {
    case cart, paying, paid

    var description: String {
        switch self {
        case .cart: return "cart"
        case .paying: return "paying"
        case .paid: return "paid"
        }
    }
}

private enum SevInput: Sendable, Hashable, CustomStringConvertible {
    case checkout, again, stop, note(String)

    var description: String {
        switch self {
        case .checkout: return "checkout"
        case .again: return "again"
        case .stop: return "stop"
        case let .note(text): return "note(\(text))"
        }
    }
}

private enum SevKey: Hashable, Sendable {
    case payment, timeout, browse
}

/// A key whose hash is chosen: two different names with one hash need their `==` to be told apart.
private struct SevNamedKey: Hashable, Sendable, CustomStringConvertible {
    let name: String
    static func == (lhs: SevNamedKey, rhs: SevNamedKey) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
    var description: String { name }
}

/// An effect named `name` that logs its start and its disposal, sends `sends` at once, then
/// completes at once if `completes`, or after `after` on `scheduler`.
private func effect(
    _ name: String, log: Recording<String>, sends: [SevInput] = [], completes: Bool = false,
    after delay: Duration? = nil, on scheduler: TestScheduler? = nil
) -> SignalProducer<SevInput, Never> {
    SignalProducer { observer, lifetime in
        log.append("start \(name)")
        _ = lifetime.observeEnded { log.append("dispose \(name)") }
        for value in sends { observer.send(value: value) }
        if completes { observer.sendCompleted() }
        if let delay, let scheduler {
            lifetime += scheduler.schedule(after: delay) {
                log.append("end \(name)")
                observer.sendCompleted()
            }
        }
    }
}

/// Logs the automaton's replies and effect events into `log`, in the order they are published.
private func record(_ automaton: Automaton<Sev, SevInput>, into log: Recording<String>) {
    automaton.replies.observe { event in
        if case let .value(reply) = event { log.append("reply \(reply)") } else { log.append("replies \(event)") }
    }
    automaton.effectEvents.observeValues { log.append("\($0)") }
}

@Suite("Several effects per row (issue 43, deliverable 3)")
struct SeveralEffectsTests {
    @Test("the effects are numbered and start in row order, after the reply, each with its key")
    func rowOrder() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying
                    | .effects(
                        effect("charge", log: log).keyed(SevKey.payment),
                        effect("timer", log: log).keyed(SevKey.timeout, .latest),
                        effect("plain", log: log))
            ])
        record(automaton, into: log)
        automaton.send(.checkout)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [payment] started by checkout", "start charge",
                "effect 1 [timeout] started by checkout", "start timer",
                "effect 2 started by checkout", "start plain",
            ])
        #expect(automaton.runningEffectCount == 3)
        #expect(automaton.state.value == .paying)
    }

    @Test("values sent at once are processed after every effect of the row has started, in the order sent")
    func synchronousValues() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch (state, input) {
                case (.cart, .checkout):
                    return (
                        .paying,
                        .effects(
                            effect("a", log: log, sends: [.note("a1"), .note("a2")], completes: true),
                            effect("b", log: log, sends: [.note("b1")]).keyed(SevKey.payment),
                            effect("c", log: log, sends: [.note("c1")], completes: true))
                    )
                case (_, .note): return (state, .empty)
                default: return nil
                }
            })
        record(automaton, into: log)
        automaton.send(.checkout)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 started by checkout", "start a", "effect 0 ended", "dispose a",
                "effect 1 [payment] started by checkout", "start b",
                "effect 2 started by checkout", "start c", "effect 2 ended", "dispose c",
                "reply success(note(a1), paying => paying)",
                "reply success(note(a2), paying => paying)",
                "reply success(note(b1), paying => paying)",
                "reply success(note(c1), paying => paying)",
            ])
        #expect(automaton.runningEffectCount == 1)
    }

    @Test("a later element of a key replaces an earlier one of the row under .latest: reported replaced, never started")
    func sameKeyReplacement() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                guard input == .checkout else { return nil }
                return (
                    .paying,
                    .effects(
                        effect("first", log: log).keyed(SevKey.payment),
                        effect("other", log: log).keyed(SevKey.timeout),
                        effect("second", log: log).keyed(SevKey.payment))
                )
            })
        record(automaton, into: log)
        automaton.send(.checkout)
        #expect(
            log.values == [
                "effect 0 [payment] replaced by checkout",
                "reply success(checkout, cart => paying)",
                "effect 1 [timeout] started by checkout", "start other",
                "effect 2 [payment] started by checkout", "start second",
            ])
        #expect(automaton.runningEffectCount == 2)
        // Again: both running ones of the row's keys are replaced, before the reply.
        automaton.send(.checkout)
        #expect(
            Array(log.values.dropFirst(6)) == [
                // In the order decided: the row's first element replaces effect 2, its second effect 1,
                // its third its first (effect 3, never started); then the lifetimes end.
                "effect 2 [payment] replaced by checkout",
                "effect 1 [timeout] replaced by checkout",
                "effect 3 [payment] replaced by checkout",
                "dispose second", "dispose other",
                "reply success(checkout, paying => paying)",
                "effect 4 [timeout] started by checkout", "start other",
                "effect 5 [payment] started by checkout", "start second",
            ])
    }

    @Test(".first drops a later element of its key, .merge runs both, .queue makes the later one wait")
    func policiesWithinARow() {
        let log = Recording<String>()
        let scheduler = TestScheduler()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                guard input == .checkout else { return nil }
                return (
                    .paying,
                    .effects(
                        effect("f1", log: log, after: .seconds(1), on: scheduler).keyed(SevKey.payment, .first),
                        effect("f2", log: log).keyed(SevKey.payment, .first),
                        effect("m1", log: log, after: .seconds(1), on: scheduler).keyed(SevKey.browse, .merge),
                        effect("m2", log: log, after: .seconds(2), on: scheduler).keyed(SevKey.browse, .merge),
                        effect("q1", log: log, after: .seconds(3), on: scheduler).keyed(SevKey.timeout, .queue),
                        effect("q2", log: log, after: .seconds(1), on: scheduler).keyed(SevKey.timeout, .queue))
                )
            })
        record(automaton, into: log)
        automaton.send(.checkout)
        scheduler.advance(by: .seconds(5))
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [payment] started by checkout", "start f1",
                "effect 1 [payment] dropped by checkout",
                "effect 2 [browse] started by checkout", "start m1",
                "effect 3 [browse] started by checkout", "start m2",
                "effect 4 [timeout] started by checkout", "start q1",
                "end f1", "effect 0 [payment] ended", "dispose f1",
                "end m1", "effect 2 [browse] ended", "dispose m1",
                "end m2", "effect 3 [browse] ended", "dispose m2",
                // q2 waited behind q1, an element of its own row; it starts where q1 ends.
                "end q1", "effect 4 [timeout] ended", "effect 5 [timeout] started by checkout", "dispose q1",
                "start q2",
                "end q2", "effect 5 [timeout] ended", "dispose q2",
            ])
        #expect(automaton.runningEffectCount == 0)
    }

    @Test("cancel elements cancel before the state and reply; nested .effects are flattened; .empty skipped")
    func cancelElementsAndFlattening() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying | effect("browse", log: log).keyed(SevKey.browse),
                .again | .paying => .paid
                    | .effects(
                        .empty,
                        effect("charge", log: log).keyed(SevKey.payment),
                        .effects(.cancel(SevKey.browse), .empty, effect("plain", log: log)),
                        .cancel(SevKey.timeout)),
            ])
        record(automaton, into: log)
        automaton.send(.checkout)
        automaton.send(.again)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [browse] started by checkout", "start browse",
                "effect 0 [browse] cancelled by again", "dispose browse",
                "reply success(again, paying => paid)",
                "effect 1 [payment] started by checkout".replacingOccurrences(of: "checkout", with: "again"),
                "start charge",
                "effect 2 started by again", "start plain",
            ])
        #expect(automaton.runningEffectCount == 2)
    }

    @Test("under .latest the un-keyed elements make one effect of the tree, replaced together; keyed ones stay")
    func unkeyedUnderLatest() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (
                        .paying,
                        .effects(
                            effect("a", log: log, sends: [.note("a")]),
                            effect("k", log: log).keyed(SevKey.payment),
                            effect("b", log: log, sends: [.note("b")]))
                    )
                case .note: return (state, .empty)
                case .again: return (.paid, .empty)
                case .stop: return nil
                }
            }, strategy: .latest)
        record(automaton, into: log)
        automaton.send(.checkout)
        #expect(automaton.runningEffectCount == 2)
        automaton.send(.again)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 started by checkout", "start a", "start b",
                "effect 1 [payment] started by checkout", "start k",
                "reply success(note(a), paying => paying)",
                "reply success(note(b), paying => paying)",
                "effect 0 replaced by again", "dispose a", "dispose b",
                "reply success(again, paying => paid)",
            ])
        #expect(automaton.runningEffectCount == 1)
    }

    @Test("under .merge each un-keyed element is an effect of its own")
    func unkeyedUnderMerge() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (.paying, .effects(effect("a", log: log, completes: true), effect("b", log: log)))
                default: return (.paid, .empty)
                }
            }, strategy: .merge)
        record(automaton, into: log)
        automaton.send(.checkout)
        automaton.send(.again)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 started by checkout", "start a", "effect 0 ended", "dispose a",
                "effect 1 started by checkout", "start b",
                "reply success(again, paying => paid)",
            ])
        #expect(automaton.runningEffectCount == 1)
    }

    @Test("keys told apart only by their == are compared outside the lock, for every element")
    func keysComparedByEquality() {
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (.paying, effect("x", log: log).keyed(SevNamedKey(name: "x")))
                case .again:
                    // One hash for every `SevNamedKey`: `y` is another key, the second `x` the running one's.
                    return (
                        .paid,
                        .effects(
                            effect("y", log: log).keyed(SevNamedKey(name: "y")),
                            effect("x2", log: log).keyed(SevNamedKey(name: "x")),
                            effect("x3", log: log).keyed(SevNamedKey(name: "x"), .merge),
                            .cancel(SevNamedKey(name: "z")))
                    )
                default: return nil
                }
            })
        record(automaton, into: log)
        automaton.send(.checkout)
        automaton.send(.again)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [x] started by checkout", "start x",
                "effect 0 [x] replaced by again", "dispose x",
                "reply success(again, paying => paid)",
                "effect 1 [y] started by again", "start y",
                "effect 2 [x] started by again", "start x2",
                "effect 3 [x] started by again", "start x3",
            ])
        #expect(automaton.runningEffectCount == 3)
    }

    @Test("interrupting the input during the starts: every effect of the row starts, then all are disposed")
    func interruptionDuringStarts() {
        let log = Recording<String>()
        let (input, inputObserver) = Signal<SevInput, Never>.pipe()
        let interrupter = SignalProducer<SevInput, Never> { observer, _ in
            log.append("start interrupter")
            observer.send(value: .note("lost"))
            inputObserver.sendInterrupted()
        }
        let automaton = Automaton<Sev, SevInput>(
            state: .cart, input: input,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (
                        .paying,
                        .effects(
                            interrupter.keyed(SevKey.payment), effect("after", log: log, sends: [.note("late")]))
                    )
                default: return (state, .empty)
                }
            })
        record(automaton, into: log)
        inputObserver.send(value: .checkout)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [payment] started by checkout", "start interrupter",
                "effect 1 started by checkout", "start after",
                // Sent before the interruption, processed before it, as for one effect (below).
                "reply success(note(lost), paying => paying)",
                "reply success(note(late), paying => paying)",
                "effect 0 [payment] cancelled: input interrupted", "effect 1 cancelled: input interrupted",
                "dispose after",
                "replies interrupted",
            ])
        #expect(automaton.runningEffectCount == 0)

        // The same with one effect: its value, sent before the interruption, is processed before it.
        let single = Recording<String>()
        let (singleInput, singleObserver) = Signal<SevInput, Never>.pipe()
        let singleInterrupter = SignalProducer<SevInput, Never> { observer, _ in
            observer.send(value: .note("lost"))
            singleObserver.sendInterrupted()
        }
        let one = Automaton<Sev, SevInput>(
            state: .cart, input: singleInput,
            mapping: { state, input in
                input == .checkout ? (.paying, singleInterrupter.keyed(SevKey.payment)) : (state, .empty)
            })
        record(one, into: single)
        singleObserver.send(value: .checkout)
        #expect(
            single.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [payment] started by checkout",
                "reply success(note(lost), paying => paying)",
                "effect 0 [payment] cancelled: input interrupted",
                "replies interrupted",
            ])
    }

    @Test("releasing the automaton during the starts: every effect of the row starts, then all are disposed")
    func releaseDuringStarts() {
        let log = Recording<String>()
        let (input, inputObserver) = Signal<SevInput, Never>.pipe()
        let holder = Locked<Automaton<Sev, SevInput>?>(nil)
        let releaser = SignalProducer<SevInput, Never> { observer, lifetime in
            log.append("start releaser")
            _ = lifetime.observeEnded { log.append("dispose releaser") }
            observer.send(value: .note("lost"))
            let released = holder.withCriticalRegion { held in
                defer { held = nil }
                return held
            }
            withExtendedLifetime(released) {}
        }
        weak var weakAutomaton: Automaton<Sev, SevInput>?
        do {
            let automaton = Automaton<Sev, SevInput>(
                state: .cart, input: input,
                mapping: { state, input in
                    switch input {
                    case .checkout:
                        return (.paying, .effects(releaser, effect("after", log: log).keyed(SevKey.timeout)))
                    default: return (state, .empty)
                    }
                })
            record(automaton, into: log)
            holder.withCriticalRegion { $0 = automaton }
            weakAutomaton = automaton
        }
        inputObserver.send(value: .checkout)
        #expect(weakAutomaton == nil)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 started by checkout", "start releaser",
                "effect 1 [timeout] started by checkout", "start after",
                "replies completed",
                "effect 0 cancelled: automaton released", "effect 1 [timeout] cancelled: automaton released",
                "dispose releaser", "dispose after",
            ])
    }

    @Test("the state graph sees every element: keys, cancelled keys, un-keyed effects")
    func graph() {
        let table: MappingTable<Sev, SevInput> = [
            .checkout | .cart => .paying
                | .effects(
                    SignalProducer(value: .again).keyed(SevKey.payment), .cancel(SevKey.browse),
                    SignalProducer(value: .stop), SignalProducer<SevInput, Never>.empty.keyed(SevKey.timeout)),
            .again | .paying => .paid | .effects(SignalProducer(value: .stop)),
        ]
        let graph = StateGraph(from: Sev.cart, inputs: [.checkout, .again], table: table)
        let checkout = graph.edges.first { $0.input == .checkout }
        #expect(checkout?.effects == [EffectKey(SevKey.payment), nil, EffectKey(SevKey.timeout)])
        #expect(checkout?.effectKey == EffectKey(SevKey.payment))
        #expect(checkout?.cancelledKeys == [EffectKey(SevKey.browse)])
        #expect(checkout?.startsEffect == true)
        let again = graph.edges.first { $0.input == .again }
        #expect(again?.effects == [nil])
        #expect(again?.effectKey == nil)
        #expect(
            graph.mermaid().contains("checkout / cancel [browse], effect [payment], effect, effect [timeout]"))
    }

    @Test("the tester records every element's events, on virtual time")
    func tester() {
        let scheduler = TestScheduler()
        let log = Recording<String>()
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying
                    | .effects(
                        SignalProducer(value: .again).delay(.seconds(2), on: scheduler).keyed(SevKey.payment),
                        effect("timer", log: log, after: .seconds(1), on: scheduler).keyed(SevKey.timeout, .first),
                        SignalProducer(value: .note("now"))),
                .note("now") | .paying => .paying,
                .again | .paying => .paid | .cancel(SevKey.timeout),
            ])
        let tester = AutomatonTester(automaton, scheduler: scheduler)
        tester.send(.checkout)
        tester.advance(by: .seconds(2))
        tester.expect([
            .success(.checkout, .cart, .paying),
            .started(by: .checkout, key: SevKey.payment),
            .started(by: .checkout, key: SevKey.timeout),
            .started(by: .checkout),
            .ended(),
            .success(.note("now"), .paying, .paying),
            .ended(key: SevKey.timeout),
            .success(.again, .paying, .paid),
            .ended(key: SevKey.payment),
        ])
        #expect(log.values == ["start timer", "end timer", "dispose timer"])
        tester.finish()
    }

    @Test("child elements under .latest: a start, a forward, an answered forward merged with a plain effect")
    func childElements() {
        let log = Recording<String>()
        let pads = ChildAutomata<Int, TwoFactorState, TwoFactorInput>("pad") { _ in makeTwoFactor() }
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (
                        .paying,
                        .effects(
                            pads.start(1, replies: { .note("child \($0)") }),
                            pads.send(.enter("000"), to: 1),
                            effect("plain", log: log, sends: [.note("plain")]),
                            pads.send(.enter("123"), to: 1, answer: { .note("answer \($0)") }))
                    )
                case .note: return (state, .empty)
                case .again:
                    // Nothing to start: forwards and a cancel only.
                    return (
                        .paid,
                        .effects(
                            pads.send(.enter("000"), to: 1), .cancel(SevKey.browse), pads.send(.enter("123"), to: 1))
                    )
                case .stop: return nil
                }
            }, strategy: .latest)
        record(automaton, into: log)
        automaton.send(.checkout)
        #expect(pads.state(of: 1, in: automaton) == .rejected)
        automaton.send(.again)
        #expect(
            log.values == [
                "reply success(checkout, cart => paying)",
                "effect 0 [pad[1]] started by checkout",
                // The forward, at its place: the child processes it at once; its reply's input is queued.
                // Then the un-keyed elements, one effect: the plain one, and the answered forward, which
                // finds its automaton through the effect's lifetime.
                "effect 1 started by checkout", "start plain",
                "reply success(note(child success(enter(000), waiting => rejected)), paying => paying)",
                "reply success(note(plain), paying => paying)",
                "reply success(note(child failure(enter(123), rejected)), paying => paying)",
                "reply success(note(answer reply failure(enter(123), rejected)), paying => paying)",
                // The answered forward has ended; the plain one is replaced with it (one effect).
                "effect 1 replaced by again", "dispose plain",
                "reply success(again, paying => paid)",
                "reply success(note(child failure(enter(000), rejected)), paid => paid)",
                "reply success(note(child failure(enter(123), rejected)), paid => paid)",
            ])
        let edges = automaton.graph(inputs: [.checkout, .again]).edges
        let checkout = edges.first { $0.input == .checkout }
        #expect(checkout?.forwards == [EffectKey(pads.key(1)), EffectKey(pads.key(1))])
        #expect(checkout?.effects == [EffectKey(pads.key(1)), nil, nil])
        let again = edges.first { $0.input == .again }
        #expect(again?.forwards == [EffectKey(pads.key(1)), EffectKey(pads.key(1))])
        #expect(again?.effects == [])
        #expect(again?.cancelledKeys == [EffectKey(SevKey.browse)])
    }

    @Test(
        "threads: rows of several effects ending on other threads, every effect started once and ended or cancelled once",
        arguments: [AutomatonStrategy.merge, .latest])
    func threaded(strategy: AutomatonStrategy) async {
        let iterations = 300
        let queue = DispatchQueue(label: "several.effects", attributes: .concurrent)
        let ending: @Sendable (SevInput?) -> SignalProducer<SevInput, Never> = { value in
            SignalProducer { observer, _ in
                queue.async {
                    if let value { observer.send(value: value) }
                    observer.sendCompleted()
                }
            }
        }
        let automaton = Automaton<Sev, SevInput>(
            state: .cart,
            mapping: { state, input in
                switch input {
                case .checkout:
                    return (
                        .paying,
                        .effects(
                            ending(.note("n")).keyed(SevKey.payment, .latest),
                            ending(nil).keyed(SevKey.timeout, .queue),
                            SignalProducer(value: .note("now")),
                            ending(.again),
                            ending(nil).keyed(SevKey.browse, .first))
                    )
                case .again: return (.paid, .effects(ending(nil), .cancel(SevKey.browse)))
                case .note: return (state, .empty)
                case .stop: return nil
                }
            }, strategy: strategy)
        let events = Locked<[EffectEvent<SevInput>]>([])
        automaton.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event) } }
        await runOnThreads(4) { _ in
            for _ in 0..<iterations { automaton.send(.checkout) }
        }
        // Every effect ends on the queue, perhaps starting more there: drain it (on a thread of its
        // own) until the engine sees none running.
        let running = await onDedicatedThread { () -> Int in
            var rounds = 0
            while automaton.runningEffectCount != 0 && rounds < 100_000 {
                queue.sync(flags: .barrier) {}
                rounds += 1
            }
            return automaton.runningEffectCount
        }
        #expect(running == 0)
        let recorded = events.withCriticalRegion { $0 }
        var outcome: [UInt64: (started: Int, finished: Int)] = [:]
        for event in recorded {
            switch event.kind {
            case .started: outcome[event.id, default: (0, 0)].started += 1
            case .ended, .cancelled: outcome[event.id, default: (0, 0)].finished += 1
            }
        }
        #expect(outcome.values.allSatisfy { $0.started <= 1 && $0.finished == 1 })
        #expect(!outcome.isEmpty)
    }
}
