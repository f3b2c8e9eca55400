// The login tables written in the mapping DSL of BRIEF §5 (`input | from => to | effect`, `reduce`),
// compiled only when the root package has the DSL (see `Package.swift`: the `AUTOMATON_DSL` condition).
#if AUTOMATON_ENGINE && AUTOMATON_DSL
import Automaton
import Signals

/// The login table in the DSL, without effects.
let loginMappings: [Automaton<LoginState, LoginInput>.Mapping] = [
    LoginInput.login | LoginState.loggedOut => LoginState.loggingIn,
    LoginInput.loginOK | LoginState.loggingIn => LoginState.loggedIn,
    LoginInput.logout | LoginState.loggedIn => LoginState.loggingOut,
    LoginInput.logoutOK | LoginState.loggingOut => LoginState.loggedOut,
]

/// W3's table in the DSL.
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
