import Automaton
import AutomatonTesting
import Signals
import Testing

private enum LoginState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case loggedOut, loggingIn, loggedIn, loggingOut
    var description: String { rawValue }
}

private enum LoginInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case login, loginOK, logout, logoutOK, forceLogout
    var description: String { rawValue }
}

/// The RxAutomaton login machine; its effects answer after `delay` on `scheduler` (at once when
/// `delay` is nil). `loginOKLeadsTo` plants a bug.
private func loginRows(
    scheduler: TestScheduler,
    delay: Duration? = .seconds(1),
    loginOKLeadsTo loggedIn: LoginState = .loggedIn
) -> [MappingRow<LoginState, LoginInput>] {
    func answer(_ input: LoginInput) -> SignalProducer<LoginInput, Never> {
        guard let delay else { return SignalProducer(value: input) }
        return SignalProducer(value: input).delay(delay, on: scheduler)
    }
    let canForceLogout: @Sendable (LoginState) -> Bool = { [.loggingIn, .loggedIn].contains($0) }
    return [
        .login | .loggedOut => .loggingIn | answer(.loginOK),
        .loginOK | .loggingIn => loggedIn,
        .logout | .loggedIn => .loggingOut | answer(.logoutOK),
        .logoutOK | .loggingOut => .loggedOut,
        .forceLogout | canForceLogout => .loggingOut | answer(.logoutOK),
    ]
}

/// The graph of the correct machine.
private func loginGraph() -> StateGraph<LoginState, LoginInput> {
    StateGraph(from: .loggedOut, table: MappingTable(loginRows(scheduler: TestScheduler())))
}

/// The login machine, its effects answering after a second on `scheduler`.
private func makeLoginMachine(scheduler: TestScheduler) -> Automaton<LoginState, LoginInput> {
    Automaton(state: .loggedOut, strategy: .latest, table: MappingTable(loginRows(scheduler: scheduler)))
}

private let coveringPath =
    "path #1 [login, loginOK, logout, logoutOK, login, forceLogout, logoutOK, login, loginOK, forceLogout]"

