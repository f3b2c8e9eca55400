import Automaton
import Testing

// The README's quick start, verbatim between the markers, so that it keeps compiling and working.
// DOCC-START-LOGIN-BEGIN
// README-QUICK-START-BEGIN
enum State: Sendable, Equatable {
    case loggedOut, loggingIn, loggedIn, loggingOut
}

enum Input: Sendable, Equatable {
    case login, loginOK, logout, logoutOK, forceLogout
}

/// Builds the login machine. `loginOK` and `logoutOK` are the effects that finish logging in and out.
func makeLoginMachine(
    loginOK: SignalProducer<Input, Never>,
    logoutOK: SignalProducer<Input, Never>
) -> Automaton<State, Input> {
    let canForceLogout: @Sendable (State) -> Bool = { [.loggingIn, .loggedIn].contains($0) }

    return Automaton(
        state: .loggedOut, strategy: .latest,
        table: [
            /*  Input      |   fromState => toState         |  Effect  */
            .login | .loggedOut => .loggingIn | loginOK,
            .loginOK | .loggingIn => .loggedIn,
            .logout | .loggedIn => .loggingOut | logoutOK,
            .logoutOK | .loggingOut => .loggedOut,
            .forceLogout | canForceLogout => .loggingOut | logoutOK,
        ])
}
// README-QUICK-START-END
// DOCC-START-LOGIN-END

@Suite("README quick start")
struct ReadmeQuickStartTests {
    @Test("the quick start's machine logs in and out, and forceLogout cancels a pending login")
    func quickStartWorks() {
        let scheduler = TestScheduler()
        // README-QUICK-START-USE-BEGIN
        let loginOK = SignalProducer<Input, Never>(value: .loginOK).delay(.seconds(1), on: scheduler)
        let logoutOK = SignalProducer<Input, Never>(value: .logoutOK).delay(.seconds(1), on: scheduler)
        let automaton = makeLoginMachine(loginOK: loginOK, logoutOK: logoutOK)

        automaton.replies.observeValues { reply in print(reply) }
        automaton.send(.login)  // success(login, loggedOut => loggingIn)
        scheduler.advance(by: .seconds(1))  // success(loginOK, loggingIn => loggedIn)
        automaton.send(.logout)  // success(logout, loggedIn => loggingOut)
        automaton.send(.login)  // failure(login, loggingOut)
        scheduler.advance(by: .seconds(1))  // success(logoutOK, loggingOut => loggedOut)
        // README-QUICK-START-USE-END
        #expect(automaton.state.value == .loggedOut)

        let replies = Recording<Reply<State, Input>>()
        automaton.replies.observeValues { replies.append($0) }
        automaton.send(.login)
        automaton.send(.forceLogout)  // cancels the pending loginOK (.latest)
        scheduler.run()
        #expect(
            replies.values == [
                .success(.login, .loggedOut, .loggingIn),
                .success(.forceLogout, .loggingIn, .loggingOut),
                .success(.logoutOK, .loggingOut, .loggedOut),
            ])
    }
}

@Suite("README: sending from an observer")
struct ReadmeSenderTests {
    @Test("an observer that sends through automaton.sender retries once, and does not keep the automaton alive")
    func senderFromObserver() {
        weak var released: Automaton<State, Input>?
        let replies = Recording<Reply<State, Input>>()
        do {
            // README-SENDER-BEGIN
            let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
            let send = automaton.sender  // does not keep the automaton alive
            automaton.replies.observeValues { reply in
                if case .failure(.logout, .loggingIn) = reply { send(.forceLogout) }
            }
            // README-SENDER-END
            released = automaton
            automaton.replies.observeValues { replies.append($0) }
            automaton.send(.login)
            automaton.send(.logout)
        }
        #expect(
            replies.values == [
                .success(.login, .loggedOut, .loggingIn),
                .failure(.logout, .loggingIn),
                .success(.forceLogout, .loggingIn, .loggingOut),
            ])
        #expect(released == nil)
    }
}

@Suite("Logging the reply stream")
struct ReplyLoggingTests {
    @Test("replies.logEvents logs one line per reply, with the identifier, without any other observer")
    func logRepliesWithoutObserving() {
        let lines = Recording<String>()
        let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
        automaton.replies.logEvents(identifier: "login", logger: { lines.append($0) })

        automaton.send(.login)
        automaton.send(.logoutOK)

        #expect(lines.count == 2)
        #expect(
            lines.values.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) } == [
                "[login] value(success(login, loggedOut => loggingIn))",
                "[login] value(failure(logoutOK, loggingIn))",
            ])
        #expect(lines.values.allSatisfy { $0.hasPrefix("[20") && $0.contains("Z] ") })
    }
}
