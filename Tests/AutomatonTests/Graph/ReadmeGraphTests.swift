import Automaton
import Testing

// The README's "See the machine" section, verbatim between the markers, on the quick start's login
// machine (`makeLoginMachine` in ReadmeQuickStartTests.swift).

@Suite("README: see the machine")
struct ReadmeGraphTests {
    @Test("the README's graph of the quick-start machine has the findings its comments say")
    func seeTheMachine() {
        let automaton = makeLoginMachine(loginOK: .never, logoutOK: .never)
        // README-GRAPH-BEGIN
        let graph = automaton.graph(inputs: [.login, .loginOK, .logout, .logoutOK, .forceLogout])
        let mermaid = graph.mermaid()  // the diagram below; graph.dot() for Graphviz
        let stuck = graph.deadEndStates  // []: every state has a way out
        let unused = graph.neverAcceptedInputs  // []: every input is accepted somewhere
        let toLoggingOut = graph.shortestPath(to: .loggingOut)?.inputs  // [.login, .forceLogout]
        let testPaths = graph.edgeCoveringPaths.map(\.inputs)  // 1 path, all 6 transitions
        let coversAll = Set(graph.edgeCoveringPaths.flatMap(\.edges)) == Set(graph.edges)  // true: edges are Hashable
        // README-GRAPH-END
        #expect(mermaid.hasPrefix("stateDiagram-v2\n"))
        #expect(stuck == [])
        #expect(unused == [])
        #expect(toLoggingOut == [.login, .forceLogout])
        #expect(testPaths.count == 1 && Set(testPaths[0]).count == 5 && graph.edges.count == 6)
        #expect(graph.states == [.loggedOut, .loggingIn, .loggedIn, .loggingOut])
        #expect(coversAll)
    }
}
