import Automaton
import Signals

// A random automaton case: a small mapping table written with the real DSL forms, and the outside
// inputs to send. Everything here is plain data, so that the reference model can interpret it, the
// real automaton can be built from it, and a failing case can be shrunk and printed.

/// A predicate on a small `Int`, printable as the closure it stands for.
enum IntPredicate: Sendable, Equatable, CustomStringConvertible {
    case even
    case odd
    case lessThan(Int)
    case atLeast(Int)
    case notEqual(Int)

    func callAsFunction(_ value: Int) -> Bool {
        switch self {
        case .even: return value % 2 == 0
        case .odd: return value % 2 != 0
        case let .lessThan(bound): return value < bound
        case let .atLeast(bound): return value >= bound
        case let .notEqual(excluded): return value != excluded
        }
    }

    /// The predicate as a closure, for the DSL.
    var closure: @Sendable (Int) -> Bool {
        let predicate = self
        return { predicate($0) }
    }

    var description: String {
        switch self {
        case .even: return "{ $0 % 2 == 0 }"
        case .odd: return "{ $0 % 2 != 0 }"
        case let .lessThan(bound): return "{ $0 < \(bound) }"
        case let .atLeast(bound): return "{ $0 >= \(bound) }"
        case let .notEqual(excluded): return "{ $0 != \(excluded) }"
        }
    }

    static func random(below count: Int, using generator: inout SeededGenerator) -> IntPredicate {
        switch generator.int(in: 0..<5) {
        case 0: return .even
        case 1: return .odd
        case 2: return .lessThan(generator.int(in: 1..<count))
        case 3: return .atLeast(generator.int(in: 1..<count))
        default: return .notEqual(generator.int(in: 0..<count))
        }
    }
}

/// The input part of a row: `2 | ...`, `{ $0 < 2 } | ...` or `any | ...`.
enum InputPattern: Sendable, Equatable, CustomStringConvertible {
    case value(Int)
    case predicate(IntPredicate)
    case any

    func matches(_ input: Int) -> Bool {
        switch self {
        case let .value(value): return input == value
        case let .predicate(predicate): return predicate(input)
        case .any: return true
        }
    }

    var description: String {
        switch self {
        case let .value(value): return "\(value)"
        case let .predicate(predicate): return "\(predicate)"
        case .any: return "any"
        }
    }
}

/// The from-state part of a row: `1 => ...`, `{ $0 % 2 == 0 } => ...`, `[0, 2] => ...` or `any => ...`.
enum FromPattern: Sendable, Equatable, CustomStringConvertible {
    case value(Int)
    case predicate(IntPredicate)
    case array([Int])
    case any

    func matches(_ state: Int) -> Bool {
        switch self {
        case let .value(value): return state == value
        case let .predicate(predicate): return predicate(state)
        case let .array(values): return values.contains(state)
        case .any: return true
        }
    }

    var description: String {
        switch self {
        case let .value(value): return "\(value)"
        case let .predicate(predicate): return "\(predicate)"
        case let .array(values): return "\(values)"
        case .any: return "any"
        }
    }
}

/// One input an effect emits: at once when it starts (`delay == nil`), or `delay` ticks later.
struct Emission: Sendable, Equatable, CustomStringConvertible {
    let input: Int
    let delay: Int?

    var description: String {
        delay.map { "\(input) after \($0)" } ?? "\(input) now"
    }
}

/// The effect part of a row. Which inputs an effect emits, and when, is fixed per row, so that the
/// model can predict them.
enum EffectSpec: Sendable, Equatable, CustomStringConvertible {
    /// `.empty`: starts nothing (but under `.latest` still replaces the level's effect).
    case empty
    /// `SignalProducer(values:)`: emits synchronously as it starts, then completes.
    case values([Int])
    /// `{ send in ... }`: calls `send` synchronously as it starts and keeps no `send`, so it ends when
    /// it returns.
    case closure([Int])
    /// A start handler on the `TestScheduler`: each emission at once or `delay` ticks after the start,
    /// then the end (completion, or interruption if `interrupts`) at once (`completion == nil`) or
    /// `completion` ticks after the start, scheduled after the emissions: emissions due later than the
    /// end must never reach the automaton. Disposal cancels what is still scheduled.
    case scheduled([Emission], completion: Int?, interrupts: Bool = false)
    /// `SignalProducer(values:).delay(by, on: scheduler)`.
    case delayed([Int], by: Int)
    /// `{ send in ... }` that calls `send` at once or from actions it schedules, never cancelled: the
    /// engine must drop what it sends after being replaced. The scheduled actions keep `send`, so it
    /// ends when the last of them has run (at once if none is scheduled).
    case closureScheduled([Emission])
    /// A start handler that emits synchronously as it starts and keeps nothing: its run lives until it
    /// is disposed, as a ReactiveSwift run does (it never ends by itself) (keyed cases only, so that a key's effect is still running
    /// when the next input comes).
    case pending([Int])

