import Automaton
import Signals
import Testing

@Suite("State graph exploration")
struct GraphExplorationTests {
    @Test("the login machine: states breadth first, edges in alphabet order, and each state's rejected inputs")
    func loginMachine() {
        let graph = loginGraph()
        #expect(graph.inputs == LoginInput.allCases)
        #expect(graph.states == [.loggedOut, .loggingIn, .loggedIn, .loggingOut])
        #expect(
            graph.edges.map(EdgeSummary.init) == [
                EdgeSummary(.loggedOut, .login, .loggingIn, effect: true),
                EdgeSummary(.loggingIn, .loginOK, .loggedIn, effect: false),
                EdgeSummary(.loggingIn, .forceLogout, .loggingOut, effect: true),
                EdgeSummary(.loggedIn, .logout, .loggingOut, effect: true),
                EdgeSummary(.loggedIn, .forceLogout, .loggingOut, effect: true),
                EdgeSummary(.loggingOut, .logoutOK, .loggedOut, effect: false),
            ])
        #expect(
            graph.states.map(graph.rejectedInputs(in:)) == [
                [.loginOK, .logout, .logoutOK, .forceLogout],
                [.login, .logout, .logoutOK],
                [.login, .loginOK, .logoutOK],
                [.login, .loginOK, .logout, .forceLogout],
            ])
        #expect(graph.edges(from: .loggedIn).map(\.input) == [.logout, .forceLogout])
        #expect(graph.reachedStateLimit == false)
        #expect(graph.initialState == .loggedOut)
    }

    @Test("exploration calls the mapping once per state and input, in order, and starts no effect")
    func callsTheMappingOnly() {
        let calls = Recording<String>()
        let starts = Recording<String>()
        let effect = SignalProducer<LoginInput, Never> { observer, _ in
            starts.append("started")
            observer.sendCompleted()
        }
        let mapping = reduce(loginMappings(loginOK: effect, logoutOK: effect, forceLogoutOK: effect))
        let graph = StateGraph(from: LoginState.loggedOut) { (state: LoginState, input: LoginInput) in
            calls.append("\(state) \(input)")
            return mapping(state, input)
        }
        #expect(graph.states.count == 4)
        #expect(calls.values == graph.states.flatMap { state in LoginInput.allCases.map { "\(state) \($0)" } })
        #expect(starts.values.isEmpty)
    }

    @Test(
        "an automaton built from a table is explored from its current state, without the table, and is left unchanged")
    func automatonFromItsCurrentState() {
        let scheduler = TestScheduler()
        let automaton = Automaton<LoginState, LoginInput>(
            state: .loggedOut, strategy: .latest,
            table: [
                .login | .loggedOut => .loggingIn | delayedInput(.loginOK, after: .seconds(1), on: scheduler),
                .loginOK | .loggingIn => .loggedIn,
                .logout | .loggedIn => .loggingOut | delayedInput(.logoutOK, after: .seconds(1), on: scheduler),
                .logoutOK | .loggingOut => .loggedOut,
            ])
        let replies = automaton.replies.record()
        automaton.send(.login)
        scheduler.advance(by: .seconds(1))

        let graph = automaton.graph()
        #expect(graph.states == [.loggedIn, .loggingOut, .loggedOut, .loggingIn])
        #expect(
            graph.edges.map(EdgeSummary.init) == [
                EdgeSummary(.loggedIn, .logout, .loggingOut, effect: true),
                EdgeSummary(.loggingOut, .logoutOK, .loggedOut, effect: false),
                EdgeSummary(.loggedOut, .login, .loggingIn, effect: true),
                EdgeSummary(.loggingIn, .loginOK, .loggedIn, effect: false),
            ])
        #expect(graph.neverAcceptedInputs == [.forceLogout])
        // Exploring sent nothing, scheduled nothing and moved nothing.
        #expect(scheduler.pendingActionCount == 0)
        #expect(automaton.state.value == .loggedIn)
        #expect(
            replies.values == [
                .value(.success(.login, .loggedOut, .loggingIn)),
                .value(.success(.loginOK, .loggingIn, .loggedIn)),
            ])
    }

    @Test("the static forms (mapping, effect-free mapping, table) and the automaton's graph agree")
    func staticFormsAgree() {
        let rows: [MappingRow<LoginState, LoginInput>] = [
            .login | .loggedOut => .loggingIn,
            .loginOK | .loggingIn => .loggedIn,
            .logout | .loggedIn => .loggingOut,
            .logoutOK | .loggingOut => .loggedOut,
        ]
        let mappings: [Automaton<LoginState, LoginInput>.Mapping] = [
            .login | .loggedOut => .loggingIn,
            .loginOK | .loggingIn => .loggedIn,
            .logout | .loggedIn => .loggingOut,
            .logoutOK | .loggingOut => .loggedOut,
        ]
        let fromTable = StateGraph(from: LoginState.loggedOut, table: MappingTable(rows))
        let fromMapping = StateGraph(from: LoginState.loggedOut, mapping: reduce(mappings))
        let fromEffectMapping = StateGraph(from: LoginState.loggedOut, mapping: MappingTable(rows).mapping)
        let fromAutomaton = Automaton(state: LoginState.loggedOut, table: MappingTable(rows)).graph()
        let expected = [
            EdgeSummary(LoginState.loggedOut, LoginInput.login, .loggingIn, effect: false),
            EdgeSummary(.loggingIn, .loginOK, .loggedIn, effect: false),
            EdgeSummary(.loggedIn, .logout, .loggingOut, effect: false),
            EdgeSummary(.loggingOut, .logoutOK, .loggedOut, effect: false),
        ]
        for graph in [fromTable, fromMapping, fromEffectMapping, fromAutomaton] {
            #expect(graph.edges.map(EdgeSummary.init) == expected)
        }
    }

    @Test("an explicit alphabet may hold sample inputs with associated values; an unbounded retry count hits the limit")
    func sampleInputs() {
        let machine = connectionMachine { _ in .never }
        let inputs: [ConnectionInput] = [
            .connect, .opened(session: "s1"), .dropped(reason: "timeout"), .retry, .cancel,
        ]
        let graph = machine.graph(inputs: inputs, stateLimit: 8)
        #expect(
            graph.states == [
                .idle, .connecting(attempt: 1), .connected(session: "s1"), .failed(reason: "timeout", attempt: 1),
                .failed(reason: "timeout", attempt: 0), .connecting(attempt: 2), .failed(reason: "timeout", attempt: 2),
                .connecting(attempt: 3),
            ])
        #expect(graph.reachedStateLimit)
        #expect(graph.rejectedInputs(in: .idle) == [.opened(session: "s1"), .dropped(reason: "timeout"), .retry])
        #expect(graph.edges(from: .connecting(attempt: 3)).map(\.input) == [.opened(session: "s1"), .cancel])
        #expect(
            graph.edges(from: .failed(reason: "timeout", attempt: 1)).map { EdgeSummary($0) } == [
                EdgeSummary(.failed(reason: "timeout", attempt: 1), .retry, .connecting(attempt: 2), effect: true),
                EdgeSummary(.failed(reason: "timeout", attempt: 1), .cancel, .idle, effect: false),
            ])
    }

    @Test("exploration stops recording states at the limit, says so, and keeps only edges among recorded states")
    func stateLimit() {
        // A counter that never ends: 0, 1, 2, ...
        let graph = StateGraph(from: 0, inputs: ["increment", "reset"], stateLimit: 3) {
            (state: Int, input: String) -> Int? in
            input == "increment" ? state + 1 : 0
        }
        #expect(graph.states == [0, 1, 2])
        #expect(graph.reachedStateLimit)
        #expect(graph.stateLimit == 3)
        #expect(
            graph.edges.map { "\($0.from) \($0.input) \($0.to)" } == [
                "0 increment 1", "0 reset 0", "1 increment 2", "1 reset 0", "2 reset 0",
            ])
        #expect(graph.deadEndStates == [])

        let unbounded = StateGraph(from: 0, inputs: ["increment"], stateLimit: 1) { (state: Int, _: String) -> Int? in
            state + 1
        }
        #expect(unbounded.states == [0])
        #expect(unbounded.edges.isEmpty)
        #expect(unbounded.reachedStateLimit)
    }

    @Test("keyed effects carry their key on the edge, and a cancelling row its keys")
    func keyedEdges() {
        let graph = keyedGraph()
        #expect(
            graph.edges.map { edge in
                "\(edge.from) \(edge.input) \(edge.to) starts=\(edge.startsEffect) key=\(edge.effectKey.map { "\($0)" } ?? "-") cancels=\(edge.cancelledKeys.map(\.description))"
            } == [
                "disconnected connect connecting starts=true key=connection cancels=[]",
                "disconnected disconnect disconnected starts=false key=- cancels=[\"connection\", \"poll\"]",
                "connecting opened connected starts=true key=- cancels=[]",
                "connecting disconnect disconnected starts=false key=- cancels=[\"connection\", \"poll\"]",
                "connected disconnect disconnected starts=false key=- cancels=[\"connection\", \"poll\"]",
            ])
        #expect(graph.edges.first?.effectKey == EffectKey("connection"))
    }

    @Test("a table's cancelling row keeps its keys: the graph shows them, and the automaton cancels by them")
    func tableCancellingRow() {
        let rows: [MappingRow<Socket, SocketInput>] = [
            .connect | .disconnected => .connecting | SignalProducer.never.keyed("connection"),
            .disconnect | any => .disconnected | .cancel("connection"),
        ]
        let graph = StateGraph(from: Socket.disconnected, table: MappingTable(rows))
        #expect(
            graph.edges.map { "\($0.from) \($0.input) \($0.to) \($0.cancelledKeys)" } == [
                "disconnected connect connecting []",
                "disconnected disconnect disconnected [connection]",
                "connecting disconnect disconnected [connection]",
            ])

        let automaton = Automaton(state: Socket.disconnected, table: MappingTable(rows))
        let events = automaton.effectEvents.record()
        automaton.send(.connect)
        automaton.send(.disconnect)
        #expect(
            events.values.compactMap { $0.value.map { "\($0.kind)" } } == [
                "started(by: connect)", "cancelled(cancelled by disconnect)",
            ])
        #expect(automaton.runningEffectCount == 0)
    }
}

/// An edge as plain values, to compare whole edge lists.
struct EdgeSummary<State: Hashable & Sendable, Input: Equatable & Sendable>: Equatable, CustomStringConvertible {
    let from: State
    let input: Input
    let to: State
    let effect: Bool

    init(_ from: State, _ input: Input, _ to: State, effect: Bool) {
        (self.from, self.input, self.to, self.effect) = (from, input, to, effect)
    }

    init(_ edge: StateGraph<State, Input>.Edge) {
        self.init(edge.from, edge.input, edge.to, effect: edge.startsEffect)
    }

    var description: String { "\(from) --\(input)\(effect ? " / effect" : "")--> \(to)" }
}
