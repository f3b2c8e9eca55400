import Automaton
import Signals
import Testing

/// The RxAutomaton login / logout machine (seed 002), shared by several suites.
enum LoginState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case loggedOut, loggingIn, loggedIn, loggingOut
    var description: String { rawValue }
}

enum LoginInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case login, loginOK, logout, logoutOK, forceLogout
    var description: String { rawValue }
}

typealias LoginReply = Reply<LoginState, LoginInput>

/// A thread-safe list, for collecting what observers and effects see.
final class Recording<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])

    func append(_ element: Element) {
        storage.withCriticalRegion { $0.append(element) }
    }

    var values: [Element] {
        storage.withCriticalRegion { $0 }
    }

    var count: Int {
        storage.withCriticalRegion { $0.count }
    }
}

extension Signal where Error == Never {
    /// Records every event of this signal.
    func record() -> Recording<Event<Value, Never>> {
        let recording = Recording<Event<Value, Never>>()
        observe { recording.append($0) }
        return recording
    }
}

/// Builds the login machine's mapping table with the given effects.
func loginMappings(
    loginOK: SignalProducer<LoginInput, Never>,
    logoutOK: SignalProducer<LoginInput, Never>,
    forceLogoutOK: SignalProducer<LoginInput, Never>
) -> [Automaton<LoginState, LoginInput>.EffectMapping] {
    let canForceLogout: @Sendable (LoginState) -> Bool = { [.loggingIn, .loggedIn].contains($0) }
    return [
        /*  Input      |   fromState => toState        |      Effect       */
        .login | .loggedOut => .loggingIn | loginOK,
        .loginOK | .loggingIn => .loggedIn | .empty,
        .logout | .loggedIn => .loggingOut | logoutOK,
        .logoutOK | .loggingOut => .loggedOut | .empty,
        .forceLogout | canForceLogout => .loggingOut | forceLogoutOK,
    ]
}

/// A producer that sends `input` after `delay` on `scheduler`, then completes; disposal cancels it.
func delayedInput(
    _ input: LoginInput,
    after delay: Duration,
    on scheduler: TestScheduler
) -> SignalProducer<LoginInput, Never> {
    SignalProducer { observer, lifetime in
        lifetime += scheduler.schedule(after: delay) {
            observer.send(value: input)
            observer.sendCompleted()
        }
    }
}

/// An effect the test drives by hand: each start is recorded, so the test can send inputs into a
/// particular run later and check whether that run was disposed.
final class ControlledEffect<Input: Sendable>: Sendable {
    struct Run: Sendable {
        let observer: Observer<Input, Never>
        let lifetime: Lifetime
    }

    private let runsStorage = Locked<[Run]>([])
    let name: String
    let log: Recording<String>?

    init(_ name: String = "effect", log: Recording<String>? = nil) {
        self.name = name
        self.log = log
    }

    var producer: SignalProducer<Input, Never> {
        SignalProducer { [self] observer, lifetime in
            let index = runsStorage.withCriticalRegion { runs in
                runs.append(Run(observer: observer, lifetime: lifetime))
                return runs.count - 1
            }
            log?.append("start \(name)#\(index)")
            lifetime.observeEnded { [log, name] in log?.append("end \(name)#\(index)") }
        }
    }

    var runs: [Run] { runsStorage.withCriticalRegion { $0 } }

    /// How many runs have started.
    var startCount: Int { runs.count }

    /// Which runs have not ended (neither completed nor disposed).
    var liveRuns: [Int] {
        runs.enumerated().filter { !$0.element.lifetime.hasEnded }.map(\.offset)
    }
}
