// Exploration: a breadth-first search that probes the mapping with every input of the alphabet in
// every state it finds. It calls the mapping only: the producers the mapping returns are looked at
// (empty or not, keyed or cancelling) and dropped, never started, which is safe because effects are
// cold.

extension StateGraph {
    /// The state limit exploration uses unless told otherwise: 100,000 states.
    public static var defaultStateLimit: Int { 100_000 }

    /// The graph of the mapping `mapping` from `initialState` through the alphabet `inputs`.
    ///
    /// Breadth first: the initial state, then the states it leads to in alphabet order, and so on.
    /// The mapping is called once for each state found and each input of the alphabet, on the calling
    /// thread, in that order; the effects it returns are never started. So the mapping must be pure
    /// (as the automaton already requires: it calls it exactly once per input): a mapping with side
    /// effects would perform them during exploration.
    ///
    /// - Parameters:
    ///   - initialState: the state exploration starts from, the graph's `initialState`.
    ///   - inputs: the alphabet, in the order edges and exports list them. It may hold sample values of
    ///     inputs with associated values (`.opened(session: "s1")`); inputs are told apart by position.
    ///   - stateLimit: the most states to record (at least 1). When exploration finds more, it records
    ///     the first `stateLimit`, leaves out the transitions to the others, explores the recorded
    ///     ones fully, and sets `reachedStateLimit`. Time and memory are proportional to
    ///     `min(reachable states, stateLimit) × inputs.count`.
    ///   - mapping: the next state and the effect, or `nil` if the input does not apply; called once
    ///     per recorded state and input, on the calling thread. The effects are never started.
    public init(
        from initialState: State,
        inputs: [Input],
        stateLimit: Int = defaultStateLimit,
        mapping: (State, Input) -> (State, SignalProducer<Input, Never>)?
    ) {
        self.init(exploringFrom: initialState, inputs: inputs, stateLimit: stateLimit) { state, input in
            mapping(state, input).map { ($0.0, $0.1) }
        }
    }

    /// The graph of the effect-free mapping `mapping` from `initialState` through the alphabet
    /// `inputs`. See `init(from:inputs:stateLimit:mapping:)` for the order, the purity the mapping
    /// needs, and the limit.
    public init(
        from initialState: State,
        inputs: [Input],
        stateLimit: Int = defaultStateLimit,
        mapping: (State, Input) -> State?
    ) {
        self.init(exploringFrom: initialState, inputs: inputs, stateLimit: stateLimit) { state, input in
            mapping(state, input).map { ($0, nil) }
        }
    }

    /// The graph of the mapping table `table` (rows tried in order, the first that applies wins, as
    /// in `Automaton(state:table:)`) from `initialState` through the alphabet `inputs`. The rows'
    /// closures are called as during exploration of a mapping: see
    /// `init(from:inputs:stateLimit:mapping:)`. Write the rows in place (`table: [ ... ]`), as for
    /// the automaton, or pass `MappingTable(rows)` for an array of rows.
    ///
    /// The table's state-scoped declarations are in the graph: each state's `.during` effects in
    /// `scopedEffects(in:)`, and, from each state in an `.after` declaration's states, an edge with
    /// the declaration's `delay` to where the table's rows lead for the input it sends (none where no
    /// row applies), after the state's alphabet edges, in table order. Entering and leaving scopes
    /// shows on the edges as their effects and cancellations, as the automaton runs them.
    public init(
        from initialState: State,
        inputs: [Input],
        stateLimit: Int = defaultStateLimit,
        table: MappingTable<State, Input>
    ) {
        let transition = table.transition
        self.init(exploringFrom: initialState, inputs: inputs, stateLimit: stateLimit, scopes: table.scopes) {
            MappingKeyIndexing.apply(transition, $0, $1)
        }
    }

    /// The breadth-first search. `transition` answers as the engine's mapping does: the next state and
    /// the effect, `nil` for none. `scopes`, a table's, adds each state's `.during` keys and the edges
    /// of its `.after` declarations (probed with `transition` and the input they send).
    init(
        exploringFrom initialState: State,
        inputs: [Input],
        stateLimit: Int,
        scopes: StateScopes<State, Input>? = nil,
        transition: (State, Input) -> (State, SignalProducer<Input, Never>?)?
    ) {
        precondition(
            stateLimit >= 1, "A state graph needs room for at least its initial state; stateLimit is \(stateLimit).")
        var states = [initialState]
        var stateIndices = [initialState: 0]
        var edges: [Edge] = []
        var edgeRanges: [Range<Int>] = []
        var rejected: [[Int]] = []
        var discoveringEdges: [Int?] = [nil]
        var statesWithOmittedEdges = Set<Int>()
        var reachedStateLimit = false
        var scopedEffectKeys: [[EffectKey]] = []
        // The probes of each state: the alphabet's inputs, then the `after` declarations' (with a delay).
        let delayed = (scopes?.scopes ?? []).compactMap { scope in
            scope.delayed.map { (contains: scope.contains, delay: $0.delay, input: $0.input) }
        }

        var next = 0
        while next < states.count {
            let from = states[next]
            let firstEdge = edges.count
            var rejectedHere: [Int] = []
            var probes = inputs.enumerated().map { (inputIndex: $0.offset, input: $0.element, delay: Duration?.none) }
            for scope in delayed where scope.contains(from) {
                probes.append((inputIndex: -1, input: scope.input, delay: scope.delay))
            }
            for (inputIndex, input, delay) in probes {
                guard let (to, producer) = transition(from, input) else {
                    if delay == nil { rejectedHere.append(inputIndex) }
                    continue
                }
                let toIndex: Int
                if let known = stateIndices[to] {
                    toIndex = known
                } else if states.count < stateLimit {
                    toIndex = states.count
                    states.append(to)
                    stateIndices[to] = toIndex
                    discoveringEdges.append(edges.count)
                } else {
                    reachedStateLimit = true
                    statesWithOmittedEdges.insert(next)
                    continue
                }
                let effect = EdgeEffect(producer)
                edges.append(
                    Edge(
                        from: from, input: input, to: to, fromIndex: next, inputIndex: inputIndex, toIndex: toIndex,
                        startsEffect: effect.starts, effectKey: effect.key, cancelledKeys: effect.cancelledKeys,
                        forwardedTo: effect.forwardedTo, effects: effect.effects, forwards: effect.forwards,
                        delay: delay
                    ))
            }
            scopedEffectKeys.append(
                scopes.map { scopes in
                    scopes.scopes.indices.compactMap { position in
                        let scope = scopes.scopes[position]
                        return scope.delayed == nil && scope.contains(from) ? scopes.keys[position] : nil
                    }
                } ?? [])
            edgeRanges.append(firstEdge..<edges.count)
            rejected.append(rejectedHere)
            next += 1
        }

        self.inputs = inputs
        self.states = states
        self.edges = edges
        self.stateLimit = stateLimit
        self.reachedStateLimit = reachedStateLimit
        self.stateIndices = stateIndices
        self.edgeRanges = edgeRanges
        self.scopedEffectKeys = scopedEffectKeys
        self.scopeKeys = Set(scopes?.keys ?? [])
        self.rejections = rejected
        self.discoveringEdges = discoveringEdges
        self.statesWithOmittedEdges = statesWithOmittedEdges
    }
}