    /// Whether emissions go through the scheduler, so the case needs virtual time.
    var usesScheduler: Bool {
        switch self {
        case .empty, .values, .closure, .pending: return false
        case .scheduled, .delayed, .closureScheduled: return true
        }
    }

    /// The same effect with one emission fewer, for shrinking; `nil` if it emits nothing.
    func removingEmission(at index: Int) -> EffectSpec? {
        func removing<Element>(_ list: [Element]) -> [Element]? {
            guard list.indices.contains(index) else { return nil }
            var list = list
            list.remove(at: index)
            return list
        }
        switch self {
        case .empty: return nil
        case let .values(inputs): return removing(inputs).map { .values($0) }
        case let .closure(inputs): return removing(inputs).map { .closure($0) }
        case let .scheduled(emissions, completion, interrupts):
            return removing(emissions).map { .scheduled($0, completion: completion, interrupts: interrupts) }
        case let .delayed(inputs, delay): return removing(inputs).map { .delayed($0, by: delay) }
        case let .closureScheduled(emissions): return removing(emissions).map { .closureScheduled($0) }
        case let .pending(inputs): return removing(inputs).map { .pending($0) }
        }
    }

    var emissionCount: Int {
        switch self {
        case .empty: return 0
        case let .values(inputs), let .closure(inputs), let .delayed(inputs, _), let .pending(inputs):
            return inputs.count
        case let .scheduled(emissions, _, _), let .closureScheduled(emissions): return emissions.count
        }
    }

    var description: String {
        func sends(_ emissions: [Emission]) -> String {
            emissions.map { emission in
                emission.delay.map { "scheduler.schedule(after: .seconds(\($0))) { send(\(emission.input)) }" }
                    ?? "send(\(emission.input))"
            }.joined(separator: "; ")
        }
        switch self {
        case .empty:
            return ".empty"
        case let .values(inputs):
            return "SignalProducer(values: \(inputs))"
        case let .closure(inputs):
            return inputs.isEmpty ? "{ _ in }" : "{ send in \(sends(inputs.map { Emission(input: $0, delay: nil) })) }"
        case let .scheduled(emissions, completion, interrupts):
            let endEvent = interrupts ? "interrupted" : "completed"
            let end = completion.map { "\(endEvent) after \($0)" } ?? "\(endEvent) now"
            return "scheduled(\(emissions.map(\.description).joined(separator: ", ")); \(end))"
        case let .delayed(inputs, delay):
            return "SignalProducer(values: \(inputs)).delay(.seconds(\(delay)), on: scheduler)"
        case let .closureScheduled(emissions):
            return emissions.isEmpty ? "{ _ in }" : "{ send in \(sends(emissions)) }"
        case let .pending(inputs):
            return "pending(\(inputs))"
        }
    }
}

/// What a row of a keyed case does with keys: its effect is keyed, or the row cancels keys instead of
/// starting its effect.
enum Keying: Sendable, Equatable, CustomStringConvertible {
    /// `effect.keyed(key, policy)`.
    case keyed(Int, EffectPolicy)
    /// `.cancel(keys...)`, in place of the row's effect.
    case cancel([Int])

    var description: String {
        switch self {
        case let .keyed(key, policy): return ".keyed(\(key), .\(policy))"
        case let .cancel(keys): return ".cancel(\(keys.map(String.init).joined(separator: ", ")))"
        }
    }
}

