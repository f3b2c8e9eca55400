import Automaton
import Signals
import Testing

// The seed systems of BRIEF §7, each expressed with this package and checked against its example.

// MARK: Stated (seeds 000, 004): the AppLauncher flow, with effects that call `send`.

/// Stand-ins for the app's services: each records what the flow asked of it and keeps the callbacks a
/// user would trigger later (finishing the upgrade, logging in or out).
final class AppServices: Sendable {
    let isUpgradePending: Bool
    let canLogIn: Bool
    let log = Recording<String>()
    let pendingCallbacks = Locked<[String: @Sendable () -> Void]>([:])

    init(isUpgradePending: Bool, canLogIn: Bool) {
        self.isUpgradePending = isUpgradePending
        self.canLogIn = canLogIn
    }

    /// Shows a screen whose callback the test triggers later through `trigger(_:)`.
    func show(_ screen: String, callback: @escaping @Sendable () -> Void) {
        log.append("show \(screen)")
        pendingCallbacks.withCriticalRegion { $0[screen] = callback }
    }

    func trigger(_ screen: String) {
        let callback = pendingCallbacks.withCriticalRegion { $0.removeValue(forKey: screen) }
        callback?()
    }
}

final class AppLauncher: Sendable {
    enum State: Sendable, Hashable, CaseIterable {
        case uninitialized, initialized, upgrading, indexing, loggedOut, loggedIn
    }
    enum Input: Sendable, Hashable, CaseIterable { case initialize, upgrade, indexDatabase, logIn, logOut }

    let machine: Automaton<State, Input>

    init(services: AppServices) {
        typealias Send = @Sendable (Input) -> Void

        let initialize: @Sendable (@escaping Send) -> Void = { send in
            send(services.isUpgradePending ? .upgrade : .indexDatabase)
        }
        let upgrade: @Sendable (@escaping Send) -> Void = { send in
            services.show("upgrade") { send(.indexDatabase) }  // upgrade successful callback
        }
        let indexDatabase: @Sendable (@escaping Send) -> Void = { send in
            services.log.append("create secondary indices")
            send(services.canLogIn ? .logIn : .logOut)
        }
        let logIn: @Sendable (@escaping Send) -> Void = { send in
            services.show("tour list") { send(.logOut) }  // log out callback
        }
        let logOut: @Sendable (@escaping Send) -> Void = { send in
            services.log.append("clear authentication")
            services.show("login") { send(.logIn) }  // login successful callback
        }

        machine = Automaton(
            state: .uninitialized,
            table: [
                /* Input        |      from             to       |   effect    */
                .initialize | .uninitialized => .initialized | initialize,

                .upgrade | .initialized => .upgrading | upgrade,

                .indexDatabase | .initialized => .indexing | indexDatabase,
                .indexDatabase | .upgrading => .indexing | indexDatabase,

                .logIn | .indexing => .loggedIn | logIn,
                .logIn | .loggedOut => .loggedIn | logIn,

                .logOut | .indexing => .loggedOut | logOut,
                .logOut | .loggedIn => .loggedOut | logOut,
            ])
    }

    func initialize() {
        machine.send(.initialize)
    }
}

// MARK: Gauntlet (seed 001): states that validate their own transitions.

/// A state type that decides which states it may move to; its inputs are the target states.
protocol Transitionable: Sendable {
    func shouldTransition(to: Self) -> Bool
}

/// Gauntlet's `StateMachine`, as an automaton whose input is the target state: a one-row table whose
/// row accepts any input and leads to it when the current state allows it.
func transitionMachine<State: Transitionable>(initialState: State) -> Automaton<State, State> {
    Automaton(
        state: initialState,
        table: [
            any | { state, target in state.shouldTransition(to: target) ? target : nil }
        ])
}

enum TrafficLight: Transitionable, Hashable, CaseIterable {
    case red, yellow, green

    func shouldTransition(to: TrafficLight) -> Bool {
        switch (self, to) {
        case (.red, .green), (.green, .yellow), (.yellow, .red):
            return true
        default:
            return false
        }
    }
}

enum Connection: Transitionable, Hashable {
    case idle
    case fetching(taskID: Int)
    case success(json: [String: String])
    case failure(message: String)
    case cancel

    func shouldTransition(to: Connection) -> Bool {
        switch (self, to) {
        case (.idle, .fetching), (.fetching, .success), (.fetching, .failure), (_, .cancel):
            return true
        default:
            return false
        }
    }
}

// MARK: Gauntlet (seed 001), continued: a connection whose states and inputs carry values, as a table.

/// A connection manager whose states and inputs carry values: rows match inputs by case, whatever
/// their associated value (`\.session`), and compute the next state and the effect from the current
/// state and the input (`attempt n → connect(attempt: n + 1)`).
enum ConnectionState: Sendable, Hashable {
    case idle
    case connecting(attempt: Int)
    case connected(session: String)
    case failed(reason: String, attempt: Int)

