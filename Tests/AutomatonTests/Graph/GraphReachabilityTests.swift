import Automaton
import Signals
import Testing

// Exploration against brute force: random mapping tables written with the real DSL, explored as a
// graph, and compared with a fixed-point reachability computed from the reference interpretation of
// the same rows (`Row.apply`, the reference model's).

@Suite("State graph exploration against brute-force reachability")
struct GraphReachabilityTests {
    static let caseCount = 300

    @Test(
        "random tables: states, edges, rejections, shortest paths, covering paths and the limit agree with a fixed point"
    )
    func randomTables() {
        var failures: [String] = []
        for index in 0..<Self.caseCount {
            let seed = SeededGenerator.caseSeed(base: 0x6_7261_7068, index: index)
            let table = RandomGraphTable.generate(seed: seed)
            let problems = table.check()
            if !problems.isEmpty {
                failures.append(
                    "seed 0x\(String(seed, radix: 16)):\n  " + problems.joined(separator: "\n  ") + "\n"
                        + table.description)
            }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }
}

/// A random table over the states `0..<stateCount` and inputs `0..<inputCount`.
struct RandomGraphTable: CustomStringConvertible {
    let stateCount: Int
    let inputCount: Int
    let initialState: Int
    let rows: [Row]

    static func generate(seed: UInt64) -> RandomGraphTable {
        var generator = SeededGenerator(seed: seed)
        let stateCount = generator.int(in: 1...25)
        let inputCount = generator.int(in: 1...5)
        var rows: [Row] = []
        for _ in 0..<generator.int(in: 0...25) {
            let isFunction = generator.chance(10)
            let input: InputPattern
            switch generator.int(in: 0..<100) {
            case _ where isFunction, 0..<60: input = .value(generator.int(in: 0..<inputCount))
            case 60..<85 where inputCount >= 2: input = .predicate(.random(below: inputCount, using: &generator))
            default: input = .any
            }
            let effect: EffectSpec? = generator.chance(50) ? nil : (generator.chance(50) ? .empty : .values([]))
            if isFunction {
                rows.append(
                    Row(input: input, target: .function(offset: generator.int(in: 0..<stateCount)), effect: effect))
                continue
            }
            let from: FromPattern
            switch generator.int(in: 0..<100) {
            case 0..<40: from = .value(generator.int(in: 0..<stateCount))
            case 40..<65 where stateCount >= 2: from = .predicate(.random(below: stateCount, using: &generator))
            case 40..<85:
                var states: [Int] = []
                for _ in 0..<generator.int(in: 1...4) {
                    states.append(generator.int(in: 0..<stateCount))
                }
                from = .array(states)
            default: from = .any
            }
            rows.append(
                Row(input: input, target: .state(from: from, to: generator.int(in: 0..<stateCount)), effect: effect))
        }
        return RandomGraphTable(
            stateCount: stateCount, inputCount: inputCount, initialState: generator.int(in: 0..<stateCount), rows: rows
        )
    }

    var description: String {
        (["states 0..<\(stateCount), inputs 0..<\(inputCount), initial \(initialState)"]
            + rows.map { "  " + $0.description(stateCount: stateCount) }).joined(separator: "\n")
    }

    /// The reference: the first row that applies, and whether it starts an effect.
    func transition(_ state: Int, _ input: Int) -> (to: Int, startsEffect: Bool)? {
        for row in rows {
            if let to = row.apply(state: state, input: input, stateCount: stateCount) {
                return (to, row.effect == .values([]))
            }
        }
        return nil
    }

    /// The rows written with the DSL, as a table.
    var tableRows: [MappingRow<Int, Int>] {
        rows.map { row in
            let base: MappingRow<Int, Int>
            switch (row.target, row.input) {
            case let (.function(offset), .value(input)):
                let stateCount = self.stateCount
                base = input | { ($0 + offset) % stateCount }
            case (.function, _):
                preconditionFailure(
                    "Internal inconsistency: the state-function form needs an input value, got \(row.input)")
            case let (.state(from, to), input):
                let transition = dslTransition(from: from, to: to)
                switch input {
                case let .value(input): base = input | transition
                case let .predicate(predicate): base = predicate.closure | transition
                case .any: base = any | transition
                }
            }
            switch row.effect {
            case nil: return base
            case .empty?: return base | .empty
            default: return base | SignalProducer<Int, Never>(values: [])
            }
        }
    }

