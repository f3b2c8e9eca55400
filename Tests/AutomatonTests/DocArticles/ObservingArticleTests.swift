import Automaton
import AutomatonTesting
import Testing

// The code of the articles "Observing and logging" (ObservingAndLogging.md) and "Threads and
// contracts" (ThreadsAndContracts.md) in Sources/Automaton/Automaton.docc, verbatim between the
// markers (checked by .ci/check-docc-snippets).

// DOCC-OBSERVE-LOGGING-BEGIN
/// Logs an automaton's states, replies and effect events, one line each, until disposed.
func startLogging(
    _ automaton: Automaton<State, Input>,
    to log: @escaping @Sendable (String) -> Void
) -> Disposable {
    let observations = CompositeDisposable()
    observations += automaton.state.producer.startWithValues { log("state \($0)") }  // now, then each change
    observations += automaton.replies.observeValues { log("reply \($0)") }
    observations += automaton.effectEvents.observeValues { log("\($0)") }
    return observations
}
// DOCC-OBSERVE-LOGGING-END

// DOCC-OBSERVE-MAIN-ACTOR-BEGIN
/// A banner on screen that says why the last input was refused.
@MainActor
final class RefusalBanner {
    private(set) var text = ""
    private var observation: Disposable?

    init(automaton: Automaton<State, Input>) {
        // The closure is @MainActor: it may touch the banner. Replies arrive in order, asynchronously.
        observation = automaton.replies.observeValuesOnMainActor { [weak self] reply in
            if case let .failure(input, state) = reply { self?.text = "cannot \(input) while \(state)" }
        }
    }
}
// DOCC-OBSERVE-MAIN-ACTOR-END

@Suite("Article: Observing and logging")
struct ObservingArticleTests {
    @Test("states, replies and effect events, heard in processing order on one thread")
    func observeEverything() {
        let lines = MutableProperty<[String]>([])
        // DOCC-OBSERVE-LOGGING-USE-BEGIN
        let automaton = makeLoginMachine(loginOK: SignalProducer(value: .loginOK), logoutOK: .empty)
        let logging = startLogging(automaton, to: { line in lines.modify { $0.append(line) } })

        automaton.send(.login)  // its effect sends .loginOK at once: queued, then processed
        automaton.send(.logoutOK)  // refused
        logging.dispose()
        automaton.send(.logout)  // not logged

        #expect(
            lines.value == [
                "state loggedOut",
                "state loggingIn",
                "reply success(login, loggedOut => loggingIn)",
                "effect 0 started by login",
                "effect 0 ended",
                "state loggedIn",
                "reply success(loginOK, loggingIn => loggedIn)",
                "reply failure(logoutOK, loggedIn)",
            ])
        // DOCC-OBSERVE-LOGGING-USE-END
    }

    @Test("logEvents writes one timestamped line per reply through the given logger")
    func logEvents() {
        let lines = MutableProperty<[String]>([])
        let log: @Sendable (String) -> Void = { line in lines.modify { $0.append(line) } }
        let automaton = makeLoginMachine(loginOK: SignalProducer(value: .loginOK), logoutOK: .empty)
        // DOCC-OBSERVE-LOG-EVENTS-BEGIN
        automaton.replies.logEvents(identifier: "auth", logger: log)  // logger: print by default
        automaton.effectEvents.logEvents(identifier: "auth effects", logger: log)
        // DOCC-OBSERVE-LOG-EVENTS-END
        automaton.send(.login)
        automaton.send(.login)
        // Without the timestamp, `[2026-11-25T10:00:00.000Z] `.
        #expect(
            lines.value.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) } == [
                "[auth] value(success(login, loggedOut => loggingIn))",
                "[auth effects] value(effect 0 started by login)",
                "[auth effects] value(effect 0 ended)",
                "[auth] value(success(loginOK, loggingIn => loggedIn))",
                "[auth] value(failure(login, loggedIn))",
            ])
        #expect(lines.value.allSatisfy { $0.hasPrefix("[20") && $0.contains("Z] [auth") })
    }

    @Test("stream() observes at once, so a task sees every reply sent after it was made")
    func stream() async {
        let automaton = makeLoginMachine(loginOK: SignalProducer(value: .loginOK), logoutOK: .empty)
        // DOCC-OBSERVE-STREAM-BEGIN
        let replies = automaton.replies.stream()  // observes now, and buffers until iterated
        automaton.send(.login)
        automaton.send(.logout)

        var seen: [Reply<State, Input>] = []
        for await reply in replies {
            seen.append(reply)
            if seen.count == 3 { break }
        }
        #expect(
            seen == [
                .success(.login, .loggedOut, .loggingIn),
                .success(.loginOK, .loggingIn, .loggedIn),
                .success(.logout, .loggedIn, .loggingOut),
            ])
        // DOCC-OBSERVE-STREAM-END
    }

    @MainActor
    @Test("a main-actor banner hears refusals in order")
    func mainActorBanner() async {
        let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
        let banner = RefusalBanner(automaton: automaton)
        automaton.send(.logout)
        automaton.send(.login)
        automaton.send(.login)
        await Task { @MainActor in }.value  // the main-actor deliveries queued before it have run
        #expect(banner.text == "cannot login while loggingIn")
    }
}

@Suite("Article: Threads and contracts")
struct ContractsArticleTests {
    @Test("a send from inside delivery is queued: every observer hears a before any hears b")
    func queuedSend() {
        // DOCC-CONTRACTS-QUEUED-BEGIN
        let (signal, input) = Signal<String, Never>.pipe()
        let heard = MutableProperty<[String]>([])
        for name in ["o1", "o2"] {
            signal.observeValues { value in
                heard.modify { $0.append("\(name) \(value)") }
                if name == "o1" && value == "a" { input.send(value: "b") }  // queued, not delivered here
            }
        }
        input.send(value: "a")
        #expect(heard.value == ["o1 a", "o2 a", "o1 b", "o2 b"])
        // DOCC-CONTRACTS-QUEUED-END
        // The first observer keeps `input`, and the signal keeps its observers while it can still be sent
        // to: ending it breaks that cycle (LeakSanitizer reports it otherwise).
        input.sendCompleted()
    }

    @Test("an input sent from a replies observer is processed after every observer heard the current reply")
    func queuedInput() {
        // DOCC-CONTRACTS-SENDER-BEGIN
        let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
        let send = automaton.sender  // sends without keeping the automaton alive
        let heard = MutableProperty<[String]>([])
        automaton.replies.observeValues { reply in
            heard.modify { $0.append("first: \(reply)") }
            if case .failure(.logout, .loggingIn) = reply { send(.forceLogout) }  // queued
        }
        automaton.replies.observeValues { reply in heard.modify { $0.append("second: \(reply)") } }

        automaton.send(.login)
        automaton.send(.logout)
        #expect(
            heard.value == [
                "first: success(login, loggedOut => loggingIn)",
                "second: success(login, loggedOut => loggingIn)",
                "first: failure(logout, loggingIn)",
                "second: failure(logout, loggingIn)",
                "first: success(forceLogout, loggingIn => loggingOut)",
                "second: success(forceLogout, loggingIn => loggingOut)",
            ])
        // DOCC-CONTRACTS-SENDER-END
    }
}