    /// The attempt in progress, when connecting.
    var attempt: Int? { if case let .connecting(attempt) = self { attempt } else { nil } }
    /// The attempt that failed, when failed.
    var failedAttempt: Int? { if case let .failed(_, attempt) = self { attempt } else { nil } }
    var isConnected: Bool { if case .connected = self { true } else { false } }
}

enum ConnectionInput: Sendable, Hashable {
    case connect
    case opened(session: String)
    case dropped(reason: String)
    case retry
    case cancel

    var session: String? { if case let .opened(session) = self { session } else { nil } }
    var reason: String? { if case let .dropped(reason) = self { reason } else { nil } }
}

/// The connection table. `connect(attempt)` is the effect that tries to connect.
func connectionMachine(
    connect: @escaping @Sendable (_ attempt: Int) -> SignalProducer<ConnectionInput, Never>
) -> Automaton<ConnectionState, ConnectionInput> {
    Automaton(
        state: .idle, strategy: .latest,
        table: [
            /* Input  | from => to, or { state, value in next state }                        | effect */
            .connect | .idle => .connecting(attempt: 1) | connect(1),
            \.session | { state, session in state.attempt.map { _ in .connected(session: session) } },
            \.reason | { state, reason in
                state.attempt.map { .failed(reason: reason, attempt: $0) }
                    ?? (state.isConnected ? .failed(reason: reason, attempt: 0) : nil)
            },
            .retry | { state, _ in state.failedAttempt.map { .connecting(attempt: $0 + 1) } }
                | { state, _ in connect((state.failedAttempt ?? 0) + 1) },
            .cancel | any => .idle,
        ])
}

// MARK: Automaton (seed 003): a Mealy mapper whose output is a postponed input.

/// A Mealy machine's output, postponed: an effect that sends it as the next input once the current
/// one has been processed.
func postpone<Input: Sendable>(_ output: Input) -> SignalProducer<Input, Never> {
    SignalProducer(value: output)
}

struct Playback: Sendable, Hashable {
    var video: String?
    var isLoading = false
    var isPlaying = false
}

enum PlaybackInput: Sendable, Hashable {
    case select(String), loaded(String), play, pause

    var selected: String? { if case let .select(video) = self { video } else { nil } }
    var loadedVideo: String? { if case let .loaded(video) = self { video } else { nil } }
}

/// The video player's Mealy mapper as a table: each row gives the next state and, as an effect, the
/// output; the last row keeps the state, with no output, for every other input (as the mapper's
/// `default` does).
func playbackMachine() -> Automaton<Playback, PlaybackInput> {
    Automaton(
        state: Playback(),
        table: [
            \.selected | { _, video in Playback(video: video, isLoading: true) }
                | { _, input in postpone(.loaded(input.selected ?? "")) },
            \.loadedVideo | { state, video in video == state.video ? Playback(video: video) : nil }
                | postpone(.play),
            .play | { state, _ in
                state.isLoading || state.video == nil ? nil : Playback(video: state.video, isPlaying: true)
            },
            .pause | { state, _ in Playback(video: state.video, isLoading: state.isLoading) },
            any | { state, _ in state },
        ])
}

