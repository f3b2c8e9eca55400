// The graph of a machine: every state reachable from an initial state through a finite alphabet of
// inputs, and every transition between them, found by calling the mapping (see
// `StateGraphExploration.swift`). Analysis, paths and exports live beside it, one concern per file.

/// The states an automaton can reach from an initial state through a finite alphabet of inputs, and
/// its transitions: what XState calls an adjacency map, found by probing the mapping.
///
/// Made by exploration (`StateGraph(from:inputs:mapping:)`, `StateGraph(from:inputs:table:)` or
/// `automaton.graph(inputs:)`): a breadth-first search that calls the mapping once per (state, input)
/// pair and never starts an effect. Everything in it is in a stable order, so that exports and paths
/// are deterministic:
///
/// - `states` in order of discovery: the initial state first, then breadth first, each state's
///   successors in alphabet order;
/// - `edges` grouped by from-state in the order of `states`, each group in alphabet order;
/// - the inputs a state rejects, in alphabet order.
///
/// The graph is a value: immutable, `Sendable`, and holding no reference to the mapping or automaton.
/// The alphabet may hold any inputs, sample values of inputs with associated values included; the
/// graph tells them apart by their position in `inputs`, so `Input` need not be `Equatable`.
public struct StateGraph<State: Hashable & Sendable, Input: Sendable>: Sendable {
    /// One transition: in `from`, `input` leads to `to`, and may start (or cancel) effects.
    ///
    /// An edge with a `delay` is an `after` declaration's (`MappingRow.after(_:in:send:on:)`): the
    /// machine takes it by itself, `delay` after entering the declaration's states, sending `input`,
    /// which need not be in the alphabet.
    ///
    /// `Equatable` when `Input` is, `Hashable` when `Input` is: two edges are equal when every field
    /// is (the states, the input, their positions, and the effect, its key, the cancelled keys and the
    /// child an input is forwarded to).
    public struct Edge: Sendable {
        /// The state the transition leaves.
        public let from: State
        /// The input that makes it.
        public let input: Input
        /// The state it leads to (possibly `from` itself).
        public let to: State
        /// The position of `from` in `states`.
        public let fromIndex: Int
        /// The position of `input` in the alphabet, `inputs`; `-1` for an edge with a `delay`, whose
        /// input is the `after` declaration's, not sent from the alphabet.
        public let inputIndex: Int
        /// The position of `to` in `states`.
        public let toIndex: Int
        /// Whether the transition starts an effect (the mapping returned a producer other than
        /// `.empty`). The effect itself was never started.
        public let startsEffect: Bool
        /// The key of the effect it starts, when that effect is keyed (`producer.keyed(key)`).
        public let effectKey: EffectKey?
        /// The keys whose effects the transition cancels (a `.cancel(keys)` row), in row order.
        public let cancelledKeys: [EffectKey]
        /// The key of the child automaton the transition forwards an input to
        /// (`ChildAutomata.send(_:to:)`, `ChildAutomaton.send(_:)`), if it does.
        public let forwardedTo: EffectKey?
        /// The effects the transition starts, in row order: each one's key, or `nil` for an un-keyed
        /// one. One entry (or none) for a row of one effect; one per started element of an
        /// `.effects(...)` row (`SignalProducer.effects(_:)`), whose first keyed element's key is also
        /// `effectKey`.
        public let effects: [EffectKey?]
        /// The keys of the child automata the transition forwards inputs to, in row order: `forwardedTo`
        /// and, for an `.effects(...)` row, the other elements' children.
        public let forwards: [EffectKey]
        /// For the edge of an `after` declaration (`MappingRow.after(_:in:send:on:)`), its delay: the
        /// machine takes the edge by itself that long after entering the declaration's states. `nil`
        /// for an edge taken by sending an input of the alphabet.
        public let delay: Duration?

        /// An edge; exploration makes them. `effects` and `forwards` default to what `startsEffect`,
        /// `effectKey` and `forwardedTo` tell of a row of one effect; `delay` to `nil`, an ordinary
        /// edge.
        public init(
            from: State, input: Input, to: State, fromIndex: Int, inputIndex: Int, toIndex: Int,
            startsEffect: Bool, effectKey: EffectKey? = nil, cancelledKeys: [EffectKey] = [],
            forwardedTo: EffectKey? = nil, effects: [EffectKey?]? = nil, forwards: [EffectKey]? = nil,
            delay: Duration? = nil
        ) {
            self.delay = delay
            self.effects = effects ?? (startsEffect ? [effectKey] : [])
            self.forwards = forwards ?? (forwardedTo.map { [$0] } ?? [])
            self.from = from
            self.input = input
            self.to = to
            self.fromIndex = fromIndex
            self.inputIndex = inputIndex
            self.toIndex = toIndex
            self.startsEffect = startsEffect
            self.effectKey = effectKey
            self.cancelledKeys = cancelledKeys
            self.forwardedTo = forwardedTo
        }
    }

