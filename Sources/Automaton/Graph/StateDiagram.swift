// One level of a composite diagram with its types erased: a state graph's names rendered, its edges
// labelled, and the child diagrams nested in its states. `CompositeStateGraph` builds it and draws it
// (`CompositeStateGraphExport.swift`); children of any State and Input types nest in it because they
// are rendered to text first.

/// A state graph ready to draw, with its `State` and `Input` types erased: the names of its states,
/// its labelled transitions, and the child diagrams nested in each of its states, which may hold
/// children of their own.
///
/// ``CompositeStateGraph`` makes one for its parent graph and one for each child it nests; read it
/// through ``CompositeStateGraph/children(of:)`` and ``CompositeStateGraph/diagram``. It is a value:
/// immutable, `Sendable`, and holding no reference to a graph, a mapping or a naming closure. Its
/// states are in the order of the graph it was made from (`StateGraph.states`), and the children of
/// a state in the order they were nested.
public struct StateDiagram: Sendable, Hashable {
    /// One transition, by the positions of its states in `stateNames`.
    struct Edge: Sendable, Hashable {
        let from: Int
        let to: Int
        let label: String
        let startsEffect: Bool
        /// Whether it is an `after` edge (`StateGraph.Edge.delay`), drawn dashed in DOT.
        let isDelayed: Bool
    }

    /// The name shown for this diagram as a child (`"downloads[*]"`), or `nil` for the top-level
    /// diagram and for a child nested without a name.
    public let name: String?
    /// The name shown for each state, in the order of the graph's `states`; the first is the initial
    /// state.
    public let stateNames: [String]
    /// Each state's identifier at this level (see `DiagramIdentifiers`); exports prefix them with the
    /// host's.
    let identifiers: [String]
    /// The state-scoped effects each state runs, as shown (`during 0`), in the order of `stateNames`.
    let scopedEffects: [[String]]
    /// The transitions, in the order of the graph's `edges`.
    let edges: [Edge]
    /// The child diagrams nested in each state, in the order of `stateNames`, each list in the order
    /// nested.
    var regions: [[StateDiagram]]

    init<State: Hashable & Sendable, Input: Sendable>(
        _ graph: StateGraph<State, Input>,
        stateName: (State) -> String,
        inputName: (Input) -> String
    ) {
        let shown = DiagramNames(graph, stateName: stateName, inputName: inputName)
        name = nil
        stateNames = shown.states
        identifiers = shown.identifiers
        edges = graph.edges.indices.map { index in
            let edge = graph.edges[index]
            return Edge(
                from: edge.fromIndex, to: edge.toIndex, label: shown.edgeLabels[index],
                startsEffect: shown.edgeStartsEffect[index], isDelayed: edge.delay != nil)
        }
        scopedEffects = shown.scopedEffects
        regions = Array(repeating: [], count: shown.states.count)
    }

    private init(name: String?, copying diagram: StateDiagram) {
        self.name = name
        stateNames = diagram.stateNames
        identifiers = diagram.identifiers
        scopedEffects = diagram.scopedEffects
        edges = diagram.edges
        regions = diagram.regions
    }

    /// The same diagram under another name.
    func named(_ name: String?) -> StateDiagram {
        StateDiagram(name: name, copying: self)
    }

    /// The number of transitions at this level (children's not included).
    public var edgeCount: Int { edges.count }

    /// The child diagrams nested in the state at `index` (a position in `stateNames`), in the order
    /// they were nested; none if the state hosts no child.
    public func children(ofStateAt index: Int) -> [StateDiagram] {
        regions[index]
    }

    /// The number of states drawn at each level: this diagram's first, then all its children's, then
    /// all their children's, and so on. A child nested in several states is drawn, and counted, once
    /// in each. No level is empty; there is always the first.
    public var stateCountsByLevel: [Int] {
        countsByLevel { $0.stateNames.count }
    }

    /// The number of transitions drawn at each level, counted as `stateCountsByLevel` counts states
    /// (the arrow from a start point to an initial state is not a transition).
    public var edgeCountsByLevel: [Int] {
        countsByLevel { $0.edges.count }
    }

    private func countsByLevel(_ count: (StateDiagram) -> Int) -> [Int] {
        var counts = [count(self)]
        for child in regions.joined() {
            for (depth, childCount) in child.countsByLevel(count).enumerated() {
                if counts.count == depth + 1 { counts.append(0) }
                counts[depth + 1] += childCount
            }
        }
        return counts
    }
}
