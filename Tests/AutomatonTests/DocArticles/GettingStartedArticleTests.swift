import Automaton
import AutomatonTesting
import Testing

// The code of the article "Getting started" (Sources/Automaton/Automaton.docc/GettingStarted.md),
// verbatim between the markers (checked by .ci/check-docc-snippets).

// The login machine is the README's quick start (ReadmeQuickStartTests.swift), quoted by the article.

// DOCC-START-CONNECTION-BEGIN
enum ChannelState: Sendable, Equatable {
    case disconnected, connecting, connected, backingOff
}

enum ChannelInput: Sendable, Equatable {
    case connect, connected, failed, retry, disconnect, foregrounded
}

/// The keys of the connection manager's effects.
enum ChannelKey: Hashable, Sendable {
    case attempt, backOff
}

/// Connecting and the back-off timer are keyed effects: only `.disconnect` (by key), the
/// automaton's release or its input's interruption cancel them, never an unrelated input.
func makeChannelManager(
    connect: SignalProducer<ChannelInput, Never>,
    backOff: SignalProducer<ChannelInput, Never>
) -> Automaton<ChannelState, ChannelInput> {
    Automaton(
        state: .disconnected, strategy: .latest,
        table: [
            .connect | .disconnected => .connecting | connect.keyed(ChannelKey.attempt, .latest),
            .connected | .connecting => .connected,
            .failed | .connecting => .backingOff | backOff.keyed(ChannelKey.backOff, .latest),
            .retry | .backingOff => .connecting | connect.keyed(ChannelKey.attempt, .latest),
            .foregrounded | { $0 },
            .disconnect | any => .disconnected | .cancel(ChannelKey.attempt, ChannelKey.backOff),
        ])
}
// DOCC-START-CONNECTION-END

@Suite("Article: Getting started")
struct GettingStartedArticleTests {
    @Test("the login machine logs in and out on virtual time, and refuses a login while logging out")
    func loginMachine() {
        // DOCC-START-LOGIN-USE-BEGIN
        let scheduler = TestScheduler()
        let loginOK = SignalProducer<Input, Never>(value: .loginOK).delay(.seconds(1), on: scheduler)
        let logoutOK = SignalProducer<Input, Never>(value: .logoutOK).delay(.seconds(1), on: scheduler)
        let automaton = makeLoginMachine(loginOK: loginOK, logoutOK: logoutOK)
        let replies = TestRecorder(automaton.replies)  // records every reply from now on

        automaton.send(.login)
        scheduler.advance(by: .seconds(1))  // the login effect sends .loginOK
        automaton.send(.logout)
        automaton.send(.login)  // refused: logging out
        scheduler.advance(by: .seconds(1))  // the logout effect sends .logoutOK

        #expect(
            replies.values == [
                .success(.login, .loggedOut, .loggingIn),
                .success(.loginOK, .loggingIn, .loggedIn),
                .success(.logout, .loggedIn, .loggingOut),
                .failure(.login, .loggingOut),
                .success(.logoutOK, .loggingOut, .loggedOut),
            ])
        #expect(automaton.state.value == .loggedOut)
        // DOCC-START-LOGIN-USE-END
    }

    @Test("forceLogout under .latest replaces the pending login effect")
    func forceLogoutReplacesLogin() {
        // DOCC-START-FORCE-LOGOUT-BEGIN
        let scheduler = TestScheduler()
        let automaton = makeLoginMachine(
            loginOK: SignalProducer(value: .loginOK).delay(.seconds(1), on: scheduler),
            logoutOK: SignalProducer(value: .logoutOK).delay(.seconds(1), on: scheduler)
        )
        let replies = TestRecorder(automaton.replies)

        automaton.send(.login)
        automaton.send(.forceLogout)  // disposes the login effect (.latest)
        scheduler.run()  // .loginOK never comes

        #expect(
            replies.values == [
                .success(.login, .loggedOut, .loggingIn),
                .success(.forceLogout, .loggingIn, .loggingOut),
                .success(.logoutOK, .loggingOut, .loggedOut),
            ])
        // DOCC-START-FORCE-LOGOUT-END
    }

    @Test("the connection manager: .foregrounded cancels no keyed effect, .disconnect cancels both keys")
    func connectionManager() {
        // DOCC-START-CONNECTION-USE-BEGIN
        let scheduler = TestScheduler()
        let automaton = makeChannelManager(
            connect: SignalProducer(value: .failed).delay(.seconds(1), on: scheduler),  // every attempt fails
            backOff: SignalProducer(value: .retry).delay(.seconds(30), on: scheduler)
        )
        let replies = TestRecorder(automaton.replies)
        let effects = TestRecorder(automaton.effectEvents)

        automaton.send(.connect)
        automaton.send(.foregrounded)  // succeeds, and cancels nothing: the attempt is keyed
        scheduler.advance(by: .seconds(1))  // the attempt fails: back off for 30 s
        automaton.send(.disconnect)  // cancels the back-off timer by its key

        #expect(
            replies.values == [
                .success(.connect, .disconnected, .connecting),
                .success(.foregrounded, .connecting, .connecting),
                .success(.failed, .connecting, .backingOff),
                .success(.disconnect, .backingOff, .disconnected),
            ])
        #expect(
            effects.values.map(\.description) == [
                "effect 0 [attempt] started by connect",
                "effect 1 [backOff] started by failed",
                "effect 0 [attempt] ended",
                "effect 1 [backOff] cancelled by disconnect",
            ])
        #expect(scheduler.pendingActionCount == 0)  // nothing left of the timer
        // DOCC-START-CONNECTION-USE-END
    }
}
