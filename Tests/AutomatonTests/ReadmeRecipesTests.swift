import Automaton
import Signals
import Testing

// The README's recipes, verbatim between the markers (checked by .ci/check-readme).

// README-RECIPE-FAILING-EFFECT-BEGIN
enum Link: Sendable, Equatable { case idle, connecting, connected, failed }
enum LinkInput: Sendable, Equatable { case connect, didConnect, didFail }

/// Connect, or fail to `.failed`: the thrown error becomes an input, so the effect cannot fail.
func makeLinkMachine(connect: @escaping @Sendable () async throws -> Void) -> Automaton<Link, LinkInput> {
    let connectOrFail = SignalProducer<LinkInput, Never>(
        operation: {
            try await connect(); return .didConnect
        },
        catch: { _ in .didFail }
    )
    return Automaton(
        state: .idle,
        mapping: { state, input in
            switch (state, input) {
            case (.idle, .connect), (.failed, .connect): return (.connecting, connectOrFail)
            case (.connecting, .didConnect): return (.connected, .empty)
            case (.connecting, .didFail): return (.failed, .empty)
            default: return nil
            }
        }, strategy: .latest)
}
// README-RECIPE-FAILING-EFFECT-END

private enum NetworkError: Error { case unreachable }

/// Main-actor state, updated by an automaton.
// README-RECIPE-MAIN-ACTOR-BEGIN
@MainActor
final class LoginViewModel {
    private(set) var title = "Logged out"
    private var observation: Disposable?

    init(automaton: Automaton<State, Input>) {
        // The closure is @MainActor: it may touch the view model; states arrive in order.
        observation = automaton.state.signal.observeValuesOnMainActor { [weak self] state in
            self?.title = state == .loggedIn ? "Welcome" : "Logged out"
        }
    }
}
// README-RECIPE-MAIN-ACTOR-END

/// Replies consumed inside an actor.
// README-RECIPE-ACTOR-BEGIN
actor ReplyAudit {
    private(set) var failures: [Reply<State, Input>] = []
    private var following: Task<Void, Never>?

    /// Observes now, so no later reply is missed. The task inherits this actor's isolation, and the
    /// stream's iterator keeps it there: the loop updates `failures` with no `await` and no lock.
    func follow(_ automaton: Automaton<State, Input>) {
        let replies = automaton.replies.stream()
        following = Task {
            for await reply in replies where !reply.isSuccess { failures.append(reply) }
        }
    }

    /// Returns once the automaton is released (its replies complete) or `stop()` is called.
    func finished() async { await following?.value }

    func stop() { following?.cancel() }
}
// README-RECIPE-ACTOR-END

@Suite("README recipes")
struct ReadmeRecipesTests {
    @Test("a failing async effect sends .didFail, so the machine reaches .failed")
    func failingEffect() async {
        let automaton = makeLinkMachine(connect: { throw NetworkError.unreachable })
        var replies = automaton.replies.stream().makeAsyncIterator()
        automaton.send(.connect)
        #expect(await replies.next() == .success(.connect, .idle, .connecting))
        #expect(await replies.next() == .success(.didFail, .connecting, .failed))
        #expect(automaton.state.value == .failed)
    }

    @Test("back-off: two failures retried after 2 s each, then the value")
    func retryWithBackOff() {
        let scheduler = TestScheduler()
        let attempts = Recording<Duration>()
        let flakyFetch = SignalProducer<String, NetworkError> { observer, _ in
            attempts.append(scheduler.now)
            if attempts.count < 3 {
                observer.send(error: .unreachable)
            } else {
                observer.send(value: "profile")
                observer.sendCompleted()
            }
        }
        // README-RECIPE-RETRY-BEGIN
        let profile =
            flakyFetch
            .retry(upTo: 3, interval: .seconds(2), on: scheduler)  // wait 2 s before each new attempt
            .replaceError(with: "offline")  // after the last failure
        let shown = MutableProperty<[String]>([])  // thread safe, unlike a captured var
        profile.startWithValues { name in shown.modify { $0.append(name) } }
        // README-RECIPE-RETRY-END
        scheduler.run()
        #expect(attempts.values == [.zero, .seconds(2), .seconds(4)])
        #expect(shown.value == ["profile"])
    }