@Suite("The seed systems (BRIEF §7)")
struct SeedSystemsTests {
    @Test("Stated AppLauncher: uninitialized → initialized → upgrading → indexing → loggedIn → loggedOut → loggedIn")
    func appLauncherWithUpgrade() {
        let services = AppServices(isUpgradePending: true, canLogIn: true)
        let launcher = AppLauncher(services: services)
        let states = launcher.machine.state.signal.record()

        launcher.initialize()
        #expect(launcher.machine.state.value == .upgrading)
        services.trigger("upgrade")
        #expect(launcher.machine.state.value == .loggedIn)
        services.trigger("tour list")
        services.trigger("login")

        #expect(
            states.values == [
                .value(.initialized), .value(.upgrading), .value(.indexing),
                .value(.loggedIn), .value(.loggedOut), .value(.loggedIn),
            ])
        #expect(
            services.log.values == [
                "show upgrade", "create secondary indices", "show tour list",
                "clear authentication", "show login", "show tour list",
            ])
    }

    @Test("Stated AppLauncher: no upgrade pending and no credentials goes straight to indexing, then loggedOut")
    func appLauncherWithoutUpgradeOrCredentials() {
        let services = AppServices(isUpgradePending: false, canLogIn: false)
        let launcher = AppLauncher(services: services)
        let replies = launcher.machine.replies.record()

        launcher.initialize()
        launcher.initialize()

        #expect(
            replies.values == [
                .value(.success(.initialize, .uninitialized, .initialized)),
                .value(.success(.indexDatabase, .initialized, .indexing)),
                .value(.success(.logOut, .indexing, .loggedOut)),
                .value(.failure(.initialize, .loggedOut)),
            ])
    }

    @Test("Gauntlet TrafficLight: only red → green → yellow → red transitions succeed")
    func trafficLight() {
        let machine = transitionMachine(initialState: TrafficLight.red)
        let didTransition = Recording<String>()
        machine.replies.observeValues { reply in
            if case let .success(_, from, to) = reply { didTransition.append("\(from) -> \(to)") }
        }
        let replies = machine.replies.record()

        for target in [TrafficLight.green, .red, .yellow, .red, .green] {
            machine.send(target)
        }

        #expect(didTransition.values == ["red -> green", "green -> yellow", "yellow -> red", "red -> green"])
        #expect(replies.values.map { $0.value?.isSuccess } == [true, false, true, true, true])
        #expect(machine.state.value == .green)
    }

    @Test("Gauntlet Connection: associated values travel with the states and come out in the replies")
    func connectionWithAssociatedValues() {
        let machine = transitionMachine(initialState: Connection.idle)
        let handled = Recording<String>()
        machine.replies.observeValues { reply in
            guard case let .success(_, from, to) = reply else { return }
            switch (from, to) {
            case let (_, .success(json)): handled.append("process \(json["user"] ?? "?")")
            case let (_, .failure(message)): handled.append("alert \(message)")
            case let (.fetching(taskID), .cancel): handled.append("cancel task \(taskID)")
            default: break
            }
        }

        machine.send(.fetching(taskID: 7))
        machine.send(.success(json: ["user": "ada"]))
        machine.send(.fetching(taskID: 8))  // refused: success may only be cancelled
        machine.send(.cancel)
        machine.send(.idle)  // refused

        #expect(handled.values == ["process ada"])
        #expect(machine.state.value == .cancel)

        let second = transitionMachine(initialState: Connection.idle)
        let secondHandled = Recording<Connection>()
        second.replies.observeValues { if let to = $0.toState { secondHandled.append(to) } }
        second.send(.fetching(taskID: 9))
        second.send(.cancel)
        #expect(secondHandled.values == [.fetching(taskID: 9), .cancel])
    }

    @Test("Mealy mapper: an output is a postponed input, processed after the current input")
    func mealyMapperOutputIsPostponedInput() {
        let machine = playbackMachine()
        let log = Recording<String>()
        machine.replies.observeValues { log.append("reply \($0.input)") }
        machine.state.signal.observeValues {
            log.append("state \($0.video ?? "-") loading=\($0.isLoading) playing=\($0.isPlaying)")
        }

        machine.send(.select("intro"))
        machine.send(.pause)

        #expect(
            log.values == [
                "state intro loading=true playing=false", "reply select(\"intro\")",
                "state intro loading=false playing=false", "reply loaded(\"intro\")",
                "state intro loading=false playing=true", "reply play",
                "state intro loading=false playing=false", "reply pause",
            ])
    }
}

@Suite("Seed 001 as a table: a connection with associated values")
struct ConnectionTableTests {
    @Test("rows bind the inputs' values and compute attempt n → connect(attempt: n + 1) from the state")
    func connectionRetriesWithTheNextAttempt() {
        let attempts = Recording<Int>()
        // The server drops the first attempt and accepts the second, each answering at once.
        let machine = connectionMachine { attempt in
            attempts.append(attempt)
            return SignalProducer(value: attempt == 1 ? .dropped(reason: "timeout") : .opened(session: "s\(attempt)"))
        }
        let replies = machine.replies.record()
        let states = machine.state.signal.record()

        machine.send(.connect)
        machine.send(.retry)
        machine.send(.retry)  // refused: connected, nothing failed
        machine.send(.opened(session: "late"))  // refused: not connecting
        machine.send(.dropped(reason: "reset"))
        machine.send(.cancel)

        #expect(attempts.values == [1, 2])
        #expect(
            states.values == [
                .value(.connecting(attempt: 1)),
                .value(.failed(reason: "timeout", attempt: 1)),
                .value(.connecting(attempt: 2)),
                .value(.connected(session: "s2")),
                .value(.failed(reason: "reset", attempt: 0)),
                .value(.idle),
            ])
        #expect(
            replies.values == [
                .value(.success(.connect, .idle, .connecting(attempt: 1))),
                .value(
                    .success(
                        .dropped(reason: "timeout"), .connecting(attempt: 1), .failed(reason: "timeout", attempt: 1))),
                .value(.success(.retry, .failed(reason: "timeout", attempt: 1), .connecting(attempt: 2))),
                .value(.success(.opened(session: "s2"), .connecting(attempt: 2), .connected(session: "s2"))),
                .value(.failure(.retry, .connected(session: "s2"))),
                .value(.failure(.opened(session: "late"), .connected(session: "s2"))),
                .value(
                    .success(.dropped(reason: "reset"), .connected(session: "s2"), .failed(reason: "reset", attempt: 0))
                ),
                .value(.success(.cancel, .failed(reason: "reset", attempt: 0), .idle)),
            ])
    }
}
