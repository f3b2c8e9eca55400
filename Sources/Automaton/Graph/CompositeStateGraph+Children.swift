// Composite diagrams from the children a parent's rows start (`ChildAutomaton`, `ChildAutomata`):
// the hosts are found in the parent's graph, from the keys of the effects its edges start.

/// A key that names a child automaton's kind: `ChildKey`, whatever its id type.
protocol ChildKindNaming {
    var childKindName: String { get }
}

extension ChildKey: ChildKindNaming {
    var childKindName: String { name }
}

extension StateGraph {
    /// The states that a transition starting a child named `childName` leads to (a ``ChildAutomaton``
    /// or ``ChildAutomata`` of that name, found by the key of the effect the edge starts), in the order
    /// of `states`.
    public func statesStartingChildren(named childName: String) -> [State] {
        var hosts = Set<Int>()
        for edge in edges where edge.startsEffect {
            for key in edge.effects {
                if let kind = key?.value.base as? any ChildKindNaming, kind.childKindName == childName {
                    hosts.insert(edge.toIndex)
                }
            }
        }
        return hosts.sorted().map { states[$0] }
    }
}

extension CompositeStateGraph {
    /// This diagram with `child` nested in every state that a transition starting a child named
    /// `childName` leads to (see `StateGraph.statesStartingChildren(named:)`), labelled `childName`:
    /// the hosts come from the parent's rows, not from a list kept by hand.
    ///
    /// ```swift
    /// let diagram = signIn.graph(inputs: signInInputs).composite()
    ///     .nesting(twoFactorGraph, startedAs: twoFactor.name)
    /// ```
    ///
    /// A state is a host only if a transition that starts the child leads to it; a state the parent
    /// reaches later while the child still runs is not drawn as a host.
    public func nesting<ChildState: Hashable & Sendable, ChildInput: Sendable>(
        _ child: StateGraph<ChildState, ChildInput>,
        startedAs childName: String,
        stateName: (ChildState) -> String = { String(describing: $0) },
        inputName: (ChildInput) -> String = { String(describing: $0) }
    ) -> CompositeStateGraph {
        let hosts = Set(graph.statesStartingChildren(named: childName))
        return nesting(child, in: { hosts.contains($0) }, name: childName, stateName: stateName, inputName: inputName)
    }
}
