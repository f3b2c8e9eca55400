/// What the automaton answers to each input, in the order the inputs were processed.
public enum Reply<State, Input> {
    /// The input matched the mapping: the state went from the first state to the second.
    case success(Input, State, State)
    /// The input matched no row of the mapping in the given state: nothing changed.
    case failure(Input, State)

    /// The input this reply answers.
    public var input: Input {
        switch self {
        case let .success(input, _, _), let .failure(input, _): return input
        }
    }

    /// The state the input was applied to.
    public var fromState: State {
        switch self {
        case let .success(_, fromState, _), let .failure(_, fromState): return fromState
        }
    }

    /// The state after a success; `nil` for a failure.
    public var toState: State? {
        if case let .success(_, _, toState) = self { return toState }
        return nil
    }

    /// Whether the input was accepted.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

extension Reply: Sendable where State: Sendable, Input: Sendable {}
extension Reply: Equatable where State: Equatable, Input: Equatable {}
extension Reply: Hashable where State: Hashable, Input: Hashable {}

extension Reply: CustomStringConvertible {
    /// One line for logs: `success(login, loggedOut => loggingIn)` or `failure(loginOK, loggedOut)`.
    public var description: String {
        switch self {
        case let .success(input, fromState, toState):
            return "success(\(input), \(fromState) => \(toState))"
        case let .failure(input, fromState):
            return "failure(\(input), \(fromState))"
        }
    }
}
