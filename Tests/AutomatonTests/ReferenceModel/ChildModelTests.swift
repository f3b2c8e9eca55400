import Automaton
import Foundation
import Signals
import Testing

// The reference model extended to a parent with one kind of children (issue 33): a plain fold over
// the outside inputs that predicts, in one list, the parent's replies, its children's replies and the
// parent's effect events, which the real automaton (a `ChildAutomata` kind) must show in that order.
// One thread, synchronous children: deterministic.

/// What a parent with children shows, in the order it happens.
enum ChildModelEntry: Equatable, CustomStringConvertible {
    /// A reply of the parent.
    case parent(Reply<Int, Int>)
    /// A reply of the child `id`.
    case child(Int, Reply<Int, Int>)
    /// An effect event of the parent (a child's start, replacement, removal or release).
    case effect(UInt64, key: EffectKey?, EffectEvent<Int>.Kind)

    var description: String {
        switch self {
        case let .parent(reply): return "parent \(reply)"
        case let .child(id, reply): return "child \(id) \(reply)"
        case let .effect(id, key, kind): return "effect \(id) [\(key.map { "\($0)" } ?? "-")] \(kind)"
        }
    }
}

/// A random parent whose rows start, address and remove children of one kind, and its child table.
struct ChildModelCase: CustomStringConvertible {
    enum Action: Equatable, CustomStringConvertible {
        case none
        /// `kids.start(id)` (`.latest`): the child's successful replies' states map to parent inputs.
        case start(Int)
        /// `kids.send(input, to: id)`.
        case forward(Int, to: Int)
        /// `kids.remove(id)`.
        case remove(Int)

        var description: String {
            switch self {
            case .none: return "none"
            case let .start(id): return "start(\(id))"
            case let .forward(input, id): return "send(\(input), to: \(id))"
            case let .remove(id): return "remove(\(id))"
            }
        }
    }

    struct Row: Equatable, CustomStringConvertible {
        let to: Int
        let action: Action

        var description: String { "\(to) | \(action)" }
    }

    static let parentStates = 3
    /// Outside inputs are 0..<4; 4 and 5 are what the children's replies map to.
    static let outsideInputs = 4
    static let parentInputs = 6
    static let childStates = 3
    static let childInputs = 2
    static let ids = 2

    let seed: UInt64
    let strategy: AutomatonStrategy
    /// `parentRows[state][input]`; `nil`: the input does not apply.
    let parentRows: [[Row?]]
    /// `childRows[state][input]`.
    let childRows: [[Int?]]
    /// The parent input a child's new state maps to, if any.
    let childMap: [Int?]
    let inputs: [Int]
    let releasesAtEnd: Bool

    init(seed: UInt64) {
        self.seed = seed
        var random = SeededGenerator(seed: seed)
        strategy = random.chance(50) ? .latest : .merge
        parentRows = (0..<Self.parentStates).map { _ in
            (0..<Self.parentInputs).map { input -> Row? in
                guard !random.chance(20) else { return nil }
                let to = random.int(in: 0..<Self.parentStates)
                let id = random.int(in: 0..<Self.ids)
                let roll = random.int(in: 0..<100)
                // Only outside inputs forward: a child's reply never leads to another forwarded input,
                // so no case loops.
                let action: Action
                switch (input < Self.outsideInputs, roll) {
                case (true, ..<20), (false, ..<30): action = .none
                case (true, ..<50), (false, ..<60): action = .start(id)
                case (true, ..<85): action = .forward(random.int(in: 0..<Self.childInputs), to: id)
                default: action = .remove(id)
                }
                return Row(to: to, action: action)
            }
        }
        childRows = (0..<Self.childStates).map { _ in
            (0..<Self.childInputs).map { _ in random.chance(25) ? nil : random.int(in: 0..<Self.childStates) }
        }
        childMap = (0..<Self.childStates).map { _ in
            random.chance(40) ? nil : random.int(in: Self.outsideInputs..<Self.parentInputs)
        }
        inputs = (0..<random.int(in: 6...24)).map { _ in random.int(in: 0..<Self.outsideInputs) }
        releasesAtEnd = random.chance(70)
    }

