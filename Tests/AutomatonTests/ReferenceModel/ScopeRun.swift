import Automaton
import Signals

/// How many effects of each scope are running, counted by the effects themselves.
private final class ScopeCounters: Sendable {
    private let counts: Locked<[Int]>

    init(count: Int) {
        counts = Locked(Array(repeating: 0, count: count))
    }

    func add(_ delta: Int, to scope: Int) {
        counts.withCriticalRegion { $0[scope] += delta }
    }

    var values: [Int] { counts.withCriticalRegion { $0 } }
}

/// The real automaton of a scope case, driven step by step.
struct ScopeRun {
    let testCase: ScopeCase
    let automaton: Automaton<Int, Int>
    let scheduler: TestScheduler
    private let counters: ScopeCounters
    private let recorded: Recording<ScopeLogEntry>

    init(_ testCase: ScopeCase) {
        self.testCase = testCase
        let scheduler = TestScheduler()
        let scopes = testCase.scopes
        let counters = ScopeCounters(count: scopes.count)
        var scopeIndex = 0
        var rows: [MappingRow<Int, Int>] = []
        for entry in testCase.table {
            switch entry {
            case let .row(input, from, to, effects):
                let row = Self.row(input: input, from: from, to: to)
                // Effects that run until they are cancelled (never, under `.merge`).
                let pending = SignalProducer<Int, Never> { _, _ in }
                switch effects {
                case 0: rows.append(row)
                case 1: rows.append(row | pending)
                default: rows.append(row | .effects(Array(repeating: pending, count: effects)))
                }
            case let .scope(declaration):
                rows.append(Self.row(declaration, index: scopeIndex, counters: counters, scheduler: scheduler))
                scopeIndex += 1
            }
        }
        self.scheduler = scheduler
        self.counters = counters
        automaton = Automaton(state: testCase.initialState, table: MappingTable(rows))
        let recorded = Recording<ScopeLogEntry>()
        automaton.state.signal.observeValues { recorded.append(.state($0)) }
        automaton.replies.observeValues { recorded.append(.reply($0)) }
        automaton.effectEvents.observeValues { recorded.append(ScopeLogEntry($0)) }
        self.recorded = recorded
    }

    private static func row(input: InputPattern, from: FromPattern, to: Int) -> MappingRow<Int, Int> {
        let transition: Transition<Int> =
            switch from {
            case let .value(value): value => to
            case let .predicate(predicate): predicate.closure => to
            case let .array(values): values => to
            case .any: any => to
            }
        switch input {
        case let .value(value): return value | transition
        case let .predicate(predicate): return predicate.closure | transition
        case .any: return any | transition
        }
    }

    private static func row(
        _ declaration: ScopeDeclaration, index: Int, counters: ScopeCounters, scheduler: TestScheduler
    ) -> MappingRow<Int, Int> {
        let states = declaration.states
        let contains: @Sendable (Int) -> Bool = { states.matches($0) }
        switch declaration.kind {
        case let .after(delay, input):
            return .after(.seconds(delay), in: contains, send: input, on: scheduler, restart: declaration.restart)
        case let .during(ends):
            let effect: @Sendable (Int) -> SignalProducer<Int, Never> = { _ in
                SignalProducer { observer, lifetime in
                    counters.add(1, to: index)
                    lifetime.observeEnded { counters.add(-1, to: index) }
                    if let ends {
                        lifetime += scheduler.schedule(after: .seconds(ends)) { observer.sendCompleted() }
                    }
                }
            }
            if let sharedKey = declaration.sharedKey {
                return .during(
                    contains, key: SharedScopeKey(number: sharedKey), policy: .merge, restart: declaration.restart,
                    effect)
            }
            return .during(contains, policy: declaration.policy, restart: declaration.restart, effect)
        }
    }

    /// Runs one step; the log so far.
    func perform(_ step: ScopeStep) -> [ScopeLogEntry] {
        switch step {
        case let .send(input): automaton.send(input)
        case let .advance(ticks): scheduler.advance(by: .seconds(ticks))
        }
        return recorded.values
    }

    /// How many effects of each scope run now, as the effects count themselves.
    var runningPerScope: [Int] { counters.values }
}

/// The invariants of state scopes, checked on a log after each step.
enum ScopeInvariants {
    /// The broken invariants of `log` (the whole log so far), the machine being in `state`, with
    /// `running` effects per scope (`nil`: not known, for the model).
    static func violations(
        of testCase: ScopeCase, log: [ScopeLogEntry], state: Int, running: [Int]?
    ) -> [String] {
        var problems: [String] = []
        let scopes = testCase.scopes
        // 1. A `.during` effect that never ends by itself runs exactly while the state is in its
        //    scope (own key), or only then (shared key: another scope's exit cancels it).
        if let running {
            for (index, scope) in scopes.enumerated() {
                guard case .during(nil) = scope.kind else { continue }
                let expected = scope.contains(state) ? 1 : 0
                let holds = scope.sharedKey == nil ? running[index] == expected : running[index] <= expected
                if !holds {
                    problems.append("scope \(index) runs \(running[index]) effects in state \(state)")
                }
            }
        }
        // 2. No end or exit of an effect that is not running; 3. started numbers increase; 4. each
        //    `.after` input is processed at most once per entry of its scope.
        let initial = UInt64(scopes.filter { $0.contains(testCase.initialState) }.count)
        var live = Set(0..<initial)
        var lastStarted: UInt64? = initial == 0 ? nil : initial - 1
        var afterInputsSinceEntry: [Int: Int] = [:]
        var keyOfAfterInput: [Int: String] = [:]
        for (index, scope) in scopes.enumerated() {
            if case let .after(_, input) = scope.kind { keyOfAfterInput[input] = scope.keyDescription(index: index) }
        }
        for entry in log {
            switch entry {
            case let .started(id, key, _):
                if let lastStarted, id <= lastStarted { problems.append("effect \(id) started after \(lastStarted)") }
                lastStarted = id
                live.insert(id)
                if let key, let input = keyOfAfterInput.first(where: { $0.value == key })?.key {
                    afterInputsSinceEntry[input] = 0
                }
            case let .ended(id, _), let .exited(id, _, _):
                if live.remove(id) == nil { problems.append("\(entry): the effect was not running") }
            case let .reply(reply):
                if keyOfAfterInput[reply.input] != nil {
                    afterInputsSinceEntry[reply.input, default: 0] += 1
                    if afterInputsSinceEntry[reply.input]! > 1 {
                        problems.append("\(entry): the delayed input came twice in one entry")
                    }
                }
            case .other:
                problems.append("unexpected effect event: \(entry)")
            case .state:
                break
            }
        }
        return problems
    }
}
