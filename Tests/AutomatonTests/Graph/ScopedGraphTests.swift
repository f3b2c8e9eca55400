import Automaton
import Signals
import Testing

// State-scoped declarations in the graph: `.during` effects listed in their states, `.after`
// declarations as edges with their delay, in the exports too.

private enum Fetch: String, Sendable, Hashable, CustomStringConvertible {
    case idle, loading, loaded, failed
    var description: String { rawValue }
}

private enum FetchInput: String, Sendable, Hashable, CustomStringConvertible {
    case load, done, cancel, timedOut, retry
    var description: String { rawValue }
}

/// A fetch that times out after 10 s of loading; a spinner runs while loading, a banner after failing.
private func fetchTable(scheduler: TestScheduler) -> MappingTable<Fetch, FetchInput> {
    [
        .load | .idle => .loading,
        .done | .loading => .loaded,
        .cancel | .loading => .idle,
        .timedOut | .loading => .failed,
        .retry | .failed => .loading,
        .during(.loading) { _ in .never },
        .after(.seconds(10), in: .loading, send: .timedOut, on: scheduler),
        .during(.failed, key: "banner") { _ in .never },
        .after(.milliseconds(1500), in: .failed, send: .retry, on: scheduler),
    ]
}

/// The alphabet sent from outside: `timedOut` and `retry` only come from the `after` declarations.
private let alphabet: [FetchInput] = [.load, .done, .cancel]

private func fetchGraph() -> StateGraph<Fetch, FetchInput> {
    StateGraph(from: .idle, inputs: alphabet, table: fetchTable(scheduler: TestScheduler()))
}

@Suite("State graph: state-scoped effects and after edges")
struct ScopedGraphTests {
    @Test("during keys are listed per state; after edges lead where the table sends their input, with their delay")
    func exploration() {
        let graph = fetchGraph()
        #expect(graph.states == [.idle, .loading, .loaded, .failed])
        #expect(graph.scopedEffects(in: .idle) == [])
        #expect(graph.scopedEffects(in: .loading).map(\.description) == ["during 0"])
        #expect(graph.scopedEffects(in: .failed).map(\.description) == ["banner"])
        let delayed = graph.edges.filter { $0.delay != nil }
        #expect(
            delayed.map { "\($0.from) -\($0.input)-> \($0.to)" } == [
                "loading -timedOut-> failed", "failed -retry-> loading",
            ])
        #expect(delayed.map(\.delay) == [.seconds(10), .milliseconds(1500)])
        #expect(delayed.map(\.inputIndex) == [-1, -1])
        // An after edge is not found by input position.
        #expect(graph.edge(fromIndex: 1, inputIndex: -1) == nil)
        #expect(graph.neverAcceptedInputs == [])
        #expect(graph.deadEndStates == [.loaded])
    }

    @Test("the edge-covering paths take the after edges too")
    func coverage() {
        let graph = fetchGraph()
        #expect(
            graph.edgeCoveringPaths.map { path in path.edges.map { $0.delay.map { "after \($0)" } ?? "\($0.input)" } }
                == [
                    ["load", "done"],
                    ["load", "cancel", "load", "after 10.0 seconds", "after 1.5 seconds"],
                ])
    }

    @Test("Mermaid: during keys as state descriptions, after edges labelled with their delay")
    func mermaid() {
        expectDiagram(
            fetchGraph().mermaid(),
            """
            stateDiagram-v2
                state "idle" as idle
                state "loading" as loading
                state "loaded" as loaded
                state "failed" as failed
                loading : during 0
                failed : banner
                [*] --> idle
                idle --> loading : load
                loading --> loaded : done
                loading --> idle : cancel
                loading --> failed : after 10 s / timedOut
                failed --> loading : after 1500 ms / retry
            """,
            named: "scoped-fetch.mmd")
    }

    @Test("DOT: during keys in the node labels, after edges labelled with their delay and dashed")
    func dot() {
        expectDiagram(
            fetchGraph().dot(name: "fetch"),
            """
            digraph "fetch" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                idle [label="idle"];
                loading [label="loading\\nduring 0"];
                loaded [label="loaded"];
                failed [label="failed\\nbanner"];
                __start -> idle;
                idle -> loading [label="load"];
                loading -> loaded [label="done"];
                loading -> idle [label="cancel"];
                loading -> failed [label="after 10 s / timedOut", style=dashed];
                failed -> loading [label="after 1500 ms / retry", style=dashed];
            }
            """,
            named: "scoped-fetch.dot")
    }

    @Test("the edges keep the scopes' entries and exits as data; only the labels leave them out")
    func edgeData() {
        let graph = fetchGraph()
        let timeout = graph.edges.first { $0.delay == .seconds(10) }
        #expect(timeout?.cancelledKeys.map(\.description) == ["during 0", "after 10.0 seconds 1"])
        #expect(timeout?.effects.map { $0?.description } == ["banner", "after 1.5 seconds 3"])
    }

    @Test("a graph explored from an automaton made from the table shows the scopes on the edges only")
    func fromAutomaton() {
        let automaton = Automaton(state: .idle, table: fetchTable(scheduler: TestScheduler()))
        expectDiagram(
            automaton.graph(inputs: alphabet).mermaid(),
            """
            stateDiagram-v2
                state "idle" as idle
                state "loading" as loading
                state "loaded" as loaded
                [*] --> idle
                idle --> loading : load / effect [during 0], effect [after 10.0 seconds 1]
                loading --> loaded : done / cancel [during 0, after 10.0 seconds 1]
                loading --> idle : cancel / cancel [during 0, after 10.0 seconds 1]
            """,
            named: "scoped-fetch-automaton.mmd")
    }

    @Test("a composite diagram with no child exports a scoped graph exactly as the graph does")
    func composite() {
        let graph = fetchGraph()
        #expect(graph.composite().mermaid() == graph.mermaid())
        #expect(graph.composite().dot(name: "fetch") == graph.dot(name: "fetch"))
    }

    @Test("a graph without scopes has no description lines and no after edges")
    func noScopes() {
        let graph = StateGraph<Fetch, FetchInput>(
            from: .idle, inputs: alphabet, table: [.load | .idle => .loading, .done | .loading => .loaded])
        #expect(graph.states.allSatisfy { graph.scopedEffects(in: $0).isEmpty })
        #expect(graph.edges.allSatisfy { $0.delay == nil })
    }
}
