// Findings about an explored graph: what cannot be reached, where the machine gets stuck, which
// inputs nothing accepts. Each is computed from the graph alone, without calling the mapping again.

extension StateGraph {
    /// The states no accepted input leads out of: every input of the alphabet is rejected there, or
    /// leads back to the same state, and no `after` edge leads out either. In order of discovery.
    ///
    /// A state whose transitions were left out at the state limit is not counted as a dead end.
    public var deadEndStates: [State] {
        states.indices.filter { index in
            !statesWithOmittedEdges.contains(index) && edges[edgeRanges[index]].allSatisfy { $0.toIndex == index }
        }.map { states[$0] }
    }

    /// The inputs of the alphabet that no state found accepts, in alphabet order.
    public var neverAcceptedInputs: [Input] {
        var accepted = [Bool](repeating: false, count: inputs.count)
        for edge in edges where edge.delay == nil {
            accepted[edge.inputIndex] = true
        }
        return inputs.indices.filter { !accepted[$0] }.map { inputs[$0] }
    }

    /// The shortest input path from the initial state to `state` (the first found breadth first, so
    /// ties go to inputs earlier in the alphabet), or `nil` if `state` was not found. The path to
    /// the initial state is empty.
    public func shortestPath(to state: State) -> Path? {
        guard let index = stateIndices[state] else { return nil }
        return shortestPath(toIndex: index)
    }

    /// The shortest input path to every state found, in the order of `states`.
    public var shortestPaths: [Path] {
        states.indices.map(shortestPath(toIndex:))
    }

    func shortestPath(toIndex index: Int) -> Path {
        var reversed: [Edge] = []
        var current = index
        while let edgeIndex = discoveringEdges[current] {
            reversed.append(edges[edgeIndex])
            current = edges[edgeIndex].fromIndex
        }
        return Path(start: initialState, edges: reversed.reversed())
    }
}

extension StateGraph where State: CaseIterable {
    /// The states of `State.allCases` that exploration did not find from the initial state, in
    /// `allCases` order. On a graph that reached its state limit, some of them may be reachable
    /// further on.
    public var unreachableStates: [State] {
        State.allCases.filter { stateIndices[$0] == nil }
    }
}