/// One row of the table.
struct Row: Sendable, Equatable, CustomStringConvertible {
    enum Target: Sendable, Equatable {
        /// `fromState => toState`.
        case state(from: FromPattern, to: Int)
        /// The state-function form `input | { ($0 + offset) % stateCount }`; the input is a value.
        case function(offset: Int)
    }

    var input: InputPattern
    var target: Target
    /// `nil` in a table without effects (a `Mapping`).
    var effect: EffectSpec?
    /// Keyed cases only: the row's effect is keyed, or the row cancels keys; `nil` for an un-keyed effect.
    var keying: Keying? = nil

    /// The state this row leads to from `state` on `input`, or `nil` if it does not apply.
    func apply(state: Int, input received: Int, stateCount: Int) -> Int? {
        guard input.matches(received) else { return nil }
        switch target {
        case let .state(from, to): return from.matches(state) ? to : nil
        case let .function(offset): return (state + offset) % stateCount
        }
    }

    func description(stateCount: Int) -> String {
        let mapping: String
        switch target {
        case let .state(from, to): mapping = "\(input) | \(from) => \(to)"
        case let .function(offset): mapping = "\(input) | { ($0 + \(offset)) % \(stateCount) }"
        }
        switch (effect, keying) {
        case (_, .cancel?): return "\(mapping) | \(keying!)"
        case let (effect?, keying?): return "\(mapping) | \(effect)\(keying)"
        case let (effect?, nil): return "\(mapping) | \(effect)"
        case (nil, _): return mapping
        }
    }

    var description: String { description(stateCount: 0) }
}

/// An input sent from outside: through `automaton.send` or the `input` signal, at virtual instant
/// `time` (always 0 for synchronous cases).
struct OutsideInput: Sendable, Equatable, CustomStringConvertible {
    let input: Int
    let time: Int
    let throughSignal: Bool

    var description: String {
        "\(input)@\(time)\(throughSignal ? " (signal)" : "")"
    }
}

/// An outside input that a `replies` (or `state.signal`) observer sends when it sees the
/// `after`-th reply (or state; 1 for the first), through `automaton.send` or the input signal.
struct ObserverSend: Sendable, Equatable, CustomStringConvertible {
    let after: Int
    let watchesState: Bool
    let input: Int
    let throughSignal: Bool

    var description: String {
        "\(input) after \(watchesState ? "state" : "reply") #\(after)\(throughSignal ? " (signal)" : "")"
    }
}

/// How a case is driven.
enum CaseKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Synchronous effects only; outside inputs sent one after another.
    case synchronousMerge = "sync-merge"
    case synchronousLatest = "sync-latest"
    /// Effects that emit after virtual delays on a `TestScheduler`; outside inputs at random instants.
    case virtualTimeLatest = "time-latest"
    case virtualTimeMerge = "time-merge"
    /// The same four with keyed effects (every policy) and rows that cancel by key.
    case synchronousKeyedMerge = "sync-keyed-merge"
    case synchronousKeyedLatest = "sync-keyed-latest"
    case virtualTimeKeyedLatest = "time-keyed-latest"
    case virtualTimeKeyedMerge = "time-keyed-merge"

    var isLatest: Bool {
        switch self {
        case .synchronousLatest, .virtualTimeLatest, .synchronousKeyedLatest, .virtualTimeKeyedLatest: return true
        case .synchronousMerge, .virtualTimeMerge, .synchronousKeyedMerge, .virtualTimeKeyedMerge: return false
        }
    }

    var usesVirtualTime: Bool {
        switch self {
        case .virtualTimeLatest, .virtualTimeMerge, .virtualTimeKeyedLatest, .virtualTimeKeyedMerge: return true
        case .synchronousMerge, .synchronousLatest, .synchronousKeyedMerge, .synchronousKeyedLatest: return false
        }
    }

    var usesKeys: Bool {
        switch self {
        case .synchronousKeyedMerge, .synchronousKeyedLatest, .virtualTimeKeyedLatest, .virtualTimeKeyedMerge:
            return true
        case .synchronousMerge, .synchronousLatest, .virtualTimeLatest, .virtualTimeMerge: return false
        }
    }

    var strategy: AutomatonStrategy { isLatest ? .latest : .merge }
    var description: String { rawValue }
}

