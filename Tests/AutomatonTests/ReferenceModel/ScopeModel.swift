import Automaton
import Signals

// Random tables with state-scoped effects (`.during`) and delayed inputs (`.after`), a reference
// model of their documented semantics, and a run of the real automaton, compared whole (replies,
// states and effect events in one log) with invariants checked after every step.
//
// The tables run under `.merge` (no `.latest` tree) and their effects send nothing synchronously: the
// only inputs that effects send are the `.after` inputs, from the `TestScheduler`. So every input is
// processed as it comes, and the model needs no queue.

/// One `.during` or `.after` declaration of a random table.
struct ScopeDeclaration: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// `.during(states) { _ in effect }`: an effect that runs until it is cancelled (`ends == nil`)
        /// or completes `ends` ticks after it starts.
        case during(ends: Int?)
        /// `.after(.seconds(delay), in: states, send: input, on: scheduler)`.
        case after(delay: Int, input: Int)
    }

    /// The states (never `.any`, which is the same as `{ _ in true }`, drawn as a predicate).
    let states: FromPattern
    let kind: Kind
    /// `.during` only: a key shared with other scopes (`SharedScopeKey`), with the policy `.merge`;
    /// `nil`: the scope's own key.
    let sharedKey: Int?
    /// The policy of a scope with its own key (any: nothing of its key runs when it is entered).
    let policy: EffectPolicy
    let restart: ScopeRestart

    func contains(_ state: Int) -> Bool { states.matches(state) }

    /// Whether a transition from `from` to `to`, both in the scope, restarts it.
    func restarts(from: Int, to: Int) -> Bool {
        switch restart {
        case .onEveryTransition: return true
        case .onStateChange: return from != to
        default: return false
        }
    }

    /// The key's description in `effectEvents`: the shared key, or the scope's own (`during 2`,
    /// `after 3.0 seconds 1`), `index` being the scope's place among the table's scopes.
    func keyDescription(index: Int) -> String {
        if let sharedKey { return "\(SharedScopeKey(number: sharedKey))" }
        switch kind {
        case .during: return "during \(index)"
        case let .after(delay, _): return "after \(Duration.seconds(delay)) \(index)"
        }
    }

    var description: String {
        let key = sharedKey.map { ", key: SharedScopeKey(number: \($0)), policy: .merge" } ?? ", policy: .\(policy)"
        switch kind {
        case let .during(ends):
            let effect = ends.map { "completes after \($0)" } ?? "runs until cancelled"
            return ".during(\(states)\(key), restart: .\(restart)) { _ in \(effect) }"
        case let .after(delay, input):
            return ".after(.seconds(\(delay)), in: \(states), send: \(input), on: scheduler, restart: .\(restart))"
        }
    }
}

/// The key that several `.during` scopes of a random table share.
struct SharedScopeKey: Hashable, Sendable, CustomStringConvertible {
    let number: Int
    var description: String { "shared \(number)" }
}

/// One entry of a random scope table: a row (`input | from => to`, with `effects` effects that run
/// until cancelled: none, one, or several through `SignalProducer.effects(...)`) or a scope declaration.
enum ScopeTableEntry: Sendable, Equatable, CustomStringConvertible {
    case row(input: InputPattern, from: FromPattern, to: Int, effects: Int)
    case scope(ScopeDeclaration)

    var description: String {
        switch self {
        case let .row(input, from, to, effects):
            let effect = effects == 0 ? "" : effects == 1 ? " | pending" : " | .effects(\(effects) × pending)"
            return "\(input) | \(from) => \(to)\(effect)"
        case let .scope(declaration):
            return "\(declaration)"
        }
    }
}

/// What the test does next: send an input, or advance the scheduler's clock.
enum ScopeStep: Sendable, Equatable, CustomStringConvertible {
    case send(Int)
    case advance(Int)

    var description: String {
        switch self {
        case let .send(input): return "send(\(input))"
        case let .advance(ticks): return "advance(\(ticks))"
        }
    }
}

/// One line of what an automaton tells: a state, a reply, or an effect event (decoded).
enum ScopeLogEntry: Sendable, Equatable, CustomStringConvertible {
    case state(Int)
    case reply(Reply<Int, Int>)
    case started(id: UInt64, key: String?, by: Int)
    case ended(id: UInt64, key: String?)
    case exited(id: UInt64, key: String?, by: Int)
    /// Any other effect event: none is expected.
    case other(String)

    init(_ event: EffectEvent<Int>) {
        let key = event.key.map(\.description)
        switch event.kind {
        case let .started(input): self = .started(id: event.id, key: key, by: input)
        case .ended: self = .ended(id: event.id, key: key)
        case let .cancelled(.exited(input)): self = .exited(id: event.id, key: key, by: input)
        case .cancelled: self = .other("\(event)")
        }
    }

