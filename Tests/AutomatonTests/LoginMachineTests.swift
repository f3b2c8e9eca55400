import Automaton
import Signals
import Testing

@Suite("The RxAutomaton login machine")
struct LoginMachineTests {
    @Test("synchronous effects run the four-step happy path with the replies in processing order")
    func happyPathWithSynchronousEffects() {
        let mappings = loginMappings(
            loginOK: SignalProducer(value: .loginOK),
            logoutOK: SignalProducer(value: .logoutOK),
            forceLogoutOK: SignalProducer(value: .logoutOK)
        )
        let (input, inputObserver) = Signal<LoginInput, Never>.pipe()
        let automaton = Automaton(state: .loggedOut, input: input, mapping: reduce(mappings), strategy: .latest)
        let replies = automaton.replies.record()
        let states = automaton.state.signal.record()

        inputObserver.send(value: .login)
        #expect(automaton.state.value == .loggedIn)
        inputObserver.send(value: .logout)
        #expect(automaton.state.value == .loggedOut)

        #expect(replies.values == [
            .value(.success(.login, .loggedOut, .loggingIn)),
            .value(.success(.loginOK, .loggingIn, .loggedIn)),
            .value(.success(.logout, .loggedIn, .loggingOut)),
            .value(.success(.logoutOK, .loggingOut, .loggedOut)),
        ])
        #expect(states.values == [.value(.loggingIn), .value(.loggedIn), .value(.loggingOut), .value(.loggedOut)])
    }

    @Test("an unmapped input is a failure reply and changes nothing")
    func unmappedInputFails() {
        let automaton = Automaton(
            state: LoginState.loggedOut,
            mapping: reduce(loginMappings(loginOK: .empty, logoutOK: .empty, forceLogoutOK: .empty))
        )
        let replies = automaton.replies.record()
        let states = automaton.state.signal.record()

        automaton.send(.logoutOK)

        #expect(replies.values == [.value(.failure(.logoutOK, .loggedOut))])
        #expect(states.values == [])
        #expect(automaton.state.value == .loggedOut)
    }
}