    @Test("debounced search input sends one query per pause in typing")
    func debouncedSearch() {
        let scheduler = TestScheduler()
        let automaton = Automaton<[String], String>(state: [], mapping: { queries, query in queries + [query] })
        let searchText = MutableProperty("")
        // README-RECIPE-DEBOUNCE-BEGIN
        searchText.signal
            .skipRepeats()
            .debounce(.milliseconds(300), on: scheduler)  // wait for a pause in typing
            .filter { !$0.isEmpty }
            .observeValues(automaton.sender)  // sends without keeping the automaton
        // README-RECIPE-DEBOUNCE-END
        for text in ["s", "si", "sig"] {
            searchText.value = text
            scheduler.advance(by: .milliseconds(100))
        }
        scheduler.advance(by: .milliseconds(300))
        searchText.value = "signals"
        scheduler.advance(by: .seconds(1))
        #expect(automaton.state.value == ["sig", "signals"])
    }

    @MainActor
    @Test("a main-actor view model follows the automaton's state")
    func mainActorViewModel() async {
        let automaton = makeLoginMachine(loginOK: SignalProducer(value: .loginOK), logoutOK: .empty)
        let model = LoginViewModel(automaton: automaton)
        automaton.send(.login)
        await Task { @MainActor in }.value  // the main-actor deliveries queued before it have run
        #expect(model.title == "Welcome")
    }

    @Test("an actor follows the replies in its own isolation, from the first reply sent after follow, until release")
    func actorFollowsReplies() async {
        let audit = ReplyAudit()
        do {
            let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
            automaton.send(.logout)  // before follow: not seen
            // README-RECIPE-ACTOR-USE-BEGIN
            await audit.follow(automaton)
            automaton.send(.loginOK)  // fails in loggedOut: the audit records it
            automaton.send(.login)
            // README-RECIPE-ACTOR-USE-END
            automaton.send(.login)  // fails in loggingIn
        }
        await audit.finished()  // the automaton is released, so its replies complete
        #expect(await audit.failures == [.failure(.loginOK, .loggedOut), .failure(.login, .loggingIn)])
    }

    @Test("stopping an actor's follow cancels its task and ends the observation")
    func actorStops() async {
        let audit = ReplyAudit()
        let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
        await audit.follow(automaton)
        automaton.send(.logout)
        await audit.stop()
        await audit.finished()
        automaton.send(.logout)
        let failures = await audit.failures
        #expect(
            failures == [] || failures == [.failure(.logout, .loggedOut)],
            "nothing after stop; the reply before it may be seen")
    }

    @Test("the mapping table's case-with-payload snippet compiles and binds the associated value")
    func connectionInputSnippet() {
        // README-MAPPING-CASE-BEGIN
        enum SocketInput: Sendable, Equatable {
            case connect, opened(session: String), retry
            var session: String? { if case let .opened(session) = self { session } else { nil } }
        }
        enum Socket: Sendable, Equatable { case idle, connecting, connected(session: String) }

        let socket = Automaton<Socket, SocketInput>(
            state: .idle,
            table: [
                .connect | .idle => .connecting,
                \.session | { state, session in state == .connecting ? .connected(session: session) : nil },
                .retry | any => .connecting,
            ])
        // README-MAPPING-CASE-END
        let replies = socket.replies.record()
        for input: SocketInput in [.opened(session: "early"), .connect, .opened(session: "s1"), .retry] {
            socket.send(input)
        }
        #expect(
            replies.values == [
                .value(.failure(.opened(session: "early"), .idle)),
                .value(.success(.connect, .idle, .connecting)),
                .value(.success(.opened(session: "s1"), .connecting, .connected(session: "s1"))),
                .value(.success(.retry, .connected(session: "s1"), .connecting)),
            ])
    }

    @Test("for await logging sees every reply sent after the stream was made")
    func forAwaitLogging() async {
        let lines = Recording<String>()
        let log: @Sendable (String) -> Void = { lines.append($0) }
        var logging: Task<Void, Never>?
        do {
            let automaton = makeLoginMachine(loginOK: .empty, logoutOK: .empty)
            // README-RECIPE-LOGGING-BEGIN
            let replies = automaton.replies.stream()  // observes now: no later reply is missed
            let logger = Task {
                for await reply in replies { log("automaton: \(reply)") }
            }
            automaton.send(.login)
            automaton.send(.loginOK)
            // README-RECIPE-LOGGING-END
            logging = logger
        }
        await logging?.value  // the automaton is released, so its replies complete
        #expect(
            lines.values == [
                "automaton: success(login, loggedOut => loggingIn)",
                "automaton: success(loginOK, loggingIn => loggedIn)",
            ])
    }
}
