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

        #expect(
            replies.values == [
                .value(.success(.login, .loggedOut, .loggingIn)),
                .value(.success(.loginOK, .loggingIn, .loggedIn)),
                .value(.success(.logout, .loggedIn, .loggingOut)),
                .value(.success(.logoutOK, .loggingOut, .loggedOut)),
            ])
        #expect(states.values == [.value(.loggingIn), .value(.loggedIn), .value(.loggingOut), .value(.loggedOut)])
    }

    @Test("forceLogout from loggingIn wins over a late loginOK, which then fails, as does logout")
    func forceLogoutRacesPendingLogin() {
        let scheduler = TestScheduler()
        let mappings = loginMappings(
            loginOK: delayedInput(.loginOK, after: .seconds(1), on: scheduler),
            logoutOK: delayedInput(.logoutOK, after: .seconds(1), on: scheduler),
            forceLogoutOK: delayedInput(.logoutOK, after: .seconds(2), on: scheduler)
        )
        let automaton = Automaton(state: LoginState.loggedOut, mapping: reduce(mappings), strategy: .merge)
        let replies = automaton.replies.record()

        automaton.send(.login)
        #expect(automaton.state.value == .loggingIn)
        automaton.send(.forceLogout)
        #expect(automaton.state.value == .loggingOut)
        scheduler.advance(by: .seconds(1))  // the login effect's late loginOK arrives
        #expect(automaton.state.value == .loggingOut)
        automaton.send(.logout)
        scheduler.advance(by: .seconds(1))  // forceLogout's logoutOK arrives
        #expect(automaton.state.value == .loggedOut)

        #expect(
            replies.values == [
                .value(.success(.login, .loggedOut, .loggingIn)),
                .value(.success(.forceLogout, .loggingIn, .loggingOut)),
                .value(.failure(.loginOK, .loggingOut)),
                .value(.failure(.logout, .loggingOut)),
                .value(.success(.logoutOK, .loggingOut, .loggedOut)),
            ])
    }

    @Test("under .latest, forceLogout cancels the pending login effect, so its loginOK never arrives")
    func latestCancelsPendingLogin() {
        let scheduler = TestScheduler()
        let mappings = loginMappings(
            loginOK: delayedInput(.loginOK, after: .seconds(1), on: scheduler),
            logoutOK: delayedInput(.logoutOK, after: .seconds(1), on: scheduler),
            forceLogoutOK: delayedInput(.logoutOK, after: .seconds(2), on: scheduler)
        )
        let automaton = Automaton(state: LoginState.loggedOut, mapping: reduce(mappings), strategy: .latest)
        let replies = automaton.replies.record()

        automaton.send(.login)
        automaton.send(.forceLogout)
        scheduler.run()

        #expect(
            replies.values == [
                .value(.success(.login, .loggedOut, .loggingIn)),
                .value(.success(.forceLogout, .loggingIn, .loggingOut)),
                .value(.success(.logoutOK, .loggingOut, .loggedOut)),
            ])
        #expect(automaton.state.value == .loggedOut)
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
