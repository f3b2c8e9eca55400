// Machines made of machines, drawn: a parent graph whose states host the graphs of the child machines
// they run, as UML composite states. Names are rendered when a level is added, so children of any
// State and Input types nest, and nest further. The exports are in `CompositeStateGraphExport.swift`.

extension StateGraph {
    /// This graph as the top level of a composite diagram, with no child yet: nest the graphs of the
    /// child machines its states host with `nesting(_:in:name:stateName:inputName:)`.
    ///
    /// The names are rendered now, on the calling thread, once per state and input, in the order of
    /// `states` and `inputs`; the closures are not kept.
    ///
    /// - Parameters:
    ///   - stateName: the text shown for a state; by default `String(describing:)`.
    ///   - inputName: the text shown for an input; by default `String(describing:)`.
    public func composite(
        stateName: (State) -> String = { String(describing: $0) },
        inputName: (Input) -> String = { String(describing: $0) }
    ) -> CompositeStateGraph<State, Input> {
        CompositeStateGraph(graph: self, diagram: StateDiagram(self, stateName: stateName, inputName: inputName))
    }
}

/// A parent machine's state graph with the graphs of the child machines its states host, drawn as
/// composite states: Mermaid `state verifying { ... }` blocks and Graphviz DOT clusters.
///
/// Made with ``StateGraph/composite(stateName:inputName:)``, then one `nesting` call per kind of
/// child, each returning a new value:
///
/// ```swift
/// let diagram = login.composite()
///     .nesting(twoFactor, in: .verifying)  // one child while verifying
///     .nesting(download, in: { $0.isRunning }, name: "downloads[*]")  // a collection, in each state that runs it
/// diagram.mermaid()  // stateDiagram-v2, `state "verifying" as verifying { ... }`
/// diagram.dot()  // digraph, `subgraph cluster_verifying { ... }`
/// ```
///
/// A child may be a `StateGraph` of any State and Input types, with its own naming closures, or a
/// `CompositeStateGraph` with children of its own, to any depth. A state that hosts several children
/// shows them as concurrent regions (UML orthogonal regions), in the order nested. A child nested in
/// several states is drawn in each.
///
/// The diagram is exploration only: it says which machines a state runs, not how the parent and
/// the children exchange inputs. It is a value: immutable, `Sendable`, holding the parent graph and
/// rendered text, and no reference to a mapping, an automaton or a naming closure. Everything in it
/// is in a stable order, so its exports are the same on every run.
public struct CompositeStateGraph<State: Hashable & Sendable, Input: Sendable>: Sendable {
    /// The parent graph: the top level of the diagram.
    public let graph: StateGraph<State, Input>
    /// The diagram with its types erased: the parent's rendered names and, nested in its states, the
    /// children's.
    public private(set) var diagram: StateDiagram

    init(graph: StateGraph<State, Input>, diagram: StateDiagram) {
        self.graph = graph
        self.diagram = diagram
    }

    /// This diagram with the graph `child` nested in the state `host`, after any child `host`
    /// already hosts (as a concurrent region when there is one).
    ///
    /// `host` must be a state of `graph` (exploration found it); a state it did not find stops the
    /// program with a message that names it. The child's names are rendered now, on the calling
    /// thread, once per state and input; the closures are not kept.
    ///
    /// - Parameters:
    ///   - child: the graph of the machine `host` runs, explored from its initial state.
    ///   - host: the parent state that runs the child.
    ///   - name: the name shown on the child's region, such as `"downloads[*]"` for a collection of
    ///     children; `nil` (the default) for none.
    ///   - stateName: the text shown for a child's state; by default `String(describing:)`.
    ///   - inputName: the text shown for a child's input; by default `String(describing:)`.
    public func nesting<ChildState: Hashable & Sendable, ChildInput: Sendable>(
        _ child: StateGraph<ChildState, ChildInput>,
        in host: State,
        name: String? = nil,
        stateName: (ChildState) -> String = { String(describing: $0) },
        inputName: (ChildInput) -> String = { String(describing: $0) }
    ) -> CompositeStateGraph {
        nesting(StateDiagram(child, stateName: stateName, inputName: inputName), in: host, name: name)
    }