    /// A hand-written case.
    init(
        strategy: AutomatonStrategy, parentRows: [[Row?]], childRows: [[Int?]], childMap: [Int?], inputs: [Int],
        releasesAtEnd: Bool
    ) {
        (seed, self.strategy, self.parentRows, self.childRows) = (0, strategy, parentRows, childRows)
        (self.childMap, self.inputs, self.releasesAtEnd) = (childMap, inputs, releasesAtEnd)
    }

    var description: String {
        "seed \(String(seed, radix: 16)), \(strategy), parent rows \(parentRows), child rows \(childRows), "
            + "child map \(childMap), inputs \(inputs), release at end \(releasesAtEnd)"
    }

    static func key(_ id: Int) -> EffectKey { EffectKey(ChildKey("kids", id)) }
}

/// What one run shows: the entries, then the running children (ids in start order, and states) before
/// the ending.
struct ChildModelOutcome: Equatable {
    var entries: [ChildModelEntry] = []
    var runningIDs: [Int] = []
    var childStates: [Int?] = []
    var finalState = 0
}

/// What the random cases exercised.
struct ChildModelCoverage {
    var starts = 0
    var replacements = 0
    var removals = 0
    var forwardsReachingAChild = 0
    var forwardsToNoChild = 0
    var inputsFromChildren = 0
    var releasedChildren = 0
}

/// The model: one FIFO queue of (input, origin effect); an input from an effect cancelled meanwhile is
/// skipped. A start (keyed `.latest`) cancels the running child of its id before the reply
/// (`replaced`), and starts after it; a remove (`.cancel`) cancels it before the reply; a forward
/// sends after the reply, and the idle child processes at once: its reply, then its mapped input
/// queued behind. A release cancels the live children in effect-number order.
struct ChildModel {
    let testCase: ChildModelCase
    private(set) var outcome = ChildModelOutcome()
    private(set) var coverage = ChildModelCoverage()
    private var state = 0
    /// The running children by id: their effect's number and their state.
    private var running: [Int: (effect: UInt64, state: Int)] = [:]
    private var cancelled: Set<UInt64> = []
    private var nextEffect: UInt64 = 0
    private var queue: [(input: Int, origin: UInt64?)] = []
    private var isProcessing = false

    static func run(_ testCase: ChildModelCase) -> (ChildModelOutcome, ChildModelCoverage) {
        var model = ChildModel(testCase: testCase)
        for input in testCase.inputs { model.send(input, from: nil) }
        let live = model.running.sorted { $0.value.effect < $1.value.effect }
        model.outcome.runningIDs = live.map(\.key)
        model.outcome.childStates = (0..<ChildModelCase.ids).map { model.running[$0]?.state }
        model.outcome.finalState = model.state
        if testCase.releasesAtEnd {
            for (id, child) in live {
                model.outcome.entries.append(.effect(child.effect, key: ChildModelCase.key(id), .cancelled(.released)))
                model.coverage.releasedChildren += 1
            }
        }
        return (model.outcome, model.coverage)
    }

    private mutating func send(_ input: Int, from origin: UInt64?) {
        queue.append((input, origin))
        guard !isProcessing else { return }
        isProcessing = true
        while !queue.isEmpty {
            let (input, origin) = queue.removeFirst()
            if let origin, cancelled.contains(origin) { continue }
            process(input)
        }
        isProcessing = false
    }

    private mutating func cancel(_ id: Int, _ cause: EffectCancellation<Int>) {
        guard let child = running.removeValue(forKey: id) else { return }
        cancelled.insert(child.effect)
        outcome.entries.append(.effect(child.effect, key: ChildModelCase.key(id), .cancelled(cause)))
    }