extension StateGraph where Input: CaseIterable {
    /// The graph of `mapping` from `initialState` through every input, `Input.allCases`. See
    /// `init(from:inputs:stateLimit:mapping:)`.
    public init(
        from initialState: State,
        stateLimit: Int = defaultStateLimit,
        mapping: (State, Input) -> (State, SignalProducer<Input, Never>)?
    ) {
        self.init(from: initialState, inputs: Array(Input.allCases), stateLimit: stateLimit, mapping: mapping)
    }

    /// The graph of the effect-free `mapping` from `initialState` through every input,
    /// `Input.allCases`. See `init(from:inputs:stateLimit:mapping:)`.
    public init(from initialState: State, stateLimit: Int = defaultStateLimit, mapping: (State, Input) -> State?) {
        self.init(from: initialState, inputs: Array(Input.allCases), stateLimit: stateLimit, mapping: mapping)
    }

    /// The graph of the mapping table `table` from `initialState` through every input,
    /// `Input.allCases`. See `init(from:inputs:stateLimit:table:)`.
    public init(from initialState: State, stateLimit: Int = defaultStateLimit, table: MappingTable<State, Input>) {
        self.init(from: initialState, inputs: Array(Input.allCases), stateLimit: stateLimit, table: table)
    }
}

/// What a transition does about effects, read off the producer the mapping returned, which is not
/// started: every element of an `.effects(...)` row, in row order.
struct EdgeEffect {
    var starts: Bool { !effects.isEmpty }
    /// The key of the first keyed effect started.
    var key: EffectKey? { effects.lazy.compactMap { $0 }.first }
    var cancelledKeys: [EffectKey] = []
    /// The first child forwarded to.
    var forwardedTo: EffectKey? { forwards.first }
    var effects: [EffectKey?] = []
    var forwards: [EffectKey] = []

    init<Value: Sendable>(_ producer: SignalProducer<Value, Never>?) {
        guard let producer else { return }
        add(producer)
    }

    private mutating func add<Value: Sendable>(_ producer: SignalProducer<Value, Never>) {
        switch producer.effectDirective {
        case let .keyed(key, _)?:
            effects.append(key)
            if let target = producer.directiveBox?.forwardKey { forwards.append(target) }  // a keyed answered forward
        case let .cancel(keys)?, let .exit(keys)?:
            if !producer.isEmpty { effects.append(nil) }
            cancelledKeys += keys
        case let .afterReply(_, target)?:  // an input forwarded to a child automaton: no effect of this machine
            if let target { forwards.append(target) }
        case let .answering(target)?:  // forwarded, answered by an effect of this machine
            effects.append(nil)
            forwards.append(target)
        case let .several(list)?:
            for element in unsafeDowncast(list, to: EffectList<Value>.self).elements { add(element) }
        case nil:
            if !producer.isEmpty { effects.append(nil) }
        }
    }
}

extension Automaton where State: Hashable {
    /// The graph of this automaton's mapping from its current state (`state.value`, read once, now)
    /// through the alphabet `inputs`.
    ///
    /// The automaton keeps its mapping, so an automaton built from a table is explored without the
    /// table. Exploration calls the mapping on the calling thread, beside any input the automaton is
    /// processing, and starts no effect; it neither sends inputs nor changes the automaton. The
    /// mapping must be pure: see `StateGraph.init(from:inputs:stateLimit:mapping:)` for the order of
    /// calls and the limit.
    public func graph(inputs: [Input], stateLimit: Int = StateGraph<State, Input>.defaultStateLimit) -> StateGraph<
        State, Input
    > {
        let mapping = transition
        return StateGraph(exploringFrom: state.value, inputs: inputs, stateLimit: stateLimit) {
            MappingKeyIndexing.apply(mapping, $0, $1)
        }
    }
}

extension Automaton where State: Hashable, Input: CaseIterable {
    /// The graph of this automaton's mapping from its current state through every input,
    /// `Input.allCases`. See `graph(inputs:stateLimit:)`.
    public func graph(stateLimit: Int = StateGraph<State, Input>.defaultStateLimit) -> StateGraph<State, Input> {
        graph(inputs: Array(Input.allCases), stateLimit: stateLimit)
    }
}