    /// This diagram with the graph `child` nested in every state of `graph` that `isHost` accepts,
    /// after any child such a state already hosts. The child's names are rendered once, now, and the
    /// same rendering is drawn in each host.
    ///
    /// - Parameters:
    ///   - child: the graph of the machine the hosts run, explored from its initial state.
    ///   - isHost: whether a parent state runs the child; called once per state, in the order of
    ///     `graph.states`, on the calling thread. It may accept none.
    ///   - name: the name shown on the child's region in each host; `nil` (the default) for none.
    ///   - stateName: the text shown for a child's state; by default `String(describing:)`.
    ///   - inputName: the text shown for a child's input; by default `String(describing:)`.
    public func nesting<ChildState: Hashable & Sendable, ChildInput: Sendable>(
        _ child: StateGraph<ChildState, ChildInput>,
        in isHost: (State) -> Bool,
        name: String? = nil,
        stateName: (ChildState) -> String = { String(describing: $0) },
        inputName: (ChildInput) -> String = { String(describing: $0) }
    ) -> CompositeStateGraph {
        nesting(StateDiagram(child, stateName: stateName, inputName: inputName), where: isHost, name: name)
    }

    /// This diagram with the composite diagram `child` (a child machine with children of its own)
    /// nested in the state `host`, after any child `host` already hosts. `host` must be a state of
    /// `graph`. The child's names were rendered when it was made.
    ///
    /// - Parameters:
    ///   - child: the diagram of the machine `host` runs.
    ///   - host: the parent state that runs the child.
    ///   - name: the name shown on the child's region; `nil` (the default) for none.
    public func nesting<ChildState: Hashable & Sendable, ChildInput: Sendable>(
        _ child: CompositeStateGraph<ChildState, ChildInput>,
        in host: State,
        name: String? = nil
    ) -> CompositeStateGraph {
        nesting(child.diagram, in: host, name: name)
    }

    /// This diagram with the composite diagram `child` nested in every state of `graph` that `isHost`
    /// accepts, after any child such a state already hosts.
    ///
    /// - Parameters:
    ///   - child: the diagram of the machine the hosts run.
    ///   - isHost: whether a parent state runs the child; called once per state, in the order of
    ///     `graph.states`, on the calling thread. It may accept none.
    ///   - name: the name shown on the child's region in each host; `nil` (the default) for none.
    public func nesting<ChildState: Hashable & Sendable, ChildInput: Sendable>(
        _ child: CompositeStateGraph<ChildState, ChildInput>,
        in isHost: (State) -> Bool,
        name: String? = nil
    ) -> CompositeStateGraph {
        nesting(child.diagram, where: isHost, name: name)
    }

    private func nesting(_ child: StateDiagram, in host: State, name: String?) -> CompositeStateGraph {
        guard let index = graph.index(of: host) else {
            preconditionFailure(
                "Cannot nest a child graph in \(host): exploration of the parent graph did not find that state.")
        }
        var result = self
        result.diagram.regions[index].append(child.named(name))
        return result
    }

    private func nesting(_ child: StateDiagram, where isHost: (State) -> Bool, name: String?) -> CompositeStateGraph {
        var result = self
        for (index, state) in graph.states.enumerated() where isHost(state) {
            result.diagram.regions[index].append(child.named(name))
        }
        return result
    }

    /// The child diagrams nested in `state`, in the order nested; none if it hosts none or is not a
    /// state of `graph`. A child's ``StateDiagram/name`` is the name it was nested with.
    public func children(of state: State) -> [StateDiagram] {
        graph.index(of: state).map(diagram.children(ofStateAt:)) ?? []
    }

    /// The number of states drawn at each level: the parent's first, then all its children's, and so
    /// on. See ``StateDiagram/stateCountsByLevel``.
    public var stateCountsByLevel: [Int] { diagram.stateCountsByLevel }

    /// The number of transitions drawn at each level: the parent's first, then all its children's,
    /// and so on. See ``StateDiagram/edgeCountsByLevel``.
    public var edgeCountsByLevel: [Int] { diagram.edgeCountsByLevel }
}