    private mutating func process(_ input: Int) {
        if input >= ChildModelCase.outsideInputs { coverage.inputsFromChildren += 1 }
        let from = state
        guard let row = testCase.parentRows[state][input] else {
            outcome.entries.append(.parent(.failure(input, from)))
            return
        }
        switch row.action {
        case let .start(id):
            if running[id] != nil { coverage.replacements += 1 }
            cancel(id, .replaced(by: input))
        case let .remove(id):
            if running[id] != nil { coverage.removals += 1 }
            cancel(id, .cancelled(by: input))
        case .none, .forward:
            break
        }
        state = row.to
        outcome.entries.append(.parent(.success(input, from, row.to)))
        switch row.action {
        case let .start(id):
            coverage.starts += 1
            let effect = nextEffect
            nextEffect += 1
            outcome.entries.append(.effect(effect, key: ChildModelCase.key(id), .started(by: input)))
            running[id] = (effect, 0)
        case let .forward(childInput, id):
            guard var child = running[id] else {
                coverage.forwardsToNoChild += 1
                return
            }
            coverage.forwardsReachingAChild += 1
            guard let to = testCase.childRows[child.state][childInput] else {
                outcome.entries.append(.child(id, .failure(childInput, child.state)))
                return
            }
            outcome.entries.append(.child(id, .success(childInput, child.state, to)))
            child.state = to
            running[id] = child
            if let mapped = testCase.childMap[to] { send(mapped, from: child.effect) }
        case .none, .remove:
            break
        }
    }
}

/// Runs `testCase` through a real parent automaton with a `ChildAutomata` kind.
func runChildAutomaton(_ testCase: ChildModelCase) -> ChildModelOutcome {
    let childRows = testCase.childRows
    let parentRows = testCase.parentRows
    let childMap = testCase.childMap
    let kids = ChildAutomata<Int, Int, Int>("kids") { _ in
        Automaton(state: 0) { state, input in childRows[state][input] }
    }
    var parent: Automaton<Int, Int>? = Automaton(
        state: 0,
        mapping: { state, input in
            guard let row = parentRows[state][input] else { return nil }
            switch row.action {
            case .none: return (row.to, .empty)
            case let .start(id): return (row.to, kids.start(id) { reply in reply.toState.flatMap { childMap[$0] } })
            case let .forward(childInput, id): return (row.to, kids.send(childInput, to: id))
            case let .remove(id): return (row.to, kids.remove(id))
            }
        },
        strategy: testCase.strategy)
    let entries = Locked<[ChildModelEntry]>([])
    let watch = kids.watchReplies(of: parent!) { key, reply in
        entries.withCriticalRegion { $0.append(.child(key.id, reply)) }
    }
    parent!.replies.observeValues { reply in entries.withCriticalRegion { $0.append(.parent(reply)) } }
    parent!.effectEvents.observeValues { event in
        entries.withCriticalRegion { $0.append(.effect(event.id, key: event.key, event.kind)) }
    }
    for input in testCase.inputs { parent!.send(input) }
    var outcome = ChildModelOutcome()
    outcome.runningIDs = kids.ids(in: parent!)
    outcome.childStates = (0..<ChildModelCase.ids).map { kids.state(of: $0, in: parent!) }
    outcome.finalState = parent!.state.value
    if testCase.releasesAtEnd {
        watch.cancel()
        parent = nil
    }
    outcome.entries = entries.withCriticalRegion { $0 }
    withExtendedLifetime((parent, watch)) {}
    return outcome
}

@Suite("A parent with one kind of children agrees with a reference model: replies, children's replies, effect events")
struct ChildModelTests {
    typealias Row = ChildModelCase.Row