/// How outside inputs reach the automaton in virtual time.
enum OutsideDelivery: Sendable, Equatable {
    /// Each outside send is an action scheduled on the `TestScheduler` before the clock starts, then
    /// `scheduler.run()`.
    case scheduledUpFront
    /// For each outside input in time order: `scheduler.advance(to: time)`, then send; finally
    /// `scheduler.run()`.
    case advanceThenSend
}

/// How a case ends: BRIEF §5.6 and §5.7.
enum Ending: Sendable, Equatable, CustomStringConvertible {
    /// The input signal completes: outside inputs are ignored from then on, effects go on, and
    /// `replies` completes once nothing is queued or running.
    case completeInput
    /// The input signal is interrupted: every effect is disposed, `replies` is interrupted, and
    /// nothing more happens.
    case interruptInput
    /// The last reference to the automaton goes: `replies` completes and every effect is disposed.
    case release

    var description: String {
        switch self {
        case .completeInput: return "inputObserver.sendCompleted()"
        case .interruptInput: return "inputObserver.sendInterrupted()"
        case .release: return "automaton = nil"
        }
    }
}

/// When the ending happens.
enum EndingPoint: Sendable, Equatable, CustomStringConvertible {
    /// After every outside input and, in virtual time, after `scheduler.run()`.
    case afterEverything
    /// Just before the outside input at this index is sent (at the end of the list: after the last
    /// one, before `scheduler.run()`). With `.advanceThenSend`, the clock first advances to that
    /// input's instant.
    case beforeInput(Int)
    /// With `.scheduledUpFront`: an action scheduled at this instant, after the outside inputs' ones.
    case atTime(Int)

    var description: String {
        switch self {
        case .afterEverything: return "after everything"
        case let .beforeInput(index): return "before outside input #\(index)"
        case let .atTime(time): return "at instant \(time)"
        }
    }
}

/// A generated case: everything needed to build the automaton, drive it, and predict it.
struct GeneratedCase: Sendable, Equatable {
    /// How many mapping calls are answered before every input fails: generated tables may loop
    /// forever (an effect whose input restarts it), and the fuse ends any such loop on both sides.
    static let mappingFuse = 150

    let seed: UInt64
    let kind: CaseKind
    let stateCount: Int
    let inputCount: Int
    let initialState: Int
    /// `false`: a table of `Mapping` rows, built with `Automaton(state:input:mapping:)`.
    var hasEffects: Bool
    var rows: [Row]
    var inputs: [OutsideInput]
    var delivery: OutsideDelivery
    var observerSends: [ObserverSend] = []
    var ending = Ending.completeInput
    var endingPoint = EndingPoint.afterEverything

    /// The same case without the outside input at `index`, the ending staying at the same place.
    func removingInput(at index: Int) -> GeneratedCase {
        var smaller = self
        smaller.inputs.remove(at: index)
        if case let .beforeInput(endIndex) = endingPoint, index < endIndex {
            smaller.endingPoint = .beforeInput(endIndex - 1)
        }
        return smaller
    }

    /// The first row that applies, with its effect (`nil` for none) and what it does with keys.
    func transition(state: Int, input: Int) -> (toState: Int, effect: EffectSpec?, keying: Keying?)? {
        for row in rows {
            if let toState = row.apply(state: state, input: input, stateCount: stateCount) {
                return (toState, row.effect, row.keying)
            }
        }
        return nil
    }

    /// The case as Swift-ish text that says how to replay it.
    var replayText: String {
        var lines: [String] = []
        lines.append(
            "// AUTOMATON_SEED=0x\(String(seed, radix: 16)) AUTOMATON_KIND=\(kind) swift test --filter ReferenceModelReplayTests"
        )
        let time = kind.usesVirtualTime ? ", virtual time, outside inputs \(delivery)" : ""
        lines.append("// \(kind.strategy), states 0..<\(stateCount), inputs 0..<\(inputCount)\(time)")
        lines.append("let scheduler = TestScheduler()")
        let table = hasEffects ? "[Automaton<Int, Int>.EffectMapping]" : "[Automaton<Int, Int>.Mapping]"
        lines.append("let rows: \(table) = [")
        for row in rows {
            lines.append("    \(row.description(stateCount: stateCount)),")
        }
        lines.append("]")
        let strategy = hasEffects ? ", strategy: .\(kind.strategy)" : ""
        lines.append(
            "let automaton = Automaton(state: \(initialState), input: input, mapping: reduce(rows)\(strategy))")
        lines.append("// outside inputs (input@time): \(inputs.map(\.description).joined(separator: ", "))")
        if !observerSends.isEmpty {
            lines.append("// observers send: \(observerSends.map(\.description).joined(separator: ", "))")
        }
        lines.append("// ending: \(ending), \(endingPoint)")
        return lines.joined(separator: "\n")
    }
}