    /// Everything that disagrees between the explored graph and the brute-force reference.
    func check() -> [String] {
        var problems: [String] = []
        let inputs = Array(0..<inputCount)
        let graph = StateGraph(from: initialState, inputs: inputs, table: MappingTable(tableRows))

        // Fixed point: R(k+1) = R(k) ∪ successors(R(k)); a state's distance is the first k it is in R(k).
        var distance = [initialState: 0]
        var round = 0
        while true {
            round += 1
            var added: [Int] = []
            for state in distance.keys {
                for input in inputs {
                    if let (to, _) = transition(state, input), distance[to] == nil, !added.contains(to) {
                        added.append(to)
                    }
                }
            }
            if added.isEmpty { break }
            for state in added { distance[state] = round }
        }

        if graph.states.first != initialState {
            problems.append("the first state is \(String(describing: graph.states.first))")
        }
        if Set(graph.states) != Set(distance.keys) || graph.states.count != distance.count {
            problems.append("states \(graph.states), reachable \(distance.keys.sorted())")
            return problems
        }
        if graph.reachedStateLimit { problems.append("reached the limit") }
        for (stateIndex, state) in graph.states.enumerated() {
            var rejected: [Int] = []
            for input in inputs {
                let edge = graph.edge(fromIndex: stateIndex, inputIndex: input)
                switch (transition(state, input), edge) {
                case let (expected?, edge?):
                    if edge.to != expected.to || edge.startsEffect != expected.startsEffect || edge.from != state
                        || edge.input != input
                    {
                        problems.append(
                            "\(state) \(input): edge to \(edge.to) effect \(edge.startsEffect), expected \(expected)")
                    }
                case (nil, nil): rejected.append(input)
                case let (expected, edge):
                    problems.append(
                        "\(state) \(input): edge \(String(describing: edge?.to)), expected \(String(describing: expected))"
                    )
                }
            }
            if graph.rejectedInputs(in: state) != rejected {
                problems.append("\(state) rejects \(graph.rejectedInputs(in: state)), expected \(rejected)")
            }
            guard let path = graph.shortestPath(to: state) else {
                problems.append("no shortest path to \(state)")
                continue
            }
            if path.edges.count != distance[state] || replay(path.inputs) != state {
                problems.append("shortest path to \(state): \(path.inputs), distance \(distance[state] ?? -1)")
            }
        }

        var taken = Set<[Int]>()
        for path in graph.edgeCoveringPaths {
            var state = initialState
            for edge in path.edges {
                guard edge.from == state, transition(state, edge.input)?.to == edge.to else {
                    problems.append("covering path \(path.inputs) leaves the machine at \(state)")
                    break
                }
                taken.insert([edge.from, edge.input])
                state = edge.to
            }
        }
        if taken != Set(graph.edges.map { [$0.from, $0.input] }) {
            problems.append("covering paths take \(taken.count) of \(graph.edges.count) transitions")
        }

        // With a limit: the first states found, the edges among them, and the flag.
        var generator = SeededGenerator(seed: UInt64(graph.states.count * 31 + graph.edges.count))
        let limit = generator.int(in: 1...graph.states.count)
        let limited = StateGraph(from: initialState, inputs: inputs, stateLimit: limit, table: MappingTable(tableRows))
        if limited.states != Array(graph.states.prefix(limit))
            || limited.reachedStateLimit != (limit < graph.states.count)
        {
            problems.append("limit \(limit): states \(limited.states), flag \(limited.reachedStateLimit)")
        }
        let kept = graph.edges.filter { $0.fromIndex < limit && $0.toIndex < limit }
        if limited.edges.map({ [$0.from, $0.input, $0.to] }) != kept.map({ [$0.from, $0.input, $0.to] }) {
            problems.append("limit \(limit): edges differ")
        }
        return problems
    }

    /// The state the reference reaches from the initial state through `inputs`, or `nil` if one is rejected.
    func replay(_ inputs: [Int]) -> Int? {
        var state = initialState
        for input in inputs {
            guard let (to, _) = transition(state, input) else { return nil }
            state = to
        }
        return state
    }
}
