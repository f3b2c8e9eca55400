import Automaton
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
}