// MARK: Generation

extension GeneratedCase {
    /// The case that `seed` stands for, for `kind`. The same seed always gives the same case.
    static func generate(seed: UInt64, kind: CaseKind) -> GeneratedCase {
        var generator = SeededGenerator(seed: seed)
        let stateCount = generator.int(in: 2...6)
        let inputCount = generator.int(in: 2...5)
        // Keyed cases always have effects (the draw is made anyway, so other kinds keep their cases).
        let hasEffects = !generator.chance(kind.usesVirtualTime ? 5 : 15) || kind.usesKeys
        // Most tables cannot loop: each row's effects emit only inputs above every input the row
        // matches. The others may loop forever, which the mapping fuse ends.
        let isAcyclic = generator.chance(65)
        let rowCount = generator.int(in: 1...10)
        var rows: [Row] = []
        for _ in 0..<rowCount {
            rows.append(
                randomRow(
                    stateCount: stateCount,
                    inputCount: inputCount,
                    hasEffects: hasEffects,
                    isAcyclic: isAcyclic,
                    virtualTime: kind.usesVirtualTime,
                    keyed: kind.usesKeys,
                    using: &generator
                ))
        }
        let inputLength = generator.int(in: 1...30)
        let delivery: OutsideDelivery = generator.chance(50) ? .scheduledUpFront : .advanceThenSend
        var inputs: [OutsideInput] = []
        for _ in 0..<inputLength {
            inputs.append(
                OutsideInput(
                    input: generator.int(in: 0..<inputCount),
                    time: kind.usesVirtualTime ? generator.int(in: 0...24) : 0,
                    throughSignal: generator.chance(30)
                ))
        }
        if delivery == .advanceThenSend {
            // The clock never goes back; equal instants keep their generated order.
            inputs = inputs.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)
        }
        var observerSends: [ObserverSend] = []
        if generator.chance(40) {
            for _ in 0..<generator.int(in: 1...3) {
                observerSends.append(
                    ObserverSend(
                        after: generator.int(in: 1...20),
                        watchesState: generator.chance(30),
                        input: generator.int(in: 0..<inputCount),
                        throughSignal: generator.chance(30)
                    ))
            }
        }
        var ending = Ending.completeInput
        var endingPoint = EndingPoint.afterEverything
        switch generator.int(in: 0..<100) {
        case 0..<15: ending = .interruptInput
        case 15..<30: ending = .release
        default: break
        }
        if generator.chance(50) {
            if kind.usesVirtualTime, delivery == .scheduledUpFront {
                endingPoint = .atTime(generator.int(in: 0...24))
            } else {
                endingPoint = .beforeInput(generator.int(in: 0...inputs.count))
            }
        }
        return GeneratedCase(
            seed: seed,
            kind: kind,
            stateCount: stateCount,
            inputCount: inputCount,
            initialState: generator.int(in: 0..<stateCount),
            hasEffects: hasEffects,
            rows: rows,
            inputs: inputs,
            delivery: kind.usesVirtualTime ? delivery : .advanceThenSend,
            observerSends: observerSends,
            ending: ending,
            endingPoint: endingPoint
        )
    }

    private static func randomRow(
        stateCount: Int,
        inputCount: Int,
        hasEffects: Bool,
        isAcyclic: Bool,
        virtualTime: Bool,
        keyed: Bool,
        using generator: inout SeededGenerator
    ) -> Row {
        let isFunction = generator.chance(12)
        let input: InputPattern
        switch generator.int(in: 0..<100) {
        case _ where isFunction: input = .value(generator.int(in: 0..<inputCount))
        case 0..<60: input = .value(generator.int(in: 0..<inputCount))
        case 60..<88: input = .predicate(.random(below: inputCount, using: &generator))
        default: input = .any
        }
        let lowestEmitted = isAcyclic ? ((0..<inputCount).last(where: input.matches) ?? -1) + 1 : 0
        let effect =
            hasEffects
            ? randomEffect(
                emitting: lowestEmitted..<inputCount, virtualTime: virtualTime, keyed: keyed, using: &generator)
            : nil
        let keying = keyed ? randomKeying(using: &generator) : nil
        if isFunction {
            return Row(
                input: input, target: .function(offset: generator.int(in: 0..<stateCount)), effect: effect,
                keying: keying
            )
        }
        let from: FromPattern
        switch generator.int(in: 0..<100) {
        case 0..<40: from = .value(generator.int(in: 0..<stateCount))
        case 40..<65: from = .predicate(.random(below: stateCount, using: &generator))
        case 65..<85:
            var states: [Int] = []
            for _ in 0..<generator.int(in: 1...3) {
                states.append(generator.int(in: 0..<stateCount))
            }
            from = .array(states)
        default: from = .any
        }
        return Row(
            input: input, target: .state(from: from, to: generator.int(in: 0..<stateCount)), effect: effect,
            keying: keying
        )
    }

    /// Keys 0 and 1: most keyed rows share a key with others. A quarter of the rows cancel, a sixth
    /// are un-keyed, the rest keyed with each policy equally often.
    private static func randomKeying(using generator: inout SeededGenerator) -> Keying? {
        switch generator.int(in: 0..<12) {
        case 0..<3:
            return generator.chance(25) ? .cancel([0, 1]) : .cancel([generator.int(in: 0..<2)])
        case 2..<4:
            return nil
        default:
            let policies: [EffectPolicy] = [.latest, .first, .queue, .merge]
            return .keyed(generator.int(in: 0..<2), policies[generator.int(in: 0..<4)])
        }
    }

    private static func randomEmissionCount(using generator: inout SeededGenerator) -> Int {
        switch generator.int(in: 0..<100) {
        case 0..<15: return 0
        case 15..<45: return 1
        case 45..<80: return 2
        default: return 3
        }
    }

    /// A random effect whose emitted inputs are in `emitted` (none if it is empty).
    private static func randomEffect(
        emitting emitted: Range<Int>,
        virtualTime: Bool,
        keyed: Bool = false,
        using generator: inout SeededGenerator
    ) -> EffectSpec {
        let count = emitted.isEmpty ? 0 : randomEmissionCount(using: &generator)
        var inputs: [Int] = []
        for _ in 0..<count {
            inputs.append(generator.int(in: emitted))
        }
        func emissions(_ generator: inout SeededGenerator) -> [Emission] {
            inputs.map { input in
                Emission(input: input, delay: generator.chance(20) ? nil : generator.int(in: 0...6))
            }
        }
        let roll = generator.int(in: 0..<100)
        // Keyed cases: some effects run until they are cancelled (more without virtual time, where
        // every other effect ends as it starts).
        if keyed, generator.chance(virtualTime ? 20 : 40) { return .pending(inputs) }
        if !virtualTime {
            switch roll {
            case 0..<25: return .empty
            case 25..<70: return .values(inputs)
            default: return .closure(inputs)
            }
        }
        switch roll {
        case 0..<15: return .empty
        case 15..<25: return .values(inputs)
        case 25..<30: return .closure(inputs)
        case 30..<65:
            let scheduled = emissions(&generator)
            let lastDelay = scheduled.compactMap(\.delay).max()
            let completion: Int?
            if lastDelay == nil, generator.chance(50) {
                completion = nil
            } else if generator.chance(25) {
                completion = generator.int(in: 0...((lastDelay ?? 0) + 3))  // possibly before some emissions
            } else {
                completion = (lastDelay ?? 0) + generator.int(in: 0...3)
            }
            return .scheduled(scheduled, completion: completion, interrupts: generator.chance(20))
        case 65..<85: return .delayed(inputs, by: generator.int(in: 0...5))
        default: return .closureScheduled(emissions(&generator))
        }
    }
}