    var description: String {
        func name(_ id: UInt64, _ key: String?) -> String { "effect \(id)" + (key.map { " [\($0)]" } ?? "") }
        switch self {
        case let .state(state): return "state \(state)"
        case let .reply(reply): return "\(reply)"
        case let .started(id, key, input): return "\(name(id, key)) started by \(input)"
        case let .ended(id, key): return "\(name(id, key)) ended"
        case let .exited(id, key, input): return "\(name(id, key)) exited by \(input)"
        case let .other(text): return text
        }
    }
}

/// A random table with scopes, its initial state and the test's steps.
struct ScopeCase: Sendable, Equatable {
    let seed: UInt64
    let stateCount: Int
    /// Outside inputs are `0..<inputCount`; each `.after` scope sends its own input, above them.
    let inputCount: Int
    let initialState: Int
    let table: [ScopeTableEntry]
    let steps: [ScopeStep]

    var scopes: [ScopeDeclaration] {
        table.compactMap { if case let .scope(declaration) = $0 { declaration } else { nil } }
    }

    var text: String {
        var lines = ["// seed 0x\(String(seed, radix: 16)), states 0..<\(stateCount), initial \(initialState)"]
        lines.append(contentsOf: table.map { "    \($0)," })
        lines.append("// steps: \(steps.map(\.description).joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }

    static func generate(seed: UInt64) -> ScopeCase {
        var generator = SeededGenerator(seed: seed)
        let stateCount = generator.int(in: 2...5)
        let inputCount = generator.int(in: 2...4)
        func randomStates() -> FromPattern {
            switch generator.int(in: 0..<3) {
            case 0: return .value(generator.int(in: 0..<stateCount))
            case 1: return .predicate(.random(below: stateCount, using: &generator))
            default:
                var states: [Int] = []
                for _ in 0..<generator.int(in: 1...3) { states.append(generator.int(in: 0..<stateCount)) }
                return .array(states)
            }
        }
        let restarts: [ScopeRestart] = [.never, .onStateChange, .onEveryTransition]
        let policies: [EffectPolicy] = [.latest, .first, .queue, .merge]
        var scopes: [ScopeDeclaration] = []
        var afterInputs: [Int] = []
        for _ in 0..<generator.int(in: 1...4) {
            let states = randomStates()
            let restart = generator.pick(restarts)
            if generator.chance(35) {
                let input = inputCount + afterInputs.count
                afterInputs.append(input)
                scopes.append(
                    ScopeDeclaration(
                        states: states, kind: .after(delay: generator.int(in: 1...4), input: input), sharedKey: nil,
                        policy: .latest, restart: restart))
            } else {
                let ends: Int? = generator.chance(30) ? generator.int(in: 1...4) : nil
                let sharedKey: Int? = generator.chance(30) ? generator.int(in: 0..<2) : nil
                scopes.append(
                    ScopeDeclaration(
                        states: states, kind: .during(ends: ends), sharedKey: sharedKey,
                        policy: sharedKey == nil ? generator.pick(policies) : .merge, restart: restart))
            }
        }
        var rows: [ScopeTableEntry] = []
        for _ in 0..<generator.int(in: 2...9) {
            let input: InputPattern
            switch generator.int(in: 0..<100) {
            case 0..<30 where !afterInputs.isEmpty: input = .value(generator.pick(afterInputs))
            case 0..<70: input = .value(generator.int(in: 0..<inputCount))
            case 70..<90: input = .predicate(.random(below: inputCount, using: &generator))
            default: input = .any
            }
            let from: FromPattern = generator.chance(25) ? .any : randomStates()
            rows.append(
                .row(
                    input: input, from: from, to: generator.int(in: 0..<stateCount),
                    effects: generator.chance(80) ? 0 : generator.int(in: 1...3)))
        }
        // The scopes among the rows, in their order (only their order among themselves matters).
        var table = rows
        for scope in scopes {
            let lowest = table.lastIndex { if case .scope = $0 { true } else { false } }.map { $0 + 1 } ?? 0
            table.insert(.scope(scope), at: generator.int(in: lowest...table.count))
        }
        var steps: [ScopeStep] = []
        for _ in 0..<generator.int(in: 1...25) {
            steps.append(
                generator.chance(60) ? .send(generator.int(in: 0..<inputCount)) : .advance(generator.int(in: 0...3)))
        }
        steps.append(.advance(10))
        return ScopeCase(
            seed: seed, stateCount: stateCount, inputCount: inputCount,
            initialState: generator.int(in: 0..<stateCount), table: table, steps: steps)
    }

    /// The first row that applies.
    func transition(state: Int, input: Int) -> (toState: Int, effects: Int)? {
        for entry in table {
            if case let .row(pattern, from, to, effects) = entry, pattern.matches(input), from.matches(state) {
                return (to, effects)
            }
        }
        return nil
    }
}

/// The reference model of state scopes: lists, one action at a time.
///
/// - A successful input: for each scope in table order, it is left (`wasIn && !isIn`), entered
///   (`!wasIn && isIn`) or restarted (both in, and its restart rule says so). Each left or restarted
///   scope's key is exited, in table order: every running effect of that key, in start order, gets
///   `exited(by: input)`. Then the state, the reply, the row's own effects' `started`, then each
///   entered or restarted scope's effect starts, in table order, with a new number.
/// - The initial state's scopes start before anything, numbered first, with no `started` event.
/// - Virtual time: an `.after` effect schedules its input, then its completion, both `delay` later;
///   a completing `.during` schedules its completion. Actions run in (instant, scheduling order);
///   those of an effect that is no longer running are dropped. An input is processed at once.
struct ScopeModel {
    private struct Running {
        let id: UInt64
        let scope: Int
        let key: String
    }

    private enum Action {
        case send(effect: UInt64, input: Int)
        case complete(effect: UInt64)
    }

    let testCase: ScopeCase
    let scopes: [ScopeDeclaration]
    private(set) var log: [ScopeLogEntry] = []
    private var state: Int
    private var running: [Running] = []
    private var nextID: UInt64 = 0
    private var timeline: [(due: Int, sequence: Int, action: Action)] = []
    private var nextSequence = 0
    private var now = 0

    init(_ testCase: ScopeCase) {
        self.testCase = testCase
        scopes = testCase.scopes
        state = testCase.initialState
        for index in scopes.indices where scopes[index].contains(state) {
            start(index)
        }
    }

    /// The log after every step: one list per step.
    static func run(_ testCase: ScopeCase) -> [[ScopeLogEntry]] {
        var model = ScopeModel(testCase)
        var logs: [[ScopeLogEntry]] = []
        for step in testCase.steps {
            switch step {
            case let .send(input): model.process(input)
            case let .advance(ticks): model.advance(by: ticks)
            }
            logs.append(model.log)
        }
        return logs
    }

    private func key(_ index: Int) -> String { scopes[index].keyDescription(index: index) }

    private mutating func start(_ index: Int) {
        let id = nextID
        nextID += 1
        running.append(Running(id: id, scope: index, key: key(index)))
        switch scopes[index].kind {
        case .during(nil):
            break
        case let .during(ends?):
            schedule(.complete(effect: id), after: ends)
        case let .after(delay, input):
            schedule(.send(effect: id, input: input), after: delay)
            schedule(.complete(effect: id), after: delay)
        }
    }

    private mutating func process(_ input: Int) {
        let from = state
        guard let (to, effects) = testCase.transition(state: from, input: input) else {
            log.append(.reply(.failure(input, from)))
            return
        }
        var exits: [String] = []
        var entries: [Int] = []
        for (index, scope) in scopes.enumerated() {
            let wasIn = scope.contains(from)
            let isIn = scope.contains(to)
            let restarts = wasIn && isIn && scope.restarts(from: from, to: to)
            if wasIn && (!isIn || restarts) { exits.append(key(index)) }
            if isIn && (!wasIn || restarts) { entries.append(index) }
        }
        for key in exits {
            for effect in running where effect.key == key {
                log.append(.exited(id: effect.id, key: key, by: input))
            }
            running.removeAll { $0.key == key }
        }
        state = to
        log.append(.state(to))
        log.append(.reply(.success(input, from, to)))
        for _ in 0..<effects {
            log.append(.started(id: nextID, key: nil, by: input))
            nextID += 1
        }
        for index in entries {
            log.append(.started(id: nextID, key: key(index), by: input))
            start(index)
        }
    }

    private mutating func schedule(_ action: Action, after delay: Int) {
        timeline.append((now + delay, nextSequence, action))
        nextSequence += 1
    }

    private mutating func advance(by ticks: Int) {
        let limit = now + ticks
        while let index = timeline.indices.min(by: {
            (timeline[$0].due, timeline[$0].sequence) < (timeline[$1].due, timeline[$1].sequence)
        }), timeline[index].due <= limit {
            let (due, _, action) = timeline.remove(at: index)
            now = due
            switch action {
            case let .send(effect, input):
                if running.contains(where: { $0.id == effect }) { process(input) }
            case let .complete(effect):
                if let position = running.firstIndex(where: { $0.id == effect }) {
                    log.append(.ended(id: effect, key: running[position].key))
                    running.remove(at: position)
                }
            }
        }
        now = limit
    }
}
