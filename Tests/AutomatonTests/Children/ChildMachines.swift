import Automaton
import Signals

// The machines of the child-automaton tests: a login machine hosting a two-factor machine, and a
// download manager running one download machine per id.

enum TwoFactorState: Hashable, Sendable {
    case waiting, accepted, rejected
}

enum TwoFactorInput: Hashable, Sendable, CustomStringConvertible {
    case enter(String)
    case resend

    var description: String {
        switch self {
        case let .enter(code): return "enter(\(code))"
        case .resend: return "resend"
        }
    }
}

enum GateState: Hashable, Sendable {
    case loggedOut, verifying, loggedIn
}

enum GateInput: Hashable, Sendable, CustomStringConvertible {
    case submit, code(String), accepted, rejected, cancel, other

    var code: String? {
        if case let .code(code) = self { return code }
        return nil
    }

    var description: String {
        switch self {
        case .submit: return "submit"
        case let .code(code): return "code(\(code))"
        case .accepted: return "accepted"
        case .rejected: return "rejected"
        case .cancel: return "cancel"
        case .other: return "other"
        }
    }
}

/// The two-factor machine: the right code accepts, a wrong one rejects; `resend` starts an effect
/// that never ends (to see the child's own effects cancelled by its release).
func makeTwoFactor(code: String = "123", onRelease: (@Sendable () -> Void)? = nil) -> Automaton<
    TwoFactorState, TwoFactorInput
> {
    Automaton(
        state: .waiting,
        table: [
            { (input: TwoFactorInput) in input != .resend } | { state, input in
                guard state == .waiting, case let .enter(entered) = input else { return nil }
                return entered == code ? .accepted : .rejected
            },
            TwoFactorInput.resend | .waiting => .waiting | SignalProducer<TwoFactorInput, Never>.never,
        ])
}

/// What the login machine makes of a two-factor reply.
@Sendable func gateInput(from reply: Reply<TwoFactorState, TwoFactorInput>) -> GateInput? {
    switch reply.toState {
    case .accepted?: return .accepted
    case .rejected?: return .rejected
    default: return nil
    }
}

func makeGate(
    _ twoFactor: ChildAutomaton<TwoFactorState, TwoFactorInput>,
    input: Signal<GateInput, Never>? = nil
) -> Automaton<GateState, GateInput> {
    Automaton(
        state: .loggedOut,
        input: input,
        table: [
            GateInput.submit | [.loggedOut, .verifying] => .verifying | twoFactor.start(replies: gateInput),
            \.code | { state, _ in state == .verifying ? .verifying : nil } | { _, code in twoFactor.send(.enter(code))
            },
            GateInput.accepted | .verifying => .loggedIn | twoFactor.stop(),
            GateInput.rejected | .verifying => .loggedOut | twoFactor.stop(),
            GateInput.cancel | .verifying => .loggedOut | twoFactor.stop(),
            GateInput.other | any => .verifying,
        ])
}

enum DownloadState: Hashable, Sendable {
    case downloading(Int), paused(Int), finished
}

enum DownloadInput: Hashable, Sendable {
    case tick, pause, resume
}

func makeDownload() -> Automaton<DownloadState, DownloadInput> {
    Automaton(state: .downloading(0)) { state, input in
        switch (state, input) {
        case let (.downloading(done), .tick): return done + 1 == 3 ? .finished : .downloading(done + 1)
        case let (.downloading(done), .pause): return .paused(done)
        case let (.paused(done), .resume): return .downloading(done)
        default: return nil
        }
    }
}

enum ManagerInput: Hashable, Sendable, CustomStringConvertible {
    case add(String), tick(String), pause(String), remove(String), finished(String)

    var added: String? { if case let .add(id) = self { id } else { nil } }
    var ticked: String? { if case let .tick(id) = self { id } else { nil } }
    var paused: String? { if case let .pause(id) = self { id } else { nil } }
    var removed: String? { if case let .remove(id) = self { id } else { nil } }
    var finishedID: String? { if case let .finished(id) = self { id } else { nil } }

    var description: String {
        switch self {
        case let .add(id): return "add(\(id))"
        case let .tick(id): return "tick(\(id))"
        case let .pause(id): return "pause(\(id))"
        case let .remove(id): return "remove(\(id))"
        case let .finished(id): return "finished(\(id))"
        }
    }
}

/// The download manager: its state counts finished downloads.
func makeManager(_ downloads: ChildAutomata<String, DownloadState, DownloadInput>) -> Automaton<Int, ManagerInput> {
    Automaton(
        state: 0,
        table: [
            \.added | { state, _ in state } | { _, id in
                downloads.start(id) { reply in reply.toState == .finished ? .finished(id) : nil }
            },
            \.ticked | { state, _ in state } | { _, id in downloads.send(.tick, to: id) },
            \.paused | { state, _ in state } | { _, id in downloads.send(.pause, to: id) },
            \.removed | { state, _ in state } | { _, id in downloads.remove(id) },
            \.finishedID | { state, _ in state + 1 } | { _, id in downloads.remove(id) },
        ])
}

enum CounterInput: Hashable, Sendable {
    case inc
}

enum CountingInput: Hashable, Sendable {
    case open(Int), bump(Int), counted(Int, Int)

    var opened: Int? { if case let .open(id) = self { id } else { nil } }
    var bumped: Int? { if case let .bump(id) = self { id } else { nil } }
    var countedPair: (Int, Int)? { if case let .counted(id, count) = self { (id, count) } else { nil } }
}

/// A parent of counters: `.bump(i)` forwards `.inc` to counter `i`, whose every count comes back
/// as `.counted(i, count)`.
func makeCounting(_ counters: ChildAutomata<Int, Int, CounterInput>) -> Automaton<Int, CountingInput> {
    Automaton(
        state: 0,
        table: [
            \.opened | { state, _ in state } | { _, id in
                counters.start(id) { reply in reply.toState.map { .counted(id, $0) } }
            },
            \.bumped | { state, _ in state } | { _, id in counters.send(.inc, to: id) },
            \.countedPair | { state, _ in state + 1 },
        ])
}

func makeCounter() -> Automaton<Int, CounterInput> {
    Automaton(state: 0) { count, _ in count + 1 }
}
