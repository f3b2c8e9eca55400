import Automaton

enum LoginState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case loggedOut, loggingIn, loggedIn, loggingOut
    var description: String { rawValue }
}

enum LoginInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case login, loginOK, logout, logoutOK, forceLogout
    var description: String { rawValue }
}

/// The RxAutomaton login machine under `.latest`, its effects answering on `scheduler`.
func makeLoginAutomaton(scheduler: some TimeScheduler) -> Automaton<LoginState, LoginInput> {
    func after(_ milliseconds: Int, send input: LoginInput) -> SignalProducer<LoginInput, Never> {
        SignalProducer(value: input).delay(.milliseconds(milliseconds), on: scheduler)
    }
    let loginOK = after(100, send: .loginOK)
    let logoutOK = after(100, send: .logoutOK)
    let forceLogoutOK = after(150, send: .logoutOK)
    let canForceLogout: @Sendable (LoginState) -> Bool = { [.loggingIn, .loggedIn].contains($0) }

    return Automaton(
        state: .loggedOut, strategy: .latest,
        table: [
            /*  Input      |   fromState => toState         |  Effect        */
            .login | .loggedOut => .loggingIn | loginOK,
            .loginOK | .loggingIn => .loggedIn,
            .logout | .loggedIn => .loggingOut | logoutOK,
            .logoutOK | .loggingOut => .loggedOut,
            .forceLogout | canForceLogout => .loggingOut | forceLogoutOK,
        ])
}

/// The login machine's state graph, explored from a fresh automaton (no effect is started).
func loginGraph() -> StateGraph<LoginState, LoginInput> {
    makeLoginAutomaton(scheduler: QueueScheduler(label: "demo.login.graph")).graph()
}

/// The login machine under `.latest`. A `forceLogout` sent while `loginOK` is still pending
/// replaces the login effect, so the late `loginOK` never arrives.
@Sendable
func runLoginDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.login")
    let automaton = makeLoginAutomaton(scheduler: scheduler)

    return play(
        "login",
        automaton: automaton,
        scheduler: scheduler,
        script: [
            (.milliseconds(0), .login),  // loginOK at 100
            (.milliseconds(200), .logout),  // logoutOK at 300
            (.milliseconds(400), .login),  // loginOK would come at 500...
            (.milliseconds(450), .forceLogout),  // ...but forceLogout replaces it; logoutOK at 600
            (.milliseconds(700), .loginOK),  // too late, and from outside: a failure
        ],
        expectedReplies: [
            "success(login, loggedOut => loggingIn)",
            "success(loginOK, loggingIn => loggedIn)",
            "success(logout, loggedIn => loggingOut)",
            "success(logoutOK, loggingOut => loggedOut)",
            "success(login, loggedOut => loggingIn)",
            "success(forceLogout, loggingIn => loggingOut)",
            "success(logoutOK, loggingOut => loggedOut)",
            "failure(loginOK, loggedOut)",
        ],
        expectedFinalState: .loggedOut,
        timeout: .milliseconds(800)
    )
}
