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
    enum State: Sendable, Equatable { case uninitialized, initialized, upgrading, indexing, loggedOut, loggedIn }
    enum Input: Sendable, Equatable { case initialize, upgrade, indexDatabase, logIn, logOut }

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

        let mappings: [Automaton<State, Input>.EffectMapping] = [
            /* Input        |      from             to       |   effect    */
            .initialize     | .uninitialized => .initialized | initialize,

            .upgrade        | .initialized   => .upgrading   | upgrade,

            .indexDatabase  | .initialized   =>  .indexing   | indexDatabase,
            .indexDatabase  | .upgrading     =>  .indexing   | indexDatabase,

            .logIn          | .indexing      => .loggedIn    | logIn,
            .logIn          | .loggedOut     => .loggedIn    | logIn,

            .logOut         | .indexing      => .loggedOut   | logOut,
            .logOut         | .loggedIn      => .loggedOut   | logOut,
        ]
        machine = Automaton(state: .uninitialized, mapping: reduce(mappings))
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

/// Gauntlet's `StateMachine`, as an automaton whose input is the target state.
func transitionMachine<State: Transitionable>(initialState: State) -> Automaton<State, State> {
    Automaton(state: initialState, mapping: { state, target in
        state.shouldTransition(to: target) ? target : nil
    })
}

enum TrafficLight: Transitionable, Equatable {
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

enum Connection: Transitionable, Equatable {
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

// MARK: Automaton (seed 003): a Mealy mapper whose output is a postponed input.

/// A Mealy machine's map function: the next state and, optionally, an output that is fed back as the
/// next input once the current one has been processed.
typealias MealyMapper<State, Input> = @Sendable (State, Input) -> (State, Input?)

/// Expresses a Mealy mapper as an automaton: the output becomes an effect that sends it.
func mealyAutomaton<State: Sendable, Input: Sendable>(
    state: State,
    mapper: @escaping MealyMapper<State, Input>
) -> Automaton<State, Input> {
    Automaton(state: state, mapping: { state, input in
        let (nextState, output) = mapper(state, input)
        return (nextState, output.map { SignalProducer(value: $0) } ?? .empty)
    })
}

struct Playback: Sendable, Equatable {
    var video: String?
    var isLoading = false
    var isPlaying = false
}

enum PlaybackInput: Sendable, Equatable {
    case select(String), loaded(String), play, pause
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

        #expect(states.values == [
            .value(.initialized), .value(.upgrading), .value(.indexing),
            .value(.loggedIn), .value(.loggedOut), .value(.loggedIn),
        ])
        #expect(services.log.values == [
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

        #expect(replies.values == [
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
        let mapper: MealyMapper<Playback, PlaybackInput> = { state, input in
            var state = state
            switch input {
            case let .select(video):
                state = Playback(video: video, isLoading: true)
                return (state, .loaded(video))
            case let .loaded(video) where video == state.video:
                state.isLoading = false
                return (state, .play)
            case .play where !state.isLoading && state.video != nil:
                state.isPlaying = true
                return (state, nil)
            case .pause:
                state.isPlaying = false
                return (state, nil)
            default:
                return (state, nil)
            }
        }
        let machine = mealyAutomaton(state: Playback(), mapper: mapper)
        let log = Recording<String>()
        machine.replies.observeValues { log.append("reply \($0.input)") }
        machine.state.signal.observeValues { log.append("state \($0.video ?? "-") loading=\($0.isLoading) playing=\($0.isPlaying)") }

        machine.send(.select("intro"))
        machine.send(.pause)

        #expect(log.values == [
            "state intro loading=true playing=false", "reply select(\"intro\")",
            "state intro loading=false playing=false", "reply loaded(\"intro\")",
            "state intro loading=false playing=true", "reply play",
            "state intro loading=false playing=false", "reply pause",
        ])
    }
}
