import Automaton
import Signals
import Testing

@Suite("State graph analysis")
struct GraphAnalysisTests {
    @Test("unreachable states: the CaseIterable states exploration did not find, in allCases order")
    func unreachableStates() {
        let rows: [MappingRow<LoginState, LoginInput>] = [
            .login | .loggedOut => .loggingIn,
            .loginOK | .loggingIn => .loggedIn,
        ]
        let graph = StateGraph(from: LoginState.loggedOut, table: MappingTable(rows))
        #expect(graph.unreachableStates == [.loggingOut])
        #expect(loginGraph().unreachableStates == [])
        #expect(
            StateGraph(from: LoginState.loggingOut, table: MappingTable(rows)).unreachableStates == [
                .loggedOut, .loggingIn, .loggedIn,
            ])
    }

    @Test("dead ends: states that reject every input or only loop back, in discovery order")
    func deadEnds() {
        let graph = transitionMachine(initialState: Connection.idle).graph(inputs: Connection.samples)
        #expect(graph.deadEndStates == [.cancel])
        #expect(loginGraph().deadEndStates == [])
        let rows: [MappingRow<LoginState, LoginInput>] = [
            .login | .loggedOut => .loggingIn,
            .loginOK | .loggingIn => .loggedIn,
        ]
        #expect(StateGraph(from: LoginState.loggedOut, table: MappingTable(rows)).deadEndStates == [.loggedIn])
    }

    @Test("inputs never accepted: the alphabet's inputs no state found accepts, in alphabet order")
    func neverAcceptedInputs() {
        let rows: [MappingRow<LoginState, LoginInput>] = [
            .login | .loggedOut => .loggingIn,
            .loginOK | .loggingIn => .loggedIn,
            .logoutOK | .loggingOut => .loggedOut,
        ]
        #expect(
            StateGraph(from: LoginState.loggedOut, table: MappingTable(rows)).neverAcceptedInputs == [
                .logout, .logoutOK, .forceLogout,
            ])
        #expect(loginGraph().neverAcceptedInputs == [])
        #expect(transitionMachine(initialState: TrafficLight.red).graph().neverAcceptedInputs == [])
    }

    @Test("shortest paths: one per state, in discovery order, ties going to earlier inputs")
    func shortestPaths() {
        let graph = loginGraph()
        #expect(
            graph.shortestPaths.map(\.inputs) == [
                [],
                [.login],
                [.login, .loginOK],
                [.login, .forceLogout],
            ])
        #expect(graph.shortestPaths.map(\.end) == graph.states)
        #expect(graph.shortestPath(to: .loggingOut)?.edges.map(\.from) == [.loggedOut, .loggingIn])
        let partial = StateGraph<LoginState, LoginInput>(from: .loggedIn, table: [.logout | .loggedIn => .loggingOut])
        #expect(partial.shortestPath(to: .loggedOut) == nil)
    }

    @Test("edge-covering paths: from the initial state, together taking every transition, deterministic")
    func edgeCoveringPaths() {
        let graph = loginGraph()
        let paths = graph.edgeCoveringPaths
        #expect(
            paths.map(\.inputs) == [
                [
                    .login, .loginOK, .logout, .logoutOK, .login, .forceLogout, .logoutOK, .login, .loginOK,
                    .forceLogout,
                ]
            ])
        #expect(paths.allSatisfy { $0.start == .loggedOut })
        let taken = Set(paths.flatMap { $0.edges.map { "\($0.from) \($0.input)" } })
        #expect(taken == Set(graph.edges.map { "\($0.from) \($0.input)" }))

        // A dead end ends a path: the next starts again from the initial state.
        let connection = transitionMachine(initialState: Connection.idle).graph(inputs: Connection.samples)
        #expect(
            connection.edgeCoveringPaths.map { $0.inputs.map(\.caseName) } == [
                ["fetching", "success", "cancel", "cancel"],
                ["cancel"],
                ["fetching", "failure", "cancel"],
                ["fetching", "cancel"],
            ])
        #expect(StateGraph(from: 0, inputs: [1]) { (_: Int, _: Int) -> Int? in nil }.edgeCoveringPaths.isEmpty)
    }

    @Test("edges and paths are Equatable and Hashable when inputs are: every field counts")
    func edgesAndPathsCompare() {
        typealias Graph = StateGraph<LoginState, LoginInput>
        let graph = loginGraph()
        let login = Graph.Edge(
            from: .loggedOut, input: .login, to: .loggingIn, fromIndex: 0, inputIndex: 0, toIndex: 1,
            startsEffect: true)
        #expect(graph.edges.first == login)
        #expect(graph.shortestPath(to: .loggingIn) == Graph.Path(start: .loggedOut, edges: [login]))
        #expect(graph.shortestPath(to: .loggingIn) != Graph.Path(start: .loggedIn, edges: [login]))
        // The effect, its key and the cancelled keys count, as the states, input and positions do.
        let variants = [
            Graph.Edge(
                from: .loggedOut, input: .login, to: .loggingIn, fromIndex: 0, inputIndex: 0, toIndex: 1,
                startsEffect: false),
            Graph.Edge(
                from: .loggedOut, input: .login, to: .loggingIn, fromIndex: 0, inputIndex: 0, toIndex: 1,
                startsEffect: true, effectKey: EffectKey("session")),
            Graph.Edge(
                from: .loggedOut, input: .login, to: .loggingIn, fromIndex: 0, inputIndex: 0, toIndex: 1,
                startsEffect: true, cancelledKeys: [EffectKey("session")]),
            Graph.Edge(
                from: .loggedOut, input: .login, to: .loggingIn, fromIndex: 0, inputIndex: 1, toIndex: 1,
                startsEffect: true),
        ]
        #expect(variants.map { $0 == login } == [false, false, false, false])
        #expect(Set(variants + [login, login]).count == 5)
        #expect(Set(graph.edgeCoveringPaths.flatMap(\.edges)) == Set(graph.edges))
        #expect(Set(graph.shortestPaths).count == graph.states.count)
    }
}

extension Connection {
    var caseName: String {
        switch self {
        case .idle: "idle"
        case .fetching: "fetching"
        case .success: "success"
        case .failure: "failure"
        case .cancel: "cancel"
        }
    }
}
