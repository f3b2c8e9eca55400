/// Why `Automaton.ask` returned no reply.
///
/// An input that was processed always has a reply, `.success` or `.failure` (an input that matches no
/// row is a `.failure` reply, not an error). These are the cases where there is none to give: the
/// input was never processed, or the caller stopped waiting.
public enum AskError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The automaton takes no more outside inputs: its input signal had completed when the input was
    /// asked. The input was not queued. (Inputs queued before the completion are still processed and
    /// answered.)
    case inputCompleted
    /// The automaton's input signal was interrupted before the input was processed: the input was
    /// dropped, unprocessed.
    case interrupted
    /// The automaton was released before the input was processed: the input was dropped, unprocessed.
    /// Only the callback form (`ask(_:onReply:)`) can see it: an awaiting caller keeps the automaton
    /// alive while it waits.
    case released
    /// The awaiting task was cancelled before the reply came. The input is **not** withdrawn: it was
    /// queued when `ask` was called and is processed in its turn, its reply sent on `replies` as
    /// usual; only the wait ended.
    case cancelled
    /// The reply did not come within the timeout of `ask(_:timeout:clock:)`. As for `.cancelled`, the
    /// input is not withdrawn: it is processed in its turn, its reply sent on `replies`.
    case timedOut

    /// One line for logs, e.g. `not answered: automaton released`.
    public var description: String {
        "not answered: \(reason)"
    }

    /// Why, in a few words (`automaton released`), for `description` and `ChildAnswer`'s.
    var reason: String {
        switch self {
        case .inputCompleted: return "the automaton's input had completed"
        case .interrupted: return "the automaton's input was interrupted"
        case .released: return "automaton released"
        case .cancelled: return "the waiting task was cancelled"
        case .timedOut: return "timed out"
        }
    }
}

extension AskError {
    /// The error for an input dropped by `termination`.
    @inlinable
    static func dropped(by termination: Termination) -> AskError {
        switch termination {
        case .interrupted: return .interrupted
        case .released: return .released
        }
    }
}