@Suite("StateGraphTester: model-based tests from a state graph")
struct StateGraphTesterTests {
    @Test("the login machine's edge-covering paths replay on fresh automata, rejected inputs included")
    func loginEdgeCoveringPaths() {
        let made = Locked(0)
        let tester = StateGraphTester(loginGraph()) { scheduler in
            made.withCriticalRegion { $0 += 1 }
            return Automaton(state: .loggedOut, strategy: .latest, table: MappingTable(loginRows(scheduler: scheduler)))
        }
        #expect(
            tester.graph.edgeCoveringPaths.map(\.inputs) == [
                [
                    .login, .loginOK, .logout, .logoutOK, .login, .forceLogout, .logoutOK, .login, .loginOK,
                    .forceLogout,
                ]
            ])
        #expect(tester.replay())
        #expect(tester.replay(tester.graph.shortestPaths))
        #expect(tester.failures == [])
        #expect(made.withCriticalRegion { $0 } == 1 + 4)
    }

    @Test("the README's model-based test passes, with and without effects running")
    func readmeModelBasedTest() {
        let graph = loginGraph()
        // README-GRAPH-TESTER-BEGIN
        let tester = StateGraphTester(graph) { scheduler in  // a fresh automaton for each path
            makeLoginMachine(scheduler: scheduler)
        }
        let followed = tester.replay()  // the edge-covering paths, exactly
        let withEffects = tester.replay(runningEffectsFor: .seconds(1))  // effects run between inputs
        // README-GRAPH-TESTER-END
        #expect(followed)
        #expect(withEffects)
    }

    @Test("with effects running, every reply, the effects' included, agrees with the graph")
    func loginRunningEffects() {
        let replies = Locked<[String]>([])
        let tester = StateGraphTester(loginGraph()) { scheduler in
            let automaton = Automaton(
                state: .loggedOut, strategy: .latest, table: MappingTable(loginRows(scheduler: scheduler)))
            automaton.replies.observeValues { reply in replies.withCriticalRegion { $0.append("\(reply)") } }
            return automaton
        }
        #expect(tester.replay(runningEffectsFor: .seconds(1)))
        #expect(
            replies.withCriticalRegion { $0 } == [
                "success(login, loggedOut => loggingIn)",
                "success(loginOK, loggingIn => loggedIn)",
                "failure(loginOK, loggedIn)",
                "success(logout, loggedIn => loggingOut)",
                "success(logoutOK, loggingOut => loggedOut)",
                "failure(logoutOK, loggedOut)",
                "success(login, loggedOut => loggingIn)",
                "success(loginOK, loggingIn => loggedIn)",
                "success(forceLogout, loggedIn => loggingOut)",
                "success(logoutOK, loggingOut => loggedOut)",
                "failure(logoutOK, loggedOut)",
                "success(login, loggedOut => loggingIn)",
                "success(loginOK, loggingIn => loggedIn)",
                "failure(loginOK, loggedIn)",
                "success(forceLogout, loggedIn => loggingOut)",
                "success(logoutOK, loggingOut => loggedOut)",
            ])
    }

    @Test("a transition that differs from the graph is reported, with the path and the step")
    func wrongTransitionIsReported() {
        let tester = StateGraphTester(loginGraph()) { scheduler in
            Automaton(
                state: .loggedOut, strategy: .latest,
                table: MappingTable(loginRows(scheduler: scheduler, loginOKLeadsTo: .loggedOut)))
        }
        withKnownIssue {
            #expect(tester.replay() == false)
        }
        #expect(
            tester.failures == [
                "\(coveringPath): step 2 (loginOK): expected success(loginOK, loggingIn => loggedIn), "
                    + "got success(loginOK, loggingIn => loggedOut)"
            ])
    }

    @Test("an input the graph rejects but the automaton accepts is reported")
    func acceptedRejectionIsReported() {
        let tester = StateGraphTester(loginGraph()) { scheduler in
            Automaton(
                state: .loggedOut,
                table: MappingTable([.logoutOK | .loggedOut => .loggedOut] + loginRows(scheduler: scheduler)))
        }
        withKnownIssue {
            tester.replay()
        }
        #expect(
            tester.failures == [
                "\(coveringPath): step 1 (login), rejected input logoutOK: expected failure(logoutOK, loggedOut), "
                    + "got success(logoutOK, loggedOut => loggedOut)"
            ])
        #expect(tester.replay(checkingRejections: false))
    }

    @Test("effects that send at once move the machine off the path, and the tester says what to do")
    func synchronousEffectIsReported() {
        let tester = StateGraphTester(loginGraph()) { scheduler in
            Automaton(state: .loggedOut, table: MappingTable(loginRows(scheduler: scheduler, delay: nil)))
        }
        withKnownIssue {
            tester.replay(checkingRejections: false)
        }
        #expect(
            tester.failures == [
                "\(coveringPath): step 1 (login): expected success(login, loggedOut => loggingIn), "
                    + "got success(login, loggedOut => loggingIn), success(loginOK, loggingIn => loggedIn) "
                    + "(an effect sent inputs at once; schedule effects on the given TestScheduler)"
            ])
    }

    @Test("with effects running, a reply the graph does not have is reported; so is a wrong start")
    func runningEffectsDisagreementIsReported() {
        let buggy = StateGraphTester(loginGraph()) { scheduler in
            Automaton(
                state: .loggedOut, table: MappingTable(loginRows(scheduler: scheduler, loginOKLeadsTo: .loggingOut)))
        }
        withKnownIssue {
            buggy.replay(runningEffectsFor: .seconds(1))
        }
        #expect(
            buggy.failures == [
                "\(coveringPath): step 1 (login): success(loginOK, loggingIn => loggingOut): the graph leads to loggedIn"
            ])

        let elsewhere = StateGraphTester(loginGraph()) { scheduler in
            Automaton(state: .loggedIn, table: MappingTable(loginRows(scheduler: scheduler)))
        }
        withKnownIssue {
            elsewhere.replay()
        }
        #expect(elsewhere.failures == ["\(coveringPath): the automaton starts in loggedIn, the path in loggedOut"])
    }
}
