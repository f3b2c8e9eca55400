import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// The engine takes the value of a `SignalProducer(value:)` effect without starting it
/// (`SignalProducer.knownValue`, `AutomatonEngine.runKnownValue`). Nothing may tell it apart from
/// a start handler that sends the same value and completes: these tests run the same random tables
/// both ways and compare everything observable, in order.
@Suite("An effect made with SignalProducer(value:) is run without starting it, unnoticeably")
struct KnownValueEffectTests {
    @Test("a producer knows its value only as SignalProducer(value:), keyed or not")
    func knownValueOnlyForValueProducers() {
        #expect(SignalProducer<Int, Never>(value: 3).knownValue == 3)
        #expect(SignalProducer<Int, Never>(value: 3).keyed("k", .queue).knownValue == 3)
        #expect(SignalProducer<Int, Never>(value: 3).map { $0 + 1 }.knownValue == nil)
        #expect(SignalProducer<Int, Never>(values: [3]).knownValue == nil)
        #expect(SignalProducer<Int, Never> { observer, _ in observer.send(value: 3) }.knownValue == nil)
        #expect(SignalProducer<Int, Never>.empty.knownValue == nil)
        #expect(
            SignalProducer<Int, Never> { observer, _ in observer.send(value: 3) }.keyed("k", .queue).knownValue == nil)
        #expect(SignalProducer<Int, Never>.empty.keyed("k", .merge).knownValue == nil)
        #expect(SignalProducer<String, Never>(value: "v").keyed("k", .latest).keyed("j", .merge).knownValue == "v")
    }

    /// The value lives in the producer's attachment (`KnownValueAttachment`), which its start handler
    /// captures: started, it sends that value; released, with every copy and keyed copy, it frees it.
    @Test("a value producer sends its value when started and frees it with its last copy")
    func valueProducerOwnsItsValue() {
        final class Payload: Sendable {}
        weak var freed: Payload?
        do {
            let payload = Payload()
            freed = payload
            let producer = SignalProducer<Payload, Never>(value: payload)
            let keyed = producer.keyed("k", .merge)
            let events = Recording<String>()
            for started in [producer, keyed] {
                started.start { event in
                    switch event {
                    case let .value(value): events.append(value === payload ? "the value" : "another value")
                    default: events.append("\(event)")
                    }
                }
            }
            #expect(events.values == ["the value", "completed", "the value", "completed"])
            #expect(keyed.knownValue === payload)
        }
        #expect(freed == nil)
    }

    /// A random table over 4 nodes and 4 inputs: each row moves to a node and starts no effect, an
    /// effect that sends one input and completes (keyed under a random policy, or not), or `.empty`.
    /// Effects stop once a run has made 40 transitions, so feedback ends.
    struct Table: Sendable {
        enum Effect: Sendable {
            case none
            case value(Int, key: String?, policy: EffectPolicy)
        }

        let rows: [[(next: Int, effect: Effect)?]]

        init(seed: UInt64) {
            var random = SeededGenerator(seed: seed)
            let policies: [EffectPolicy] = [.latest, .first, .queue, .merge]
            rows = (0..<4).map { _ in
                (0..<4).map { _ -> (next: Int, effect: Effect)? in
                    if random.int(in: 0..<5) == 0 { return nil }
                    let next = random.int(in: 0..<4)
                    switch random.int(in: 0..<4) {
                    case 0: return (next, .none)
                    case 1:
                        let key = "k\(random.int(in: 0..<2))"
                        return (next, .value(random.int(in: 0..<4), key: key, policy: policies[random.int(in: 0..<4)]))
                    default: return (next, .value(random.int(in: 0..<4), key: nil, policy: .merge))
                    }
                }
            }
        }

        /// Everything the automaton made observable while `inputs` were sent and it was released,
        /// with the effect written as `SignalProducer(value:)` or as a start handler.
        func run(
            inputs: [Int], strategy: AutomatonStrategy, knownValues: Bool, observeEffectEvents: Bool
        ) -> [String] {
            let log = Recording<String>()
            let rows = self.rows
            do {
                let automaton = Automaton<[Int], Int>(
                    state: [0],
                    mapping: { path, input in
                        guard let row = rows[path.last!][input] else { return nil }
                        let next = path + [row.next]
                        guard case let .value(value, key, policy) = row.effect, path.count < 40 else {
                            return (next, .empty)
                        }
                        let producer: SignalProducer<Int, Never> =
                            knownValues
                            ? SignalProducer(value: value)
                            : SignalProducer { observer, _ in
                                observer.send(value: value)
                                observer.sendCompleted()
                            }
                        return (next, key.map { producer.keyed($0, policy) } ?? producer)
                    },
                    strategy: strategy)
                automaton.replies.observe { log.append("reply \($0)") }
                automaton.state.signal.observe { log.append("state \($0)") }
                if observeEffectEvents {
                    automaton.effectEvents.observe { log.append("effect \($0)") }
                }
                for input in inputs { automaton.send(input) }
                log.append("running \(automaton.runningEffectCount)")
            }
            return log.values
        }
    }

    @Test(
        "random tables: SignalProducer(value:) and a start handler sending the same value give the same replies, states and effect events",
        arguments: [AutomatonStrategy.merge, .latest])
    func sameAsAStartHandler(strategy: AutomatonStrategy) {
        for seed in UInt64(0)..<300 {
            let table = Table(seed: seed)
            var random = SeededGenerator(seed: seed &+ 1_000)
            let inputs = (0..<12).map { _ in random.int(in: 0..<4) }
            for observeEffectEvents in [false, true] {
                let known = table.run(
                    inputs: inputs, strategy: strategy, knownValues: true, observeEffectEvents: observeEffectEvents)
                let started = table.run(
                    inputs: inputs, strategy: strategy, knownValues: false, observeEffectEvents: observeEffectEvents)
                // The first difference only: the whole logs are long.
                let firstDifference =
                    zip(known, started).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(known.count, started.count)
                #expect(
                    known == started,
                    """
                    seed \(seed), effect events observed: \(observeEffectEvents): from entry \(firstDifference), \
                    known value \(known.dropFirst(firstDifference).prefix(3)), \
                    start handler \(started.dropFirst(firstDifference).prefix(3))
                    """)
                if known != started { return }
                #expect(known.last?.hasPrefix("running") == false, "the release ended the signals")
            }
        }
    }

    /// The effect of an outside input that nobody observes runs as its transition is made, before its
    /// reply (`AutomatonEngine.commitKnownValue`): an effect-event observer added while that reply is
    /// delivered does not hear it; it hears the effects of the inputs after, in full.
    @Test("an effect-event observer added during the reply hears the effects after it, not the one that already ran")
    func observerAddedDuringTheReply() {
        let automaton = Self.counter(tock: Self.tock(true))
        let events = Recording<String>()
        let replies = Recording<String>()
        let added = Locked(false)
        automaton.replies.observeValues { [weak automaton] reply in
            replies.append("\(reply)")
            guard let automaton, !added.withCriticalRegion({ $0 }) else { return }
            added.withCriticalRegion { $0 = true }
            automaton.effectEvents.observeValues { events.append("\($0)") }
        }
        automaton.send("tick")
        automaton.send("tick")
        #expect(
            replies.values == [
                "success(tick, 0 => 1)", "success(tock, 1 => 2)", "success(tick, 2 => 3)", "success(tock, 3 => 4)",
            ])
        #expect(events.values == ["effect 0 started by tick", "effect 0 ended"])
        #expect(automaton.state.value == 4)
    }

    /// The value of an effect run as its transition was made is an effect's input: it is processed
    /// after the input signal completes (only outside inputs stop), and dropped once the automaton
    /// terminates. The same as a start handler sending that value.
    @Test(
        "the input completed or interrupted from the reply: the value is processed, or dropped",
        arguments: [false, true], [false, true])
    func endedDuringTheReply(interrupts: Bool, knownValue: Bool) {
        let (input, inputObserver) = Signal<String, Never>.pipe()
        let automaton = Self.counter(tock: Self.tock(knownValue), input: input)
        let replies = Recording<String>()
        let states = automaton.state.signal.record()
        automaton.replies.observe { event in
            replies.append("\(event)")
            if case .value(.success("tick", _, _)) = event {
                if interrupts { inputObserver.sendInterrupted() } else { inputObserver.sendCompleted() }
            }
        }
        // Through `send`, not the input signal: the input signal would hold its end until this
        // input's delivery returned.
        automaton.send("tick")
        if interrupts {
            #expect(replies.values == ["value(success(tick, 0 => 1))", "interrupted"])
            #expect(states.values == [.value(1), .completed])
        } else {
            #expect(replies.values == ["value(success(tick, 0 => 1))", "value(success(tock, 1 => 2))", "completed"])
            #expect(states.values == [.value(1), .value(2)])
        }
    }

    /// Two threads send outside inputs whose effects nobody observes, so that each input finds the
    /// gate free or not (the value then takes the usual path, or is queued first); a third adds an
    /// effect-event observer midway. Every value is processed once, and the observer hears whole
    /// effects from its first start on: each start it hears is followed by that effect's end.
    @Test(
        "threads sending inputs whose effects run unobserved, and an observer added midway: nothing lost, whole effects heard"
    )
    func threadsAndALateObserver() async {
        for round in 0..<100 {
            let automaton = Self.counter(tock: Self.tock(true))
            let events = Recording<EffectEvent<String>>()
            let successes = Locked(0)
            automaton.replies.observeValues { reply in
                if reply.isSuccess { successes.withCriticalRegion { $0 += 1 } }
            }
            await runOnThreads(3) { index in
                if index == 2 {
                    automaton.effectEvents.observeValues { events.append($0) }
                } else {
                    for _ in 0..<200 { automaton.send("tick") }
                }
            }
            #expect(automaton.state.value == 800, "round \(round)")
            #expect(successes.withCriticalRegion { $0 } == 800, "round \(round)")
            // An effect starts and ends within one processing step, so once the observer has heard a
            // start, every end it hears is of the effect it heard start last (before that, an end
            // may be of an effect that started before it was added).
            var open: UInt64?
            var heardStart = false
            for event in events.values {
                switch event.kind {
                case .started:
                    #expect(open == nil, "round \(round): a start before the previous effect's end")
                    open = event.id
                    heardStart = true
                case .ended:
                    if heardStart { #expect(open == event.id, "round \(round): an end without its start") }
                    open = nil
                case .cancelled: Issue.record("round \(round): nothing is cancelled")
                }
            }
            #expect(open == nil, "round \(round): a start without its end")
        }
    }

    // From the adversarial review of the no-record path: inputs sent while a reply is delivered.

    /// An effect that sends `value` and completes: `SignalProducer(value:)` if `knownValue`, else a
    /// start handler that does the same.
    static func sending(_ value: String, knownValue: Bool) -> SignalProducer<String, Never> {
        knownValue
            ? SignalProducer(value: value)
            : SignalProducer { observer, _ in
                observer.send(value: value)
                observer.sendCompleted()
            }
    }

    static func tock(_ knownValue: Bool) -> SignalProducer<String, Never> {
        sending("tock", knownValue: knownValue)
    }

    /// A counter: "tick" counts and starts `tock`, "tock" counts; fed by `send`, and by `input` if given.
    static func counter(
        tock: SignalProducer<String, Never>, input: Signal<String, Never>? = nil
    ) -> Automaton<Int, String> {
        let mapping: Automaton<Int, String>.EffectMapping = { state, input in
            switch input {
            case "tick": return (state + 1, tock)
            case "tock": return (state + 1, .empty)
            default: return nil
            }
        }
        guard let input else { return Automaton(state: 0, mapping: mapping) }
        return Automaton(state: 0, input: input, mapping: mapping)
    }

    /// An automaton whose state is the path of inputs it took; "tick" feeds back "tock" (or a chain
    /// "tick", "tock", "tack" when `chained`).
    static func pathAutomaton(knownValue: Bool, chained: Bool = false) -> Automaton<[String], String> {
        let tock = tock(knownValue)
        let tack = sending("tack", knownValue: knownValue)
        return Automaton<[String], String>(
            state: [],
            mapping: { path, input in
                switch input {
                case "tick": return (path + [input], tock)
                case "tock" where chained: return (path + [input], tack)
                default: return (path + [input], .empty)
                }
            })
    }

    enum DuringTheReply: String, CaseIterable, Sendable { case replyObserver, stateObserver, otherThread }

    /// "extra" is sent while the reply to `trigger` is delivered: from a `replies` observer, from a
    /// `state` observer, or from another thread while the reply observer waits for it.
    static func pathWithInputDuringReply(
        knownValue: Bool, chained: Bool, trigger: String, from sender: DuringTheReply
    ) -> [String] {
        let automaton = pathAutomaton(knownValue: knownValue, chained: chained)
        let send = automaton.sender
        let sent = Locked(false)
        let sendOnce: @Sendable () -> Void = {
            let first = sent.withCriticalRegion { sent -> Bool in
                defer { sent = true }
                return !sent
            }
            guard first else { return }
            if sender == .otherThread {
                let queued = DispatchSemaphore(value: 0)
                Thread {
                    send("extra")  // queued: the replying thread holds the processing role
                    queued.signal()
                }.start()
                queued.wait()
            } else {
                send("extra")
            }
        }
        switch sender {
        case .replyObserver, .otherThread:
            automaton.replies.observeValues { reply in
                if reply.input == trigger, reply.isSuccess { sendOnce() }
            }
        case .stateObserver:
            automaton.state.signal.observeValues { path in
                if path.last == trigger { sendOnce() }
            }
        }
        automaton.send("tick")
        return automaton.state.value
    }

    @Test(
        "an input sent while the reply is delivered keeps its place before the effect's value, as with a start handler",
        arguments: DuringTheReply.allCases, [false, true])
    func inputSentDuringTheReply(from sender: DuringTheReply, chained: Bool) {
        for trigger in chained ? ["tick", "tock"] : ["tick"] {
            let known = Self.pathWithInputDuringReply(
                knownValue: true, chained: chained, trigger: trigger, from: sender)
            let started = Self.pathWithInputDuringReply(
                knownValue: false, chained: chained, trigger: trigger, from: sender)
            #expect(known == started, "trigger \(trigger): known value \(known), start handler \(started)")
            #expect(known.firstIndex(of: "extra")! < known.firstIndex(of: trigger == "tick" ? "tock" : "tack")!)
        }
    }

    /// The documented difference: a processing observer added while the reply is delivered (here by
    /// a `replies` observer) reports the value of an effect run with no record as sent by no effect.
    @Test(
        "a processing observer added during the reply sees the value as sent by no effect (a start handler's: effect 0)"
    )
    func processingObserverAddedDuringTheReply() {
        func records(knownValue: Bool) -> [String] {
            let automaton = Self.pathAutomaton(knownValue: knownValue)
            let records = Recording<String>()
            let added = Locked(false)
            automaton.replies.observeValues { [weak automaton] reply in
                guard reply.input == "tick", let automaton,
                    added.withCriticalRegion({ added -> Bool in
                        defer { added = true }
                        return !added
                    })
                else { return }
                automaton.observeProcessing { record in
                    records.append("\(record.reply.input) sent by \(record.sentByEffect.map(String.init) ?? "nothing")")
                }
            }
            automaton.send("tick")
            return records.values
        }
        #expect(records(knownValue: true) == ["tock sent by nothing"])
        #expect(records(knownValue: false) == ["tock sent by 0"])
    }
}