    /// A forward to no child, a start, forwards whose replies come back, a replacement by the child's own
    /// reply, a removal, a release.
    @Test("the model against the contract's text")
    func handCase() {
        let row: [Row?] = [
            Row(to: 0, action: .start(0)), Row(to: 0, action: .forward(0, to: 0)), Row(to: 0, action: .remove(0)),
            Row(to: 0, action: .forward(1, to: 0)), Row(to: 1, action: .none), Row(to: 0, action: .start(0)),
        ]
        let testCase = ChildModelCase(
            strategy: .latest, parentRows: [row, row, row], childRows: [[1, nil], [2, nil], [2, nil]],
            childMap: [nil, 4, 5], inputs: [1, 0, 1, 3, 1, 0, 2, 0], releasesAtEnd: true)
        let key = ChildModelCase.key(0)
        var expected = ChildModelOutcome()
        expected.entries = [
            .parent(.success(1, 0, 0)),  // forwarded to no child: dropped
            .parent(.success(0, 0, 0)),
            .effect(0, key: key, .started(by: 0)),
            .parent(.success(1, 0, 0)),
            .child(0, .success(0, 0, 1)),  // after the parent's reply to the forwarding input
            .parent(.success(4, 0, 1)),  // the child's reply, mapped, after it
            .parent(.success(3, 1, 0)),
            .child(0, .failure(1, 1)),
            .parent(.success(1, 0, 0)),
            .child(0, .success(0, 1, 2)),
            .effect(0, key: key, .cancelled(.replaced(by: 5))),  // the child's own reply replaces it
            .parent(.success(5, 0, 0)),
            .effect(1, key: key, .started(by: 5)),
            .effect(1, key: key, .cancelled(.replaced(by: 0))),
            .parent(.success(0, 0, 0)),
            .effect(2, key: key, .started(by: 0)),
            .effect(2, key: key, .cancelled(.cancelled(by: 2))),
            .parent(.success(2, 0, 0)),
            .parent(.success(0, 0, 0)),
            .effect(3, key: key, .started(by: 0)),
            .effect(3, key: key, .cancelled(.released)),
        ]
        expected.runningIDs = [0]
        expected.childStates = [0, nil]
        let (model, _) = ChildModel.run(testCase)
        #expect(model == expected)
        #expect(runChildAutomaton(testCase) == expected)
    }

    @Test("400 random parent and child tables agree with the model")
    func randomCases() async {
        let count = ModelCheck.caseCount(default: 400)
        let summary = await onDedicatedThread { () -> (failures: [String], coverage: ChildModelCoverage) in
            var failures: [String] = []
            var total = ChildModelCoverage()
            for index in 0..<count {
                let testCase = ChildModelCase(seed: SeededGenerator.caseSeed(base: 0xC41D_0033, index: index))
                let (expected, coverage) = ChildModel.run(testCase)
                let actual = runChildAutomaton(testCase)
                if expected != actual, failures.count < 3 {
                    failures.append(Self.difference(expected, actual, testCase))
                }
                total.starts += coverage.starts
                total.replacements += coverage.replacements
                total.removals += coverage.removals
                total.forwardsReachingAChild += coverage.forwardsReachingAChild
                total.forwardsToNoChild += coverage.forwardsToNoChild
                total.inputsFromChildren += coverage.inputsFromChildren
                total.releasedChildren += coverage.releasedChildren
            }
            return (failures, total)
        }
        guard let summary else { return }
        for failure in summary.failures { Issue.record(Comment(rawValue: failure)) }
        let coverage = summary.coverage
        for (name, value) in [
            ("starts", coverage.starts), ("replacements", coverage.replacements), ("removals", coverage.removals),
            ("forwards reaching a child", coverage.forwardsReachingAChild),
            ("forwards to no child", coverage.forwardsToNoChild),
            ("inputs from children", coverage.inputsFromChildren), ("released children", coverage.releasedChildren),
        ] {
            #expect(value >= count / 4, "\(name): \(value) in \(count) cases")
        }
    }

    static func difference(_ expected: ChildModelOutcome, _ actual: ChildModelOutcome, _ testCase: ChildModelCase)
        -> String
    {
        let index =
            zip(expected.entries, actual.entries).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(expected.entries.count, actual.entries.count)
        let mine = index < expected.entries.count ? "\(expected.entries[index])" : "nothing"
        let theirs = index < actual.entries.count ? "\(actual.entries[index])" : "nothing"
        return """
            \(testCase)
            entry #\(index + 1): model \(mine), automaton \(theirs)
            model: running \(expected.runningIDs), children \(expected.childStates), state \(expected.finalState)
            automaton: running \(actual.runningIDs), children \(actual.childStates), state \(actual.finalState)
            model entries: \(expected.entries)
            automaton entries: \(actual.entries)
            """
    }
}
