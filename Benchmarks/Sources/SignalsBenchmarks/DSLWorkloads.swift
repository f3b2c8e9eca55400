// The login tables written in the mapping DSL of BRIEF §5 (`input | from => to | effect`, `reduce`),
// compiled only when the root package has the DSL (see `Package.swift`: the `AUTOMATON_DSL` condition).
#if AUTOMATON_ENGINE && AUTOMATON_DSL
    import Automaton
    import Signals

    /// W2's machine as a mapping table written in place (`table: [rows]`, indexed by input).
    func w2TableAutomaton() -> Automaton<LoginState, LoginInput> {
        Automaton(
            state: .loggedOut,
            table: [
                .login | .loggedOut => .loggingIn,
                .loginOK | .loggingIn => .loggedIn,
                .logout | .loggedIn => .loggingOut,
                .logoutOK | .loggingOut => .loggedOut,
            ])
    }

    /// W3's machine as a mapping table written in place.
    func w3TableAutomaton() -> Automaton<LoginState, LoginInput> {
        let loginOK = SignalProducer<LoginInput, Never>(value: .loginOK)
        let logoutOK = SignalProducer<LoginInput, Never>(value: .logoutOK)
        return Automaton(
            state: .loggedOut, strategy: .merge,
            table: [
                .login | .loggedOut => .loggingIn | loginOK,
                .loginOK | .loggingIn => .loggedIn,
                .logout | .loggedIn => .loggingOut | logoutOK,
                .logoutOK | .loggingOut => .loggedOut,
            ])
    }

    /// The login table in the DSL's array form, without effects.
    let loginMappings: [Automaton<LoginState, LoginInput>.Mapping] = [
        LoginInput.login | LoginState.loggedOut => LoginState.loggingIn,
        LoginInput.loginOK | LoginState.loggingIn => LoginState.loggedIn,
        LoginInput.logout | LoginState.loggedIn => LoginState.loggingOut,
        LoginInput.logoutOK | LoginState.loggingOut => LoginState.loggedOut,
    ]

    /// W3's table in the DSL's array form, combined with `reduce`.
    func w3DSLMapping() -> Automaton<LoginState, LoginInput>.EffectMapping {
        let loginOK = SignalProducer<LoginInput, Never>(value: .loginOK)
        let logoutOK = SignalProducer<LoginInput, Never>(value: .logoutOK)
        return reduce([
            LoginInput.login | LoginState.loggedOut => LoginState.loggingIn | loginOK,
            LoginInput.loginOK | LoginState.loggingIn => LoginState.loggedIn | .empty,
            LoginInput.logout | LoginState.loggedIn => LoginState.loggingOut | logoutOK,
            LoginInput.logoutOK | LoginState.loggingOut => LoginState.loggedOut | .empty,
        ])
    }
#endif