    /// A sequence of transitions from `start`, each edge leaving the state the previous one reached.
    ///
    /// `Equatable` when `Input` is, `Hashable` when `Input` is: two paths are equal when they have the
    /// same start and equal edges, in the same order.
    public struct Path: Sendable {
        /// The state the path starts in.
        public let start: State
        /// The transitions, in order.
        public let edges: [Edge]

        /// A path from `start` through `edges`.
        public init(start: State, edges: [Edge]) {
            self.start = start
            self.edges = edges
        }

        /// The inputs to send, in order; for an edge with a `delay`, the input its `after` declaration
        /// sends by itself (a test advances the clock by the delay instead).
        public var inputs: [Input] { edges.map(\.input) }

        /// The state the path ends in.
        public var end: State { edges.last?.to ?? start }
    }

    /// The alphabet explored, in the order given.
    public let inputs: [Input]
    /// Every state found, in order of discovery; the first is the initial state.
    public let states: [State]
    /// Every transition between the states found, grouped by from-state (in the order of `states`),
    /// each group in alphabet order, then the edges of the table's `after` declarations (those with a
    /// `delay`) in table order. Transitions to states past the limit are left out.
    public let edges: [Edge]
    /// The most states exploration would record.
    public let stateLimit: Int
    /// Whether exploration found more states than `stateLimit`: then `states` holds the first
    /// `stateLimit` found, and the transitions leading out of them are left out, so that findings
    /// describe only the explored part.
    public let reachedStateLimit: Bool

    /// The position of each state in `states`.
    let stateIndices: [State: Int]
    /// The keys of the state-scoped effects (`.during`) each state runs, in table order.
    let scopedEffectKeys: [[EffectKey]]
    /// The keys of the table's state-scoped declarations (`.during` and `.after`); empty for a graph
    /// explored from a mapping or an automaton.
    let scopeKeys: Set<EffectKey>
    /// The edges of each state, as a range of `edges`.
    let edgeRanges: [Range<Int>]
    /// The inputs each state rejects, as positions in `inputs`.
    let rejections: [[Int]]
    /// The edge by which each state was first reached (`nil` for the initial state): the last step
    /// of a shortest path to it.
    let discoveringEdges: [Int?]
    /// The states with a transition to a state past the limit, which was left out.
    let statesWithOmittedEdges: Set<Int>

    /// The initial state: where exploration started.
    public var initialState: State { states[0] }

    /// The position of `state` in `states`, or `nil` if exploration did not find it.
    public func index(of state: State) -> Int? {
        stateIndices[state]
    }

    /// Whether exploration found `state`.
    public func contains(_ state: State) -> Bool {
        stateIndices[state] != nil
    }

    /// The transitions out of `state`, in alphabet order; none if it was not found.
    public func edges(from state: State) -> ArraySlice<Edge> {
        guard let index = stateIndices[state] else { return [] }
        return edges[edgeRanges[index]]
    }

    /// The keys of the state-scoped effects (`.during` declarations of the table explored) that run
    /// while the machine is in `state`, in table order: the declaration's key, or its own
    /// (`StateScopeKey`, `during 0`). None if the state was not found, runs none, or the graph was
    /// explored from a mapping or an automaton (only a table tells its scopes).
    public func scopedEffects(in state: State) -> [EffectKey] {
        guard let index = stateIndices[state] else { return [] }
        return scopedEffectKeys[index]
    }

    /// The keys of the state-scoped effects the state at `stateIndex` runs: see `scopedEffects(in:)`.
    public func scopedEffects(atIndex stateIndex: Int) -> [EffectKey] {
        scopedEffectKeys[stateIndex]
    }

    /// The inputs of the alphabet that `state` rejects (the mapping returned `nil`), in alphabet
    /// order; none if it was not found.
    public func rejectedInputs(in state: State) -> [Input] {
        guard let index = stateIndices[state] else { return [] }
        return rejections[index].map { inputs[$0] }
    }

    /// The positions in `inputs` of the inputs the state at `stateIndex` rejects, in alphabet order.
    public func rejectedInputIndices(fromIndex stateIndex: Int) -> [Int] {
        rejections[stateIndex]
    }

    /// The transition `input` (by its position in `inputs`) makes from the state at `stateIndex`, or
    /// `nil` if that state rejects it (or its transition was left out at the limit). Edges with a
    /// `delay` are not found here.
    public func edge(fromIndex stateIndex: Int, inputIndex: Int) -> Edge? {
        edges[edgeRanges[stateIndex]].first { $0.inputIndex == inputIndex && $0.delay == nil }
    }
}

// Synthesized: every field is compared (and hashed). `State` is always `Hashable`; `EffectKey` is.
extension StateGraph.Edge: Equatable where Input: Equatable {}
extension StateGraph.Edge: Hashable where Input: Hashable {}
extension StateGraph.Path: Equatable where Input: Equatable {}
extension StateGraph.Path: Hashable where Input: Hashable {}
