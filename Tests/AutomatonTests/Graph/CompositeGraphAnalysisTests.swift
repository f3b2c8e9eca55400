import Automaton
import Testing

// What a composite diagram tells without drawing it: the children of a state, and the states and
// transitions drawn at each level. The code of the article's "Machines made of machines" (in
// ObservingAndLogging.md) is here, verbatim between the markers (checked by .ci/check-docc-snippets).

@Suite("Composite state graph: children and counts by level")
struct CompositeGraphAnalysisTests {
    @Test("the article's composite diagrams: one child while verifying, a collection while running or paused")
    func article() {
        let signInGraph = AutomatonTests.signInGraph()
        let twoFactorGraph = AutomatonTests.twoFactorGraph()
        let managerGraph = AutomatonTests.managerGraph()
        let downloadGraph = AutomatonTests.downloadGraph()
        // DOCC-GRAPH-COMPOSITE-BEGIN
        let login = signInGraph.composite()
            .nesting(twoFactorGraph, in: .verifying)  // one two-factor machine while verifying
        let downloads = managerGraph.composite()
            .nesting(downloadGraph, in: { $0.hasDownloads }, name: "downloads[*]")  // one per URL, running or paused
        let mermaid = login.mermaid()  // state "verifying" as verifying { ... }
        let dot = downloads.dot(name: "downloads")  // subgraph cluster_running { ... }, cluster_paused { ... }
        let states = downloads.stateCountsByLevel  // [3, 8]: the manager's, then a download's in each host
        let hosted = downloads.children(of: .running).map(\.name)  // ["downloads[*]"]
        // DOCC-GRAPH-COMPOSITE-END
        #expect(mermaid.contains("\n    state \"verifying\" as verifying {\n"))
        #expect(dot.contains("\n    subgraph cluster_running {\n") && dot.contains("\n    subgraph cluster_paused {\n"))
        #expect(states == [3, 8])
        #expect(hosted == ["downloads[*]"])
        #expect(login.edgeCountsByLevel == [4, 3])
    }

    @Test("children(of:) lists what a state hosts in the order nested, and nothing for other states")
    func children() {
        let diagram = managerGraph().composite()
            .nesting(downloadGraph(), in: .running, name: "downloads[*]")
            .nesting(speedGraph(), in: .running)
        let running = diagram.children(of: .running)
        #expect(running.map(\.name) == ["downloads[*]", nil])
        #expect(
            running.map(\.stateNames) == [["queued", "downloading", "finished", "failed"], ["measuring", "stalled"]])
        #expect(running.map(\.edgeCount) == [4, 2])
        #expect(diagram.children(of: .idle).isEmpty)
        #expect(diagram.children(of: .paused).isEmpty)
        #expect(diagram.diagram.stateNames == ["idle", "running", "paused"])
        #expect(diagram.diagram.name == nil)
        #expect(diagram.graph.states == [.idle, .running, .paused])
    }

    @Test("counts by level add up every level's states and transitions, each child once per host, to any depth")
    func countsByLevel() {
        let twoFactor = twoFactorGraph().composite().nesting(requestGraph(), in: .checking)
        let threeLevels = signInGraph().composite().nesting(twoFactor, in: .verifying)
        #expect(threeLevels.stateCountsByLevel == [3, 3, 2])
        #expect(threeLevels.edgeCountsByLevel == [4, 3, 2])
        let nested = threeLevels.children(of: .verifying)
        #expect(nested.map(\.stateCountsByLevel) == [[3, 2]])
        #expect(nested.first?.children(ofStateAt: 1).map(\.stateNames) == [["sending", "waiting"]])

        let twoKinds = managerGraph().composite()
            .nesting(downloadGraph(), in: { $0.hasDownloads })
            .nesting(speedGraph(), in: .running)
        #expect(twoKinds.stateCountsByLevel == [3, 4 + 2 + 4])
        #expect(twoKinds.edgeCountsByLevel == [4, 4 + 2 + 4])
        #expect(signInGraph().composite().stateCountsByLevel == [3])
        #expect(signInGraph().composite().edgeCountsByLevel == [4])
    }

    @Test("nesting returns a new value and leaves the diagram it was called on unchanged")
    func values() {
        let parent = signInGraph().composite()
        let nested = parent.nesting(twoFactorGraph(), in: .verifying)
        #expect(parent.children(of: .verifying).isEmpty)
        #expect(nested.children(of: .verifying).count == 1)
        #expect(nested.diagram != parent.diagram)
        #expect(nested.diagram == parent.nesting(twoFactorGraph(), in: .verifying).diagram)
        #expect(parent.nesting(twoFactorGraph(), in: { _ in false }).diagram == parent.diagram)
    }

    @Test("nesting in a state the parent's exploration did not find stops with a message that names it")
    func unknownHost() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let partial = StateGraph<DiagramSignInState, DiagramSignInInput>(
                from: .signedIn, table: [.signOut | .signedIn => .signedIn])
            _ = partial.composite().nesting(twoFactorGraph(), in: .verifying)
        }
        #if DEBUG
            if let result {
                let output = String(decoding: result.standardErrorContent, as: UTF8.self)
                #expect(
                    output.contains(
                        "Cannot nest a child graph in verifying: exploration of the parent graph did not find"),
                    "standard error was: \(output)")
            }
        #endif
    }
}
